"""The answers a ``pre_tool_call`` hook may give: built for it (``return block("why")`` reads better than the dict it
makes, and cannot be misspelt into an answer that blocks for the wrong reason), checked where the hook ran, and what
one phase of them decides (:class:`Decision`, :func:`decide`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypedDict

from .arguments import frozen_copy

if TYPE_CHECKING:
    from ..errors import PluginFault
    from .hooks import HookImpl, HookRunner, _State

__all__ = ["ANSWERS", "Approve", "Block", "Decision", "Modify", "answer_problem", "approve", "block", "decide",
           "modify", "quoted"]


class Block(TypedDict):
    action: Literal["block"]
    #: What the model is told instead of the result.
    message: str


class Approve(TypedDict, total=False):
    action: Literal["approve"]
    #: The question the user is asked.
    message: str
    #: What an "always" or "session" answer is remembered under.
    rule_key: str


class Modify(TypedDict):
    action: Literal["modify"]
    #: The arguments the call runs with instead (checked against the tool's schema again).
    args: dict[str, Any]


def block(message: str) -> Block:
    """Refuse the call; the model gets ``{"error": message}``."""
    return {"action": "block", "message": message}


def approve(message: str, rule_key: str | None = None) -> Approve:
    """Run the call only if the user approves it (refused or unanswered: blocked)."""
    answer: Approve = {"action": "approve", "message": message}
    if rule_key is not None:
        answer["rule_key"] = rule_key
    return answer


def modify(args: dict[str, Any]) -> Modify:
    """Run the call with ``args`` instead of the model's arguments."""
    return {"action": "modify", "args": dict(args)}


#: A ``pre_tool_call`` answer's documented shapes: the keys each action may have, and the types of their values.
ANSWERS: dict[str, dict[str, tuple[type, ...]]] = {
    "block": {"action": (str,), "message": (str,)},
    "approve": {"action": (str,), "message": (str,), "rule_key": (str, type(None))},
    "modify": {"action": (str,), "args": (dict,)},
}


#: Characters of a bad hook answer an error quotes.
QUOTED_ANSWER_CHARS = 200


def answer_problem(answer: Any) -> str | None:
    """Why ``answer`` is not a valid ``pre_tool_call`` answer (None when it is: ``None`` or a documented shape,
    exactly: no other action, key, spelling or type)."""
    if answer is None:
        return None
    if type(answer) is not dict:
        return f"a {type(answer).__name__}, not a dict or None"
    action = answer.get("action")
    shape = ANSWERS.get(action) if type(action) is str else None
    if shape is None:
        return f"no action {', '.join(map(repr, ANSWERS))}"
    for key, value in answer.items():
        types = shape.get(key) if type(key) is str else None
        if types is None:
            return f"a key {quoted(key, 40)} that a {action!r} answer does not have"
        if type(value) not in types:
            return f"{key!r} is a {type(value).__name__}"
    if action == "modify" and "args" not in answer:
        return "a 'modify' answer without 'args'"
    return None


def quoted(value: Any, limit: int = QUOTED_ANSWER_CHARS) -> str:
    """``repr(value)`` cut to ``limit`` characters (and never raising)."""
    try:
        text = repr(value)
    except Exception:
        text = f"<a {type(value).__name__} that cannot be shown>"
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit} more characters)"


#: What to do with a call after one phase of ``pre_tool_call`` hooks (or of ``tool_request`` middleware).
Verdict = Literal["proceed", "block", "ask", "fail"]


class Decision(NamedTuple):
    """What one phase of ``pre_tool_call`` implementations (or of ``tool_request`` middleware) decided, for dispatch to
    act on: ``proceed`` with ``args``; ``block`` the call with ``message``; ``ask`` the user ``message`` first
    (``rule_key``; a yes resumes the phase at ``resume``); ``fail``: a plugin's code raised what is not an
    ``Exception`` (``fault``).

    ``args`` are the arguments validated against the tool's schema again, a copy that no plugin holds. ``plugin`` is
    the plugin the verdict came from (for a missed deadline: the one whose implementation was abandoned,
    ``abandoned``); ``modified_by`` the plugins whose answers changed the arguments, in order."""

    verdict: Verdict
    args: dict[str, Any]
    message: str = ""
    plugin: str | None = None
    rule_key: str | None = None
    abandoned: bool = False
    modified_by: tuple[str, ...] = ()
    resume: int = 0
    fault: PluginFault | None = None


class _Answers:
    """The answers of one phase, read on the worker where each implementation ran, before the next one runs: a
    ``modify`` answer (a middleware's ``{"args": ...}``) becomes the arguments the next one sees, once validated;
    a ``block`` or ``approve`` answer, or one that is not valid, ends the phase. Only the runner reads it, and only
    once the phase has ended."""

    __slots__ = ("check", "copy", "kind", "kwargs", "modified_by", "refusal", "runner")

    def __init__(self, runner: HookRunner, kind: str, kwargs: dict[str, Any],
                 check: Callable[[Any], dict[str, Any]]) -> None:
        self.runner, self.kind, self.kwargs, self.check = runner, kind, kwargs, check
        self.copy = frozen_copy
        self.modified_by: list[str] = []
        #: Why the phase blocks the call, when an answer did.
        self.refusal: str | None = None

    def after(self, impl: HookImpl, answer: Any) -> bool:
        """(Where ``impl`` ran.) Take in its ``answer``; True ends the phase."""
        if self.kind == "tool_request":  # middleware: {"args": {...}} replaces them, anything else is ignored
            if not (type(answer) is dict and type(answer.get("args")) is dict):
                return False
        elif answer is None:
            return False
        else:
            problem = answer_problem(answer)
            if problem is not None:
                shown = quoted(answer)
                self.runner.bad_answers[impl.plugin] = f"{shown} ({problem})"
                self.refusal = (f"Blocked: the pre_tool_call hook of plugin '{impl.plugin}' gave an answer that is not "
                                f"valid ({problem}): {shown}")
                return True
            if answer["action"] != "modify":
                return True
        try:
            self.kwargs["args"] = self.check(self.copy(answer["args"]))
        except Exception as exc:
            self.refusal = (f"Blocked: the {impl.label} of plugin '{impl.plugin}' changed the arguments into ones "
                            f"tool '{self.kwargs['tool_name']}' does not accept: {exc or type(exc).__name__}")
            return True
        self.modified_by.append(impl.plugin)
        return False


def decide(runner: HookRunner, kind: Literal["pre_tool_call", "tool_request"], kwargs: dict[str, Any],
           check: Callable[[Any], dict[str, Any]], *, start: int = 0, state: _State | None = None,
           callbacks: Sequence[tuple[str, Callable[..., Any]]] = ()) -> Decision:
    """One phase of ``pre_tool_call`` implementations, or of the ``tool_request`` middleware ``callbacks``, given
    ``kwargs`` (whose ``args`` are the call's), and what it decided.

    The phase fails closed: an implementation that misses the deadline, raises what is not an ``Exception``, or
    answers what is not a valid answer blocks the call, and so does one of a plugin whose hooks are switched off.
    ``check`` validates arguments against the tool's schema: each ``modify`` answer before the next
    implementation sees it, and the arguments as the phase left them, whatever the implementations did to them
    (answered or changed in place), on a copy none of them holds. ``start`` resumes a phase after an ``ask``."""
    answers = _Answers(runner, kind, kwargs, check)
    phase = runner.run(("pre_tool_call",), kwargs, stop=answers.after, fail_closed=True, start=start, state=state,
                     phase=runner.callbacks_phase(kind, callbacks) if kind == "tool_request" else None)
    modified = tuple(answers.modified_by)
    if phase.fault is not None:
        return Decision("fail", kwargs["args"], f"Blocked: {phase.fault}", phase.fault.plugin,
                        modified_by=modified, fault=phase.fault)
    if phase.missed is not None:
        plugin = phase.missed.plugin
        why = (f"the hooks of plugin '{plugin}' are switched off: {runner.switched_off.get(plugin)}"
               if phase.switched_off else f"the {phase.missed.label} of plugin '{plugin}' did not answer "
                                          f"within {runner.current_timeout() or 0:g} s")
        return Decision("block", kwargs["args"], f"Blocked: {why}", plugin, abandoned=not phase.switched_off,
                        modified_by=modified)
    if answers.refusal is not None:
        return Decision("block", kwargs["args"], answers.refusal, phase.results[-1][0].plugin, modified_by=modified)
    tool = kwargs["tool_name"]
    try:
        args = check(answers.copy(kwargs["args"]))
    except Exception as exc:
        plugins = ", ".join(dict.fromkeys(f"'{impl.plugin}'" for impl, _ in phase.results)) or "none"
        which = f"{kind} middleware" if kind == "tool_request" else f"{kind} hooks"
        return Decision("block", kwargs["args"], f"Blocked: after the {which} (plugins {plugins}) the arguments are "
                                                 f"ones tool '{tool}' does not accept: {exc}", modified_by=modified)
    if not phase.stopped:
        return Decision("proceed", args, modified_by=modified)
    impl, answer = phase.results[-1]
    if answer["action"] == "block":
        return Decision("block", args, answer.get("message") or f"Blocked by plugin '{impl.plugin}'", impl.plugin,
                        modified_by=modified)
    return Decision("ask", args, answer.get("message") or f"Run tool '{tool}'?", impl.plugin,
                    answer.get("rule_key"), modified_by=modified, resume=phase.end)
