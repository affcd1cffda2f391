"""How one call of a tool runs: its plan (the steps that tool needs, made once per registry generation, hook state
and policy, and run by the sync and the async API alike), the call on its way through the steps, and the error
text every failure becomes."""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import DeadlineExceeded, PluginFault
from ..tools.registry import UNLIMITED, Availability, ToolEntry, handler_text
from ..workers.exitguard import user_interrupted
from ..workers.interop import INTEROP
from .answers import decide
from .approval import ApprovalRequest, approved_call
from .arguments import ArgumentError, ArgumentValidator, frozen_copy, parse_arguments
from .toolcontext import ACTIVE, CallInfo
from .turns import TURN

if TYPE_CHECKING:
    from ..tools.policies import ToolScope
    from ..tools.registry import ToolRegistry
    from .approval import Approvals
    from .budget import ResultBudget
    from .hooks import HookRunner
    from .middleware import Middleware
    from .toolcontext import ToolContext
    from .turns import CheckpointGate

__all__ = ["Call", "Closing", "Dispatching", "Plan", "Step", "bounded", "call_info", "failed", "missed_deadline",
           "tool_error", "valid_text"]

log = logging.getLogger(__name__)

#: Characters of one argument an approval question shows; a call shown cut is not approved as a whole.
SHOWN_ARGUMENT_CHARS = 2000


def tool_error(message: str, **extra: Any) -> str:
    """The JSON error text every failure becomes: ``{"error": message, ...}`` (handlers return it too)."""
    return valid_text(json.dumps({"error": message, **extra}, ensure_ascii=False))


def valid_text(text: str) -> str:
    """``text`` as valid Unicode: lone surrogates (a file name that is not UTF-8, read with Python's
    ``surrogateescape``) become U+FFFD, so every result can be encoded and sent on."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:  # the bytes a surrogateescape'd name stood for, each one that is not UTF-8 shown as U+FFFD
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:  # other lone surrogates
            return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


class Call:
    """One tool call on its way through its plan (what a step does not set keeps the class's default)."""

    args: dict[str, Any]
    original: dict[str, Any]
    #: The call's answer once a step set it: the handler's result, or why it was blocked (a blocked call goes
    #: straight to the plan's closing steps, ``post_tool_call`` among them).
    result: str | None = None
    status: str = "ok"
    error_type: str | None = None
    error_message: str | None = None
    #: The user approved this very call just now, having seen it whole.
    approved = False
    #: ``plugin:stage`` of what changed the arguments, and when the hooks began (calls with hooks or middleware).
    trace: list[str]
    started = 0.0

    def __init__(self, raw: Any, task_id: str | None, tool_call_id: str | None, session_id: str | None,
                 user_task: str | None, since: int, invoke: Callable[..., str] | None = None) -> None:
        self.raw, self.task_id, self.tool_call_id, self.session_id = raw, task_id, tool_call_id, session_id
        self.user_task, self.since, self.invoke = user_task, since, invoke

    @property
    def keywords(self) -> dict[str, Any]:
        """What hooks and middleware are told about the call: its task, session and tool call ids."""
        return {"task_id": self.task_id, "session_id": self.session_id, "tool_call_id": self.tool_call_id}


#: A step of a plan: None to go on (or, once the step set ``result``, to go to the closing steps), or the call's
#: answer, after which nothing more runs.
Step = Callable[[Call], str | None]


#: A closing step: it runs once the call has its result (blocked, failed or handled), and may change it.
Closing = Callable[[Call], None]


class Dispatching(Protocol):
    """What a plan needs of the dispatcher that runs it (``dispatch.Dispatcher``)."""

    registry: ToolRegistry
    scope: ToolScope
    hooks: HookRunner
    middleware: Middleware
    budget: ResultBudget
    approvals: Approvals
    tool_contexts: Callable[[str | None], ToolContext]
    report: Closing | None
    checkpoints: CheckpointGate | None

    def call_timeout_now(self) -> float | None: ...

    def within(self, timeout: float, entry: ToolEntry, execute: Callable[..., str], call: Call) -> str: ...

    def fit(self, entry: ToolEntry, result: str) -> str: ...


class Plan:
    """How every call of one tool runs, made once per registry generation, hook state and policy, for the sync and
    the async API alike: a tuple of steps (availability, parse and validate, request middleware, ``pre_tool_call``,
    approval, destructive arguments, the handler and fitting its result), a step the tool does not need simply
    absent, and the closing steps that see the result (the tracing report, ``post_tool_call``). A step that blocks
    the call ends the steps: the closing ones run next."""

    __slots__ = ("bounded", "check", "closing", "direct", "dispatcher", "entry", "generation", "hooks", "inline",
                 "middleware", "observed", "policy", "refusal", "steps", "tool_context")

    def __init__(self, dispatcher: Dispatching, entry: ToolEntry, generation: int, hooks: Any, policy: str,
                 refusal: str | None) -> None:
        self.dispatcher, self.entry = dispatcher, entry
        #: What the plan was made for: the registry's generation, the hooks' published state, the policy, and
        #: whether any middleware was registered (the chains themselves are read per call).
        self.generation, self.hooks, self.policy = generation, hooks, policy
        self.middleware = bool(dispatcher.middleware)
        self.tool_context = dispatcher.tool_contexts(entry.plugin)
        #: The compiled argument check (a bound method: the cheapest thing to call).
        self.check = ArgumentValidator(entry.schema["parameters"]).__call__
        #: The handler runs under a deadline (``tools.call_timeout``, or the tool's own ``call_timeout``) on a worker
        #: thread: a plugin's tools do, the host program's own only when they ask for it (MCP tools have their
        #: server's ``timeout``).
        own = entry.call_timeout
        self.bounded = bool(own) if own is not None else \
            entry.plugin is not None and not entry.plugin.startswith("mcp:")
        scope = dispatcher.scope
        active = hooks.active
        steps: list[Step | None] = [
            self.available if entry.has_checks else None,
            self.parse,
            self.request_middleware if "tool_request" in dispatcher.middleware else None,
            self.pre_tool_call if "pre_tool_call" in active else None,
            self.approval if scope.asks(entry) else None,
            self.destructive_arguments if scope.checks_arguments(entry) else None,
            self.checkpoint if dispatcher.checkpoints is not None and dispatcher.checkpoints.watches(entry.name)
            else None,
            self.handle,
        ]
        closing: list[Closing | None] = [
            dispatcher.report,
            self.post_tool_call if not active.isdisjoint(("post_tool_call", "transform_tool_result")) else None,
        ]
        #: Why the tool is not run at all (its only step says so), or None.
        self.refusal = refusal
        self.steps: tuple[Step, ...] = (functools.partial(_refuse, refusal),) if refusal is not None else \
            tuple(step for step in steps if step is not None)
        self.closing: tuple[Closing, ...] = () if refusal is not None else \
            tuple(step for step in closing if step is not None)
        #: Parsing and the handler are all there is: the async API may await an async handler on its own loop.
        self.direct = self.steps == (self.parse, self.handle) and not (self.closing or self.middleware)
        #: Something may see the call besides its handler (its trace and its duration are kept).
        self.observed = not self.direct
        #: A direct plan whose handler runs in the caller's thread: :meth:`run_inline` needs no :class:`Call`.
        self.inline = self.direct and not self.bounded

    def run(self, call: Call) -> str:
        if self.observed:
            call.trace, call.started = [], time.perf_counter()
        for step in self.steps:
            answer = step(call)
            if answer is not None:
                return answer
            if call.result is not None:  # blocked, or handled
                break
        for closing in self.closing:
            closing(call)
        assert call.result is not None
        return call.result

    def deadline(self) -> float | None:
        """Seconds the handler may take in this call (None: no deadline, it runs in the caller's thread)."""
        if not self.bounded:
            return None
        own = self.entry.call_timeout
        return own if own is not None else self.dispatcher.call_timeout_now()

    # -- the steps ----------------------------------------------------------------------------------

    def available(self, call: Call) -> str | None:
        availability = self.dispatcher.registry.check(self.entry.name)
        # a tool missing only its plugin's requires_env variables: its handler gives the plugin's own set-up hint
        return None if availability.available or availability.handler_decides else _unavailable(
            self.entry.name, availability)

    def parse(self, call: Call) -> str | None:
        checked = self._checked(call.raw)
        if isinstance(checked, str):
            return checked
        call.args = call.original = checked
        return None

    def _checked(self, raw: Any) -> dict[str, Any] | str:
        """The call's arguments parsed and validated, or the error that answers it."""
        try:
            return self.check(raw if type(raw) is dict else parse_arguments(raw))
        except ArgumentError as exc:
            return _invalid(self.entry.name, exc)
        except RecursionError:
            return _invalid(self.entry.name, ArgumentError(["arguments are nested too deeply"]))

    def run_inline(self, raw: Any, task_id: str | None, tool_call_id: str | None, session_id: str | None,
                   user_task: str | None, since: int) -> str:
        """A call of an :attr:`inline` plan: the arguments checked, the handler called in this thread and its result
        fitted, with no :class:`Call` carried between steps (the hottest path: a host's own tool, nothing else
        registered)."""
        checked = self._checked(raw)
        if isinstance(checked, str):
            return checked
        try:
            return self._fitted(self._call_handler(checked, None, None, task_id, session_id, tool_call_id, user_task,
                                                   since))
        except Exception as exc:
            return failed(self.entry.name, exc)

    def request_middleware(self, call: Call) -> str | None:
        """The ``tool_request`` middleware, as a phase under the hooks' deadline: arguments it gives are validated, a
        missed deadline blocks the call."""
        name = self.entry.name
        kwargs = {"tool_name": name, "args": call.args, "original_args": call.original, **call.keywords}
        decision = decide(self.dispatcher.hooks, "tool_request", kwargs, self.check,
                          callbacks=self.dispatcher.middleware.get("tool_request", ()))
        call.args = decision.args
        if decision.modified_by:
            call.trace.extend(f"{plugin}:tool_request" for plugin in decision.modified_by)
        if decision.fault is not None:
            return failed(name, decision.fault)
        return self._blocked(call, decision.message) if decision.verdict == "block" else None

    def pre_tool_call(self, call: Call) -> str | None:
        """Every ``pre_tool_call`` phase's decision, acted on: block, ask (then the rest of the phase runs), or go on
        with the arguments the phase validated. An approval holds for the arguments it was given: when a later hook
        changed them, the call as it now is is asked about again."""
        name, dispatcher = self.entry.name, self.dispatcher
        kwargs: dict[str, Any] = {
            "task_id": call.task_id, "session_id": call.session_id, "tool_call_id": call.tool_call_id,
            "tool_name": name, "args": call.args, "turn_id": None, "api_request_id": None,
            "middleware_trace": call.trace}
        approved: list[ApprovalRequest] = []
        start = 0
        while True:
            decision = decide(dispatcher.hooks, "pre_tool_call", kwargs, self.check, start=start, state=self.hooks)
            call.args = kwargs["args"] = decision.args
            if decision.modified_by:
                call.trace.extend(f"{plugin}:pre_tool_call" for plugin in decision.modified_by)
            if decision.verdict == "proceed":
                break
            if decision.verdict != "ask":
                return self._blocked(call, decision.message)
            request = ApprovalRequest(message=decision.message, rule_key=decision.rule_key, tool_name=name,
                                      args=call.args, session_id=call.session_id)
            if not dispatcher.approvals.ask(request):
                return self._blocked(call, f"Blocked: not approved: {request.message}"
                                           f"{dispatcher.approvals.refusal_note()}")
            approved.append(request)
            start = decision.resume
        for request in approved:
            if request.args != call.args:
                shown, _ = _shown_call(name, call.args)
                again = request._replace(message=f"{request.message}\n    (asked again: the arguments changed after "
                                                 f"the approval; the call is now {shown})", args=call.args)
                if not dispatcher.approvals.ask(again):
                    return self._blocked(call, f"Blocked: not approved once the arguments changed: {request.message}"
                                               f"{dispatcher.approvals.refusal_note()}")
        return None

    def approval(self, call: Call, given: list[str] | None = None) -> str | None:
        """Under the ``writes`` policy, ask before a tool that is not read-only, or a call that gives the ``given``
        destructive arguments of a read-only one (blocked when refused or unanswered)."""
        name, approvals, session_id = self.entry.name, self.dispatcher.approvals, call.session_id
        rule_key = f"tool:{name}"
        if approvals.is_approved(rule_key, session_id):
            return None  # approved for the session or always: nothing was asked about this call
        shown, whole = _shown_call(name, call.args)
        what = f"'{name}' with {', '.join(repr(argument) for argument in given)}" if given else f"'{name}'"
        request = ApprovalRequest(
            message=f"The approval policy 'writes' asks before tools that may change things, and {what} is not "
                    f"read-only:\n    {shown}", rule_key=rule_key, tool_name=name, args=call.args,
            session_id=session_id)
        if not approvals.ask(request):
            return self._blocked(call, f"Blocked by the approval policy 'writes': tool {what} may change things and "
                                       "was not approved. Do not retry it; ask the user to approve it or to make the "
                                       f"change themselves.{approvals.refusal_note()}")
        call.approved = whole
        return None

    def destructive_arguments(self, call: Call) -> str | None:
        """A call of a read-only tool that gives one of its ``destructive_if`` arguments is one that may change
        things: refused under ``read-only`` and in read-only views, asked about under ``writes``."""
        given = self.entry.annotations.destructive_arguments(call.args)
        if not given:
            return None
        refusal = self.dispatcher.scope.argument_refusal(self.entry.name, given)
        return self._blocked(call, refusal) if refusal is not None else self.approval(call, given)

    def checkpoint(self, call: Call) -> str | None:
        """Before a call that may change files and goes ahead (as its tool's ``changes_files`` judges, when it has
        one: a ``terminal`` ``ls`` does not): the turn's checkpoint of the workspace (issue 42)."""
        assert self.dispatcher.checkpoints is not None
        if self.entry.changes_files is None or self._changes_files(self.entry.changes_files, call):
            self.dispatcher.checkpoints.before_mutation(self.entry.name, TURN.get() or call)
        return None

    def _changes_files(self, judge: Callable[[dict[str, Any], Any], bool], call: Call) -> bool:
        """``judge``'s answer for ``call``; a judge that fails counts as a yes (a checkpoint too many is cheap)."""
        try:
            return bool(judge(dict(call.args), self.tool_context.config))
        except Exception as exc:
            log.warning("%s's changes_files failed (%s): checkpointing before the call", self.entry.name, exc)
            return True

    def handle(self, call: Call) -> str | None:
        """The handler (inside the ``tool_execution`` middleware), its result fitted to the budget. Under a deadline
        a synchronous handler runs on a worker thread, abandoned when it misses it (the call answers at once); an
        async one is cancelled."""
        entry = self.entry
        try:
            timeout = self.deadline() if self.bounded else None
            if timeout and call.invoke is None:
                result = self.dispatcher.within(timeout, entry, self.execute, call)
            elif call.approved or self.middleware:
                result = self.execute(call, timeout)
            else:
                result = self._handler(call, call.args, timeout)
            result = self._fitted(result)
        except Exception as exc:
            call.status, call.error_type = "error", _error_type(exc)
            call.error_message = str(exc)
            result = failed(entry.name, exc)
        call.result = result
        return None if self.closing else result  # (the call's answer when nothing closes it)

    def execute(self, call: Call, timeout: float | None = None) -> str:
        """The handler, inside the ``tool_execution`` middleware when there is some (an async handler cancelled
        after ``timeout`` seconds)."""
        if not (call.approved or self.middleware):
            return self._handler(call, call.args, timeout)
        with approved_call(self.entry.name if call.approved else None, call.args):
            return self._execution_chain(call, timeout)

    def _fitted(self, result: str) -> str:
        """``result`` within the tool's result budget (a short ASCII one as it is)."""
        limit = self.entry.max_result_size_chars
        if result.isascii() and (limit is UNLIMITED or len(result) <= (
                self.dispatcher.budget.per_tool if limit is None else limit)):
            return result
        return self.dispatcher.fit(self.entry, result)

    def _handler(self, call: Call, args: dict[str, Any], timeout: float | None) -> str:
        return self._call_handler(args, timeout, call.invoke, call.task_id, call.session_id, call.tool_call_id,
                                  call.user_task, call.since)

    def _call_handler(self, args: dict[str, Any], timeout: float | None, invoke: Callable[..., str] | None,
                      task_id: str | None, session_id: str | None, tool_call_id: str | None, user_task: str | None,
                      since: int) -> str:
        """The handler with ``args``, its tool context and the call made current (a plugin's ``BaseException`` is
        its fault, but for the user's Ctrl-C)."""
        entry = self.entry
        token = ACTIVE.set((self.tool_context, call_info((session_id, entry.name, tool_call_id))))
        try:
            if invoke is None:
                result = entry.handler(args, task_id=task_id, session_id=session_id, user_task=user_task)
                if type(result) is str:
                    return result
                return handler_text(bounded(result, timeout, entry) if timeout and hasattr(
                    result, "__await__") else result)
            return invoke(entry, args, timeout, task_id=task_id, session_id=session_id, user_task=user_task)
        except Exception:
            raise
        except BaseException as exc:
            if user_interrupted(exc, since):
                raise
            raise PluginFault(entry.plugin, "the handler", exc) from None
        finally:
            ACTIVE.reset(token)

    def _execution_chain(self, call: Call, timeout: float | None) -> str:
        """The ``tool_execution`` middleware around the handler; the arguments one passes on are validated."""
        def handler(args: dict[str, Any]) -> str:
            if args is not call.args:  # changed by a middleware: checked as any other arguments
                args = self.check(frozen_copy(args))
            return self._handler(call, args, timeout)

        chain: Callable[[dict[str, Any]], str] = handler
        for plugin, wrapper in reversed(self.dispatcher.middleware.get("tool_execution", ())):
            chain = _wrap(wrapper, plugin, chain, self.entry.name, call)
        return chain(call.args)

    def post_tool_call(self, call: Call) -> None:
        """The observers, then ``transform_tool_result``, whose answer is fitted to the budget as a result is."""
        result = call.result
        assert result is not None
        observed = {"task_id": call.task_id, "session_id": call.session_id, "tool_call_id": call.tool_call_id,
                    "tool_name": self.entry.name, "args": call.args, "result": result,
                    "duration_ms": (time.perf_counter() - call.started) * 1000,
                    "status": call.status, "error_type": call.error_type, "error_message": call.error_message,
                    "turn_id": None, "api_request_id": None, "middleware_trace": call.trace}
        try:
            transformed = self.dispatcher.hooks.after_tool_call(observed, self.hooks)
        except PluginFault as fault:
            call.result = failed(self.entry.name, fault)
            return
        if transformed is not None:
            call.result = self.dispatcher.fit(self.entry, transformed)

    def _blocked(self, call: Call, message: str) -> str | None:
        """Block the call: its result set, the steps end and the closing ones (``post_tool_call``) see it (None: a
        step's return value that is not the call's final answer)."""
        call.status, call.error_type, call.error_message = "blocked", "Blocked", message
        call.result = tool_error(message)
        return None


#: A :class:`CallInfo` made from its tuple of fields (a third of the named tuple's own constructor's cost).
call_info: Callable[[tuple[str | None, str | None, str | None]], CallInfo] = functools.partial(tuple.__new__, CallInfo)


def _refuse(refusal: str, call: Call) -> str:
    return tool_error(refusal)


def bounded(awaitable: Any, timeout: float, entry: ToolEntry) -> Any:
    """``awaitable`` (an async handler's) cancelled after ``timeout`` seconds, raising what a missed deadline does."""
    async def bounded() -> Any:
        import asyncio

        try:
            return await asyncio.wait_for(awaitable, timeout)
        except TimeoutError:
            raise missed_deadline(entry, timeout, "was cancelled") from None

    return bounded()


def missed_deadline(entry: ToolEntry, timeout: float, what: str) -> DeadlineExceeded:
    plugin = f" of plugin '{entry.plugin}'" if entry.plugin else ""
    return DeadlineExceeded(f"the handler{plugin} did not finish within {timeout:g} s (tools.call_timeout) and {what}")


def _shown_call(name: str, args: dict[str, Any]) -> tuple[str, bool]:
    """``name(key=value, ...)`` for an approval question, and whether it shows every argument whole."""
    whole = True
    parts = []
    for key, value in args.items():
        text = json.dumps(value, ensure_ascii=False)
        if len(text) > SHOWN_ARGUMENT_CHARS:
            whole = False
            text = f"{text[:SHOWN_ARGUMENT_CHARS]}... ({len(text) - SHOWN_ARGUMENT_CHARS} more characters)"
        parts.append(f"{key}={text}")
    return f"{name}({', '.join(parts)})", whole


def _unavailable(function_name: str, availability: Availability) -> str:
    return tool_error(f"Tool '{function_name}' is unavailable: {availability.reason}")


def _invalid(function_name: str, exc: ArgumentError) -> str:
    return tool_error(f"Invalid arguments for tool '{function_name}': {exc}", problems=exc.problems)


def _error_type(exc: Exception) -> str:
    return type(exc.error).__name__ if isinstance(exc, PluginFault) else type(exc).__name__


def failed(function_name: str, exc: Exception) -> str:
    log.debug("tool %s failed", function_name, exc_info=True)
    error_type = _error_type(exc)
    explained = _explained(exc.error if isinstance(exc, PluginFault) else exc)
    if explained is not None:
        return tool_error(f"Tool '{function_name}' failed: {error_type}: {explained}", error_type=error_type)
    if isinstance(exc, PluginFault):
        return tool_error(f"Tool '{function_name}' failed: {exc}", error_type=error_type)
    return tool_error(f"Tool '{function_name}' failed: {error_type}: {exc}", error_type=error_type)


def _explained(exc: BaseException) -> str | None:
    """For a Hermes Agent internal that plugin code imported while it ran, the reason a load would give (the
    import, the plugin's file and line, whether a shim exists); otherwise None."""
    if not isinstance(exc, ImportError):
        return None
    explained = INTEROP.layer.explain(exc)
    return explained if explained != str(exc) else None


def _wrap(wrapper: Callable[..., Any], plugin: str, inner: Callable[[dict[str, Any]], str], name: str,
          call: Call) -> Callable[[dict[str, Any]], str]:
    def wrapped(args: dict[str, Any]) -> str:
        call.trace.append(f"{plugin}:tool_execution")
        try:
            result = wrapper(tool_name=name, args=args, original_args=call.original, next_call=inner, **call.keywords)
        except Exception:
            raise
        except BaseException as exc:
            if user_interrupted(exc, call.since):
                raise
            raise PluginFault(plugin, "the tool_execution middleware", exc) from None
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)

    return wrapped
