"""Named CLI sessions: ``hermes tools call --session NAME`` runs its calls in a small per-home daemon that keeps the
session alive between commands (its browser page, terminal working folder, todo list) and exits when idle.

The daemon of a session listens on a Unix socket in a folder only the user may enter; it loads the plugins
once, runs the session's calls one at a time (``session_id`` and ``task_id`` are the name, so the tools' per-task
state carries over), records them in the session store, and exits after :data:`IDLE_SECONDS` without a call or
when asked to end (``hermes tools end NAME``). A call that finds no daemon starts one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["IDLE_SECONDS", "SessionDaemonError", "call_in_session", "end_session", "socket_path", "supported"]

#: Seconds a session daemon waits for its next call before it ends the session and exits.
IDLE_SECONDS = 900.0
#: Seconds a new daemon may take to load the plugins and listen.
START_SECONDS = 120.0
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_LINE_LIMIT = 64 * 1024 * 1024  # one request or answer


class SessionDaemonError(Exception):
    """The session daemon could not be reached or started (the message says why)."""


def supported() -> bool:
    """Unix sockets are available (Linux, macOS)."""
    return hasattr(socket, "AF_UNIX") and os.name == "posix"


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise SessionDaemonError(f"session name {name!r}: letters, digits, '.', '_' and '-' only (at most 64)")
    return name


def socket_path(home_root: Path, name: str) -> Path:
    """Where the daemon of session ``name`` of this home listens: a private folder in the temporary folder (a
    Unix socket's path must be short), named after the user and the home."""
    digest = hashlib.sha256(str(home_root.resolve()).encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"hermes-sessions-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    status = folder.stat()
    if status.st_uid != os.getuid() or status.st_mode & 0o077:
        raise SessionDaemonError(f"{folder} is not a folder only you may enter; remove it")
    return folder / f"{digest}-{check_name(name)}.sock"


def _exchange(path: Path, request: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(10.0)
        connection.connect(str(path))
        connection.settimeout(timeout)
        connection.sendall(json.dumps(request).encode() + b"\n")
        with connection.makefile("rb") as answers:
            line = answers.readline(_LINE_LIMIT)
    if not line:
        raise SessionDaemonError("the session daemon closed the connection without an answer (see its log)")
    answer: dict[str, Any] = json.loads(line)
    return answer


def call_in_session(home_root: Path, name: str, tool: str, args: dict[str, Any]) -> str:
    """Run ``tool`` in session ``name`` (its daemon started when none runs); its result."""
    path = socket_path(home_root, name)
    try:
        return str(_exchange(path, {"tool": tool, "args": args}, None)["result"])
    except (FileNotFoundError, ConnectionRefusedError):
        pass
    _start(home_root, name, path)
    return str(_exchange(path, {"tool": tool, "args": args}, None)["result"])


def end_session(home_root: Path, name: str) -> bool:
    """Ask the daemon of session ``name`` to end the session and exit; False when none runs."""
    try:
        _exchange(socket_path(home_root, name), {"end": True}, 60.0)
    except (FileNotFoundError, ConnectionRefusedError):
        return False
    return True


def _start(home_root: Path, name: str, path: Path) -> None:
    logs = home_root / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / f"session-{name}.log", "ab") as log:
        process = subprocess.Popen([sys.executable, "-m", "hermes_core.cli.sessiond", name], stdin=subprocess.DEVNULL,
                                   stdout=log, stderr=log, start_new_session=True,
                                   env={**os.environ, "HERMES_HOME": str(home_root)})
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None and not path.exists():
            raise SessionDaemonError(f"the session daemon exited ({process.returncode}); see "
                                     f"{logs / f'session-{name}.log'}")
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.connect(str(path))
            return
        time.sleep(0.05)
    raise SessionDaemonError(f"the session daemon did not listen within {START_SECONDS:g} s")


def serve(name: str) -> None:
    """The daemon of session ``name``: listen, run each call, exit when idle or asked to end."""
    from ..config.home import HermesHome
    from ..runtime import Runtime
    from ..state.agent import OneCall

    home = HermesHome.from_env()
    path = socket_path(home.root, name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a socket left by a daemon that died (a live one answered the caller first)
    listener.bind(str(path))
    rt = Runtime(home=home)
    rt.load_plugins()
    listener.listen(8)
    listener.settimeout(IDLE_SECONDS)
    try:
        with rt.session(platform="cli", session_id=name) as session_id:
            while True:
                try:
                    connection, _ = listener.accept()
                except TimeoutError:
                    return
                with connection, connection.makefile("rwb") as stream:
                    try:
                        request = json.loads(stream.readline(_LINE_LIMIT))
                    except ValueError:
                        continue
                    if request.get("end"):
                        stream.write(b'{"ended": true}\n')
                        stream.flush()
                        return
                    tool, args = str(request.get("tool")), request.get("args") or {}
                    result = rt.handle_function_call(tool, args, session_id=session_id, task_id=session_id)
                    rt.agent_state.record_calls(session_id, [OneCall(tool, args, "cli-call")], [result], source="cli")
                    stream.write(json.dumps({"result": result}).encode() + b"\n")
                    stream.flush()
    finally:
        listener.close()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        rt.close()


if __name__ == "__main__":
    serve(sys.argv[1])
