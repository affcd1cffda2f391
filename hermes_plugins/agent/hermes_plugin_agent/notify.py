"""``notify``: a desktop notification (TinyElf's ``Notify``) — ``notify-send`` (libnotify) on Linux, ``osascript``
on macOS, a toast through PowerShell on Windows; under ``hermes mcp serve``, a log notification to the MCP client.

Title and body never reach a shell or a script's text: they go as arguments (``osascript``) or environment
variables (PowerShell).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

from hermes_core.plugin import tool_context, tool_error

__all__ = ["available", "notify"]

MAX_TITLE: Final = 200
MAX_BODY: Final = 2_000
#: Seconds the notifier program may take.
TIMEOUT: Final = 10.0
_OSASCRIPT: Final = ("on run argv", "display notification (item 2 of argv) with title (item 1 of argv)", "end run")
_TOAST: Final = (
    "$ErrorActionPreference = 'Stop';"
    "[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime]"
    " | Out-Null;"
    "$t = [Security.SecurityElement]::Escape($env:HERMES_NOTIFY_TITLE);"
    "$b = [Security.SecurityElement]::Escape($env:HERMES_NOTIFY_BODY);"
    "$x = New-Object Windows.Data.Xml.Dom.XmlDocument;"
    "$x.LoadXml(\"<toast><visual><binding template='ToastGeneric'><text>$t</text><text>$b</text></binding>"
    "</visual></toast>\");"
    "[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier('Hermes')"
    ".Show([Windows.UI.Notifications.ToastNotification]::new($x))")


class NoNotifier(RuntimeError):
    """Nothing here can show a desktop notification."""


def _notifier() -> tuple[str, str]:
    """The platform's notifier (its name and program), or raises with why there is none."""
    if sys.platform == "darwin":
        program = shutil.which("osascript")
        if program:
            return "osascript", program
        raise NoNotifier("osascript is missing")
    if sys.platform == "win32":
        program = shutil.which("powershell") or shutil.which("pwsh")
        if program:
            return "toast", program
        raise NoNotifier("PowerShell is missing (Windows toasts are shown through it)")
    program = shutil.which("notify-send")
    if not program:
        raise NoNotifier("notify-send is missing: install libnotify (Debian: apt install libnotify-bin)")
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS") and not (runtime_dir and (Path(runtime_dir) / "bus").exists()):
        raise NoNotifier("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset): no desktop session to notify")
    return "notify-send", program


def available() -> bool:
    """True when a desktop notifier is found, or under ``hermes mcp serve`` (its clients are notified); raises
    with the reason otherwise."""
    if "hermes_core.mcp.server" not in sys.modules:
        _notifier()
    return True


def notify(args: dict[str, Any], **kwargs: Any) -> str:
    """Show ``title`` (and ``body``) to the user."""
    title, body = args.get("title"), args.get("body")
    if not isinstance(title, str) or not title.strip():
        return tool_error("'title' is required.")
    if body is not None and not isinstance(body, str):
        return tool_error("'body' is text.")
    if len(title) > MAX_TITLE or len(body or "") > MAX_BODY:
        return tool_error(f"A notification has at most {MAX_TITLE} characters of title and {MAX_BODY} of body.")
    if tool_context().notify_caller(title, body):
        return json.dumps({"sent": True, "via": "mcp"})
    try:
        via, program = _notifier()
    except NoNotifier as exc:
        return tool_error(f"notify is unavailable: {exc}")
    environment = None
    if via == "osascript":
        argv = [program, *(part for line in _OSASCRIPT for part in ("-e", line)), title, body or ""]
    elif via == "toast":
        argv = [program, "-NoProfile", "-NonInteractive", "-Command", _TOAST]
        environment = {**os.environ, "HERMES_NOTIFY_TITLE": title, "HERMES_NOTIFY_BODY": body or ""}
    else:
        # notify-send reads C escapes in the body: doubled backslashes arrive as the model wrote them
        argv = [program, "--app-name=Hermes", "--", title, *([body.replace("\\", "\\\\")] if body else [])]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, env=environment,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return tool_error(f"{via} failed: {exc}")
    if done.returncode != 0:
        return tool_error(f"{via} failed (exit {done.returncode}): {(done.stderr or done.stdout).strip()[:500]}")
    return json.dumps({"sent": True, "via": via})
