"""A notification daemon on the D-Bus session bus (``org.freedesktop.Notifications``) that records what it is sent:
the stand-in for dunst, which needs a display these machines lack. Run under ``dbus-run-session``: it serves in a
thread, runs ``notify`` through a real runtime, and prints what it received and the tool's answer as JSON."""

from __future__ import annotations

import json
import sys
import threading

from jeepney import HeaderFields, MessageType, new_method_return
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

received: list[dict[str, str]] = []
ready = threading.Event()


def serve() -> None:
    connection = open_dbus_connection(bus="SESSION")
    connection.send_and_get_reply(message_bus.RequestName("org.freedesktop.Notifications"))
    ready.set()
    while True:
        message = connection.receive()
        if message.header.message_type != MessageType.method_call:
            continue
        member = message.header.fields.get(HeaderFields.member)
        if member == "Notify":
            app, _replaces, _icon, summary, body = message.body[:5]
            received.append({"app": app, "summary": summary, "body": body})
            connection.send(new_method_return(message, "u", (len(received),)))
        elif member == "GetServerInformation":
            connection.send(new_method_return(message, "ssss", ("stand-in", "hermes-tests", "1.0", "1.2")))
        elif member == "GetCapabilities":
            connection.send(new_method_return(message, "as", (["body"],)))
        else:
            connection.send(new_method_return(message))


def main() -> None:
    from hermes_core import Runtime
    from hermes_core.plugins.discovery import candidate_from_module

    threading.Thread(target=serve, daemon=True).start()
    ready.wait(30)
    runtime = Runtime(home=sys.argv[1], workspace=sys.argv[2], entry_points=())
    runtime.load_candidate(candidate_from_module("hermes_plugin_agent", "agent"))
    answer = runtime.handle_function_call("notify", {"title": sys.argv[3], "body": sys.argv[4]})
    print(json.dumps({"answer": json.loads(answer), "received": received}))


if __name__ == "__main__":
    main()
