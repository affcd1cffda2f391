"""Approval callbacks: who says yes when a hook or a tool asks before something risky runs."""

from __future__ import annotations

import contextvars
import logging
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from ..workers.executor import DeadlineExceeded, call_with_deadline
from .asking import CALLER

if TYPE_CHECKING:
    from ..config.model import HermesConfig

__all__ = [
    "ApprovalCallback",
    "ApprovalDecision",
    "ApprovalRequest",
    "Approvals",
    "approved_call",
    "request_approval",
    "set_approval_callback",
    "terminal_approval",
]

log = logging.getLogger(__name__)

ApprovalDecision = Literal["once", "session", "always", "deny"]
DECISIONS: tuple[ApprovalDecision, ...] = ("once", "session", "always", "deny")


class ApprovalRequest(NamedTuple):
    """What needs approving, and for whom."""

    message: str
    rule_key: str | None = None
    tool_name: str | None = None
    args: dict[str, Any] | None = None
    session_id: str | None = None
    choices: tuple[ApprovalDecision, ...] = DECISIONS


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
    """Install the process-wide ``callback`` (``None`` restores the terminal default); returns the previous one.

    It answers for every runtime that has no callback of its own (:meth:`Runtime.set_approval_callback`).
    """
    global _callback
    with _lock:
        previous, _callback = _callback, callback or terminal_approval
    return previous


def request_approval(request: ApprovalRequest, callback: ApprovalCallback | None = None, *, mode: str = "ask",
                     timeout: float | None = 60.0) -> ApprovalDecision:
    """Ask ``callback`` (default: the process-wide one); an exception, no answer within ``timeout`` or an
    unknown answer is a refusal. Mode ``deny`` refuses and ``approve`` allows once, without asking; ``ask`` and
    ``strict`` ask (``strict`` makes the terminal ask about more commands, not differently)."""
    if mode == "deny":
        return "deny"
    if mode == "approve":
        return "once"
    try:
        answer = call_with_deadline(callback or _callback, timeout, request)
    except DeadlineExceeded:
        log.warning("no answer to the approval request within %g s; refused", timeout)
        return "deny"
    except Exception:
        log.exception("approval callback failed; treating the request as refused")
        return "deny"
    return answer if answer in request.choices else "deny"


#: The tool call the user has just approved as a whole (its tool name and arguments), while it runs.
_APPROVED_CALL: contextvars.ContextVar[tuple[str, dict[str, Any]] | None] = \
    contextvars.ContextVar("hermes_approved_call", default=None)


class approved_call:  # (a class, not a generator: it is entered on every hooked call)
    """While the block runs, a question about ``tool_name`` with exactly ``args`` is already answered yes: the user
    approved that very call, seeing it whole (so the terminal does not ask again about the command it was shown).
    ``tool_name=None``: nothing is (a call inside an approved one is asked about on its own)."""

    __slots__ = ("_token", "_value")

    def __init__(self, tool_name: str | None, args: dict[str, Any] | None) -> None:
        self._value = None if tool_name is None or args is None else (tool_name, args)

    def __enter__(self) -> None:
        self._token = _APPROVED_CALL.set(self._value)

    def __exit__(self, *exc_info: object) -> None:
        _APPROVED_CALL.reset(self._token)


def _covered(request: ApprovalRequest) -> bool:
    approved = _APPROVED_CALL.get()
    return approved is not None and request.tool_name == approved[0] and request.args == approved[1]


class Approvals:
    """One runtime's approvals: its callback, what its sessions approved, and its config's ``command_allowlist``.

    A ``session`` answer is remembered for that session id only; a call without a session id never
    inherits another call's approval. ``always`` adds the rule key to the allowlist (comments kept).
    """

    def __init__(self, config: Callable[[], HermesConfig], edit_config: Callable[[Callable[[Any], None]], Any],
                 observe: Callable[..., Any] | None = None) -> None:
        self._config = config
        self._edit_config = edit_config
        #: Called as ``observe(hook_name, **kwargs)`` around each question (Hermes Agent's approval hooks).
        self._observe = observe
        self._callback: ApprovalCallback | None = None
        #: ``approvals.mode: smart``'s judge: ``judge(request)`` is ``approve``, ``deny`` or ``escalate``.
        self.judge: Callable[[ApprovalRequest], str] | None = None
        self._session: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def set_callback(self, callback: ApprovalCallback | None) -> ApprovalCallback | None:
        """This runtime's own callback (``None``: the process-wide one); returns the previous one."""
        with self._lock:
            previous, self._callback = self._callback, callback
        return previous

    def is_approved(self, rule_key: str | None, session_id: str | None) -> bool:
        if not rule_key:
            return False
        if session_id is not None:
            with self._lock:
                if (session_id, rule_key) in self._session:
                    return True
        return rule_key in self._config().command_allowlist

    def remember(self, rule_key: str | None, session_id: str | None, decision: ApprovalDecision) -> None:
        if not rule_key or decision in ("once", "deny"):
            return
        if session_id is not None:
            with self._lock:
                self._session.add((session_id, rule_key))
        if decision == "always":
            def add(document: Any) -> None:
                allowlist = document.setdefault("command_allowlist", [])
                if rule_key not in allowlist:
                    allowlist.append(rule_key)

            self._edit_config(add)

    def ask(self, request: ApprovalRequest) -> bool:
        """True when ``request`` is already approved or the callback approves it now."""
        if self.is_approved(request.rule_key, request.session_id) or _covered(request):
            return True
        settings = self._config().approvals
        if settings.mode == "smart" and self.judge is not None:
            verdict = self._judged(request)
            if verdict != "escalate":
                return verdict == "approve"
        caller = CALLER.get().approval  # the caller's own user (an MCP client), before the runtime's callback
        asks = settings.mode in ("ask", "strict", "smart")
        if asks and isinstance(caller, str):
            log.info("approval of %r refused: %s", request.rule_key or request.tool_name, caller)
            return False
        observed = self._observed(request) if asks else {}
        if asks:
            self._notify("pre_approval_request", observed)
        callback = None if isinstance(caller, str) else caller or self._callback
        decision = request_approval(request, callback, mode=settings.mode, timeout=settings.timeout)
        if asks:
            self._notify("post_approval_response", {**observed, "choice": decision})
        try:
            self.remember(request.rule_key, request.session_id, decision)
        except Exception:
            log.exception("could not remember the approval of %r", request.rule_key)
        return decision != "deny"

    @property
    def timeout(self) -> float:
        """``approvals.timeout``: how long a question waits for its answer."""
        return float(self._config().approvals.timeout)

    def refusal_note(self) -> str:
        """For the message of a refused call: why nobody was asked, when the caller has nobody to ask (an MCP
        client without elicitation, a cron job), else ``""``."""
        caller = CALLER.get().approval
        if isinstance(caller, str) and self._config().approvals.mode in ("ask", "strict"):
            return f" Nobody was asked: {caller}."
        return ""

    def can_ask(self, request: ApprovalRequest) -> bool:
        """Whether :meth:`ask` would get an answer from someone (or needs none: already approved, ``approvals.mode:
        approve``); False when it could only refuse unasked (``approvals.mode: deny``, a caller nobody answers for,
        the terminal prompt with no terminal). For gates that keep a change for later rather than drop it."""
        if self.is_approved(request.rule_key, request.session_id) or _covered(request):
            return True
        mode = self._config().approvals.mode
        if mode in ("approve", "deny"):
            return mode == "approve"
        caller = CALLER.get().approval
        if isinstance(caller, str):
            return False
        callback = caller or self._callback or _callback
        return callback is not terminal_approval or bool(sys.stdin and sys.stdin.isatty())

    def _judged(self, request: ApprovalRequest) -> str:
        """The smart judge's verdict on ``request``, logged, told to the approval observers (``choice``
        ``smart_<verdict>``) and added to the call's trace when OpenTelemetry traces it."""
        assert self.judge is not None
        observed = self._observed(request)
        self._notify("pre_approval_request", {**observed, "surface": "smart"})
        verdict = self.judge(request)
        log.info("smart approval: %s %r (%s)", verdict, request.rule_key or request.tool_name,
                 observed["command"][:200])
        self._notify("post_approval_response", {**observed, "surface": "smart", "choice": f"smart_{verdict}"})
        if "opentelemetry" in sys.modules:
            from opentelemetry import trace

            trace.get_current_span().add_event("hermes.smart_approval", {
                "hermes.approval.verdict": verdict, "hermes.approval.rule": request.rule_key or ""})
        return verdict

    def _observed(self, request: ApprovalRequest) -> dict[str, Any]:
        """The keywords of Hermes Agent's approval hooks, for ``request``."""
        command = (request.args or {}).get("command")
        return {"command": command if isinstance(command, str) else request.tool_name or "",
                "description": request.message, "pattern_key": request.rule_key or "",
                "pattern_keys": [request.rule_key] if request.rule_key else [], "session_key": request.session_id or "",
                "surface": "cli" if (CALLER.get().approval or self._callback or _callback) is terminal_approval
                else "gateway",
                "tool_name": request.tool_name}

    def _notify(self, hook: str, kwargs: dict[str, Any]) -> None:
        if self._observe is not None:
            try:
                self._observe(hook, **kwargs)
            except Exception:  # observers only: an approval never fails because of one
                log.exception("%s observers failed", hook)
