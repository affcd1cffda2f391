"""Approval callbacks: who says yes when a hook or a tool asks before something risky runs."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .config import load_config
from .deadline import DeadlineExceeded, call_with_deadline

__all__ = [
    "ApprovalCallback",
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovalStore",
    "get_approval_callback",
    "request_approval",
    "set_approval_callback",
    "terminal_approval",
]

log = logging.getLogger(__name__)

ApprovalDecision = Literal["once", "session", "always", "deny"]
DECISIONS: tuple[ApprovalDecision, ...] = ("once", "session", "always", "deny")


@dataclass(frozen=True)
class ApprovalRequest:
    """What needs approving, and for whom."""

    message: str
    rule_key: str | None = None
    tool_name: str | None = None
    args: dict[str, Any] | None = None
    session_id: str | None = None
    choices: tuple[ApprovalDecision, ...] = field(default=DECISIONS)


ApprovalCallback = Callable[[ApprovalRequest], str]

_PROMPT_KEYS: dict[str, ApprovalDecision] = {
    "o": "once", "once": "once", "y": "once", "yes": "once",
    "s": "session", "session": "session",
    "a": "always", "always": "always",
    "d": "deny", "deny": "deny", "n": "deny", "no": "deny", "": "deny",
}


def terminal_approval(request: ApprovalRequest) -> ApprovalDecision:
    """Ask on the terminal when one is attached to stdin; refuse otherwise."""
    if not (sys.stdin and sys.stdin.isatty()):
        return "deny"
    keys = "/".join(f"[{choice[0]}]{choice[1:]}" for choice in request.choices)
    sys.stderr.write(f"\n⚠️  {request.message}\nApprove? {keys}: ")
    sys.stderr.flush()
    answer = _PROMPT_KEYS.get(sys.stdin.readline().strip().lower(), "deny")
    return answer if answer in request.choices else "deny"


_lock = threading.Lock()
_callback: ApprovalCallback = terminal_approval


def set_approval_callback(callback: ApprovalCallback | None) -> ApprovalCallback:
    """Install ``callback`` (``None`` restores the terminal default); returns the previous one."""
    global _callback
    with _lock:
        previous, _callback = _callback, callback or terminal_approval
    return previous


def get_approval_callback() -> ApprovalCallback:
    """The callback in force."""
    return _callback


def request_approval(request: ApprovalRequest, mode: str | None = None,
                     timeout: float | None = None) -> ApprovalDecision:
    """Ask the callback; an exception, no answer within ``timeout`` or an unknown answer is a refusal.

    ``mode`` and ``timeout`` default to config ``approvals``: mode ``deny`` refuses and ``approve``
    allows once without asking.
    """
    if mode is None or timeout is None:
        settings = load_config().approvals
        mode, timeout = mode or settings.mode, timeout or settings.timeout
    if mode == "deny":
        return "deny"
    if mode == "approve":
        return "once"
    try:
        answer = call_with_deadline(_callback, timeout, request)
    except DeadlineExceeded:
        log.warning("no answer to the approval request within %g s; refused", timeout)
        return "deny"
    except Exception:
        log.exception("approval callback failed; treating the request as refused")
        return "deny"
    return answer if answer in request.choices else "deny"


class ApprovalStore:
    """Remembers approvals: for a session in memory, permanently in config ``command_allowlist``."""

    def __init__(self) -> None:
        self._session: set[tuple[str | None, str]] = set()
        self._lock = threading.Lock()

    def is_approved(self, rule_key: str | None, session_id: str | None) -> bool:
        if not rule_key:
            return False
        with self._lock:
            if (session_id, rule_key) in self._session:
                return True
        return rule_key in load_config().command_allowlist

    def remember(self, rule_key: str | None, session_id: str | None, decision: ApprovalDecision) -> None:
        if not rule_key or decision in ("once", "deny"):
            return
        with self._lock:
            self._session.add((session_id, rule_key))
        if decision == "always":
            from .config import edit_config

            def add(document: Any) -> None:
                allowlist = document.setdefault("command_allowlist", [])
                if rule_key not in allowlist:
                    allowlist.append(rule_key)

            edit_config(add)

    def ask(self, request: ApprovalRequest) -> bool:
        """True when ``request`` is already approved or the callback approves it now."""
        if self.is_approved(request.rule_key, request.session_id):
            return True
        decision = request_approval(request)
        try:
            self.remember(request.rule_key, request.session_id, decision)
        except Exception:
            log.exception("could not remember the approval of %r", request.rule_key)
        return decision != "deny"
