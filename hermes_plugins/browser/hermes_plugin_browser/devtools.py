"""``browser_cdp`` (a raw Chrome DevTools Protocol command to the session's page) and ``browser_dialog`` (the
answer to a JavaScript dialog), with Hermes Agent's arguments.

A CDP command could undo what keeps the browser safe, so some are refused: those that turn off request
interception (the guard's first check), act on the whole browser or on other pages, write files, trust bad
certificates or hand the page local files. A command that names a URL is checked by the guard first.
"""

from __future__ import annotations

import json
from typing import Any, Final

from .browser import BrowserError, Session
from .guard import check_navigation
from .settings import BrowserSettings
from .tools import run_action

__all__ = ["browser_cdp", "browser_dialog"]

#: The longest ``timeout`` a browser_cdp call may ask for (Hermes Agent's maximum).
MAX_CDP_TIMEOUT: Final = 300.0
DEFAULT_CDP_TIMEOUT: Final = 30.0
#: Whole domains refused, and why.
REFUSED_DOMAINS: Final = {
    "Browser": "it acts on the whole browser (other sessions' pages, downloads, permissions)",
    "Fetch": "it would take over request interception, which the address guard uses",
    "IO": "it reads the browser's streams and files",
    "Tracing": "it writes traces to files",
    "SystemInfo": "it describes this machine",
    "Tethering": "it opens ports on this machine",
    "Storage": "it reaches every site's stored data, beyond this page",
    "Target": "it reaches other pages and the browser itself",
}
#: Methods refused in domains otherwise allowed, and why.
REFUSED_METHODS: Final = {
    "Page.setDownloadBehavior": "it would let pages write files",
    "Network.setRequestInterception": "it would take over request interception, which the address guard uses",
    "Network.setBypassServiceWorker": "it changes how requests are routed",
    "Security.setIgnoreCertificateErrors": "it would trust any certificate",
    "Security.handleCertificateError": "it would trust a bad certificate",
    "DOM.setFileInputFiles": "it would hand the page files of this machine",
    "Page.close": "it closes the session's page",
    "Page.crash": "it crashes the session's page",
}
#: ``Target`` methods that only read.
ALLOWED_TARGET_METHODS: Final = frozenset({"Target.getTargets", "Target.getTargetInfo"})


def browser_cdp(args: dict[str, Any], **kwargs: Any) -> str:
    method = str(args.get("method") or "").strip()
    params = args.get("params") or {}
    if "." not in method:
        return _refused(f"method must be a CDP method such as 'Runtime.evaluate', not {method!r}")
    if not isinstance(params, dict):
        return _refused("params must be a JSON object")
    if args.get("frame_id"):
        return _refused("frame_id (an out-of-process iframe's session) is not supported here: run Runtime.evaluate "
                        "on the page and reach the frame through it, or browser_navigate to the frame's URL")
    why = _why_refused(method)
    if why:
        return _refused(f"{method} is refused: {why}")
    try:
        timeout = min(float(args.get("timeout") or DEFAULT_CDP_TIMEOUT), MAX_CDP_TIMEOUT)
    except (TypeError, ValueError):
        return _refused(f"timeout must be a number of seconds, not {args.get('timeout')!r}")
    target_id = args.get("target_id")

    async def send(session: Session, settings: BrowserSettings) -> dict[str, Any]:
        for url in _urls(params):
            refusal = await check_navigation(url, allow_private=settings.allow_private)
            if refusal:
                raise BrowserError(refusal)
        if target_id:
            own = (await session.send("Target.getTargetInfo"))["targetInfo"]["targetId"]
            if target_id != own:
                raise BrowserError(f"target_id {target_id!r} is not this session's page ({own}); browser_cdp reaches "
                                   "only the session's own page")
        return {"method": method, "result": await session.send(method, params)}

    return run_action(kwargs, send, timeout=timeout)


def _why_refused(method: str) -> str | None:
    if method in ALLOWED_TARGET_METHODS:
        return None
    return REFUSED_METHODS.get(method) or REFUSED_DOMAINS.get(method.split(".", 1)[0])


def _urls(params: dict[str, Any]) -> list[str]:
    """Every URL a command's parameters name (``url``, ``urls``, at any depth)."""
    found: list[str] = []
    stack: list[Any] = [params]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if key.lower() in ("url", "urls") and isinstance(item, str):
                    found.append(item)
                else:
                    stack.append(item)
        elif isinstance(value, list):
            stack.extend(value)
    return found


def browser_dialog(args: dict[str, Any], **kwargs: Any) -> str:
    action, dialog_id = str(args.get("action") or ""), args.get("dialog_id")
    prompt_text = args.get("prompt_text")
    if action not in ("accept", "dismiss"):
        return _refused(f"action must be 'accept' or 'dismiss', not {action!r}")

    async def answer(session: Session, settings: BrowserSettings) -> dict[str, Any]:
        if not session.dialogs:
            raise BrowserError("no dialog is open on the page")
        if dialog_id:
            chosen = next((d for d in session.dialogs if d.id == dialog_id), None)
            if chosen is None:
                raise BrowserError(f"no open dialog {dialog_id!r}; open: {', '.join(d.id for d in session.dialogs)}")
        elif len(session.dialogs) > 1:
            raise BrowserError(f"{len(session.dialogs)} dialogs are open: give dialog_id, one of "
                               f"{', '.join(d.id for d in session.dialogs)}")
        else:
            chosen = session.dialogs[0]
        session.dialogs.remove(chosen)
        if chosen.timer is not None:
            chosen.timer.cancel()
        if action == "accept":
            await chosen.dialog.accept(str(prompt_text or "") if chosen.dialog.type == "prompt" else None)
        else:
            await chosen.dialog.dismiss()
        return {"action": action, "dialog": chosen.describe()}

    return run_action(kwargs, answer, sees_dialogs=True)


def _refused(message: str) -> str:
    return json.dumps({"success": False, "error": message})
