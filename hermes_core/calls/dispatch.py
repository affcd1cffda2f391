"""The model-facing call path: ``handle_function_call``, ``run_tool_calls`` and ``answer_tool_calls``, and their
async twins, which never block the caller's event loop."""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
import time
import warnings
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ..errors import PluginFault
from ..tools.policies import ToolScope
from ..tools.registry import (
    UNLIMITED,
    Availability,
    ToolEntry,
    ToolRegistry,
    acall_handler,
    as_text,
    async_handler,
    handler_text,
)
from ..tools.toolcalls import ToolCall, ToolCallLike, ToolReply, read_tool_calls, tool_reply
from ..workers.exitguard import sigints, user_interrupted, watch_sigint
from .approval import ApprovalRequest, Approvals, approved_call
from .arguments import ArgumentError, ArgumentValidator, parse_arguments
from .budget import ResultBudget
from .errorhints import with_hint
from .hooks import HookImpl, HookRunner, answer_problem, quoted
from .media import media_store  # noqa: F401 - fills the slot that lets handlers' results keep their media
from .middleware import Middleware
from .toolcontext import CALL, CURRENT, CallInfo, ToolContext

if TYPE_CHECKING:
    from ..workers.asyncbridge import CallerLoop

__all__ = ["AGENT_LOOP_TOOLS", "INTERACTIVE_TOOLS", "MAX_PARALLEL", "Dispatcher", "tool_error"]

log = logging.getLogger(__name__)

#: Deprecated and empty: todo, memory, session_search, clarify and delegate_task all run in the tool layer now (the
#: agent's state in state/, the user and models through the runtime's callbacks, calls/asking.py).
AGENT_LOOP_TOOLS: frozenset[str] = frozenset()
#: Tools that talk to the user or to a model mid-call: a batch that holds one never runs in parallel, and an
#: ``execute_code`` script never calls one.
INTERACTIVE_TOOLS = frozenset({"clarify", "delegate_task"})
MAX_PARALLEL = 8
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


class _Blocked(Exception):
    pass


def _shown_name(name: Any) -> str:
    """A tool name as an error message shows it: a string cut to 200 characters, else its type."""
    if type(name) is not str:
        return f"<{type(name).__name__}>"
    return name if len(name) <= 200 else f"{name[:200]}..."


class _Call:
    """One tool call on its way through its plan (what a step does not set keeps the class's default)."""

    args: dict[str, Any]
    original: dict[str, Any]
    #: The call's answer once a step set it (a blocked or failed call still reaches ``post_tool_call``).
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
    def context(self) -> dict[str, Any]:
        """The keywords hooks and middleware get about the call."""
        return {"task_id": self.task_id, "session_id": self.session_id, "tool_call_id": self.tool_call_id}


#: One step of a plan: None to go on, or the call's answer (the steps after it do not run).
Step = Callable[[_Call], str | None]


class _Plan:
    """How every call of one tool runs, made once per registry generation, hook state and policy: a tuple of
    steps (parse and validate, availability, request middleware, ``pre_tool_call``, approval, the handler and
    fitting its result, ``post_tool_call``), a step the tool does not need simply absent. The sync and the async
    API run the same plan."""

    __slots__ = ("check", "context", "direct", "dispatcher", "entry", "generation", "hooks", "middleware",
                 "observed", "policy", "refusal", "steps")

    def __init__(self, dispatcher: Dispatcher, entry: ToolEntry, generation: int, hooks: Any, policy: str) -> None:
        self.dispatcher, self.entry = dispatcher, entry
        #: What the plan was made for: the registry's generation, the hooks' published state, the policy, and
        #: whether any middleware was registered (the chains themselves are read per call).
        self.generation, self.hooks, self.policy = generation, hooks, policy
        self.middleware = bool(dispatcher.middleware)
        self.context = dispatcher.contexts(entry.plugin)
        #: The compiled argument check (a bound method: the cheapest thing to call).
        self.check = ArgumentValidator(entry.schema["parameters"]).__call__
        scope = dispatcher.scope
        refusal = scope.refusal(entry)
        active = hooks.active
        steps: list[Step | None] = [
            self.available if entry.has_checks else None,
            self.parse,
            self.request_middleware if self.middleware else None,
            self.pre_tool_call if "pre_tool_call" in active else None,
            self.approval if scope.asks(entry) else None,
            self.destructive_arguments if scope.checks_arguments(entry) else None,
            self.handle,
            self.post_tool_call if not active.isdisjoint(("post_tool_call", "transform_tool_result")) else None,
        ]
        #: Why the tool is not run at all (its only step says so), or None.
        self.refusal = refusal
        self.steps: tuple[Step, ...] = (functools.partial(_refuse, refusal),) if refusal is not None else \
            tuple(step for step in steps if step is not None)
        #: Parsing and the handler are all there is: the async API may await an async handler on its own loop.
        self.direct = self.steps == (self.parse, self.handle)
        #: Hooks or middleware see the call (its trace and its duration are kept).
        self.observed = len(self.steps) > 2 and not self.direct

    def run(self, call: _Call) -> str:
        if self.observed:
            call.trace, call.started = [], time.perf_counter()
        for step in self.steps:
            answer = step(call)
            if answer is not None:
                return answer
        assert call.result is not None
        return call.result

    # -- the steps ----------------------------------------------------------------------------------

    def available(self, call: _Call) -> str | None:
        availability = self.dispatcher.registry.check(self.entry.name)
        return None if availability.available else _unavailable(self.entry.name, availability)

    def parse(self, call: _Call) -> str | None:
        raw = call.raw
        try:
            call.args = call.original = self.check(raw if type(raw) is dict else parse_arguments(raw))
        except ArgumentError as exc:
            return _invalid(self.entry.name, exc)
        except RecursionError:
            return _invalid(self.entry.name, ArgumentError(["arguments are nested too deeply"]))
        return None

    def request_middleware(self, call: _Call) -> str | None:
        name = self.entry.name
        for plugin, callback in self.dispatcher.middleware.get("tool_request", ()):
            try:
                answer = callback(tool_name=name, args=call.args, original_args=call.original, **call.context)
            except Exception:
                log.exception("tool_request middleware of plugin %r raised; skipped", plugin)
                continue
            except BaseException as exc:
                if user_interrupted(exc, call.since):
                    raise
                return _failed(name, PluginFault(plugin, "the tool_request middleware", exc))
            if isinstance(answer, dict) and isinstance(answer.get("args"), dict):
                call.args = answer["args"]
                call.trace.append(f"{plugin}:tool_request")
        return None

    def pre_tool_call(self, call: _Call) -> str | None:
        """Every ``pre_tool_call`` answer, checked where it ran: one that is not valid blocks the call, a ``modify``
        is validated against the schema again, an ``approve`` is asked here and then the others run."""
        name, hooks, check = self.entry.name, self.dispatcher.hooks, self.check
        kwargs: dict[str, Any] = {
            "task_id": call.task_id, "session_id": call.session_id, "tool_call_id": call.tool_call_id,
            "tool_name": name, "args": call.args, "turn_id": None, "api_request_id": None,
            "middleware_trace": call.trace}
        refusal: list[str] = []

        def answered(impl: HookImpl, answer: Any) -> bool:  # runs where the implementation ran
            if answer is None:
                return False
            problem = answer_problem(answer)
            if problem is not None:
                shown = quoted(answer)
                hooks.bad_answers[impl.plugin] = f"{shown} ({problem})"
                refusal.append(f"Blocked: the pre_tool_call hook of plugin '{impl.plugin}' gave an answer that is not "
                               f"valid ({problem}): {shown}")
                return True
            if answer["action"] != "modify":
                return True
            try:
                kwargs["args"] = check(answer["args"])
            except (ArgumentError, RecursionError) as exc:
                refusal.append(f"Blocked: the pre_tool_call hook of plugin '{impl.plugin}' changed the arguments into "
                               f"ones tool '{name}' does not accept: {exc or 'nested too deeply'}")
                return True
            call.trace.append(f"{impl.plugin}:pre_tool_call")
            return False

        start = 0
        while True:
            phase = hooks.run(("pre_tool_call",), kwargs, stop=answered, fail_closed=True, start=start,
                              state=self.hooks)
            call.args = kwargs["args"]
            if phase.fault is not None:
                return self._blocked(call, f"Blocked: {phase.fault}")
            if phase.missed is not None:
                plugin = phase.missed.plugin
                why = (f"the hooks of plugin '{plugin}' are switched off: {hooks.switched_off.get(plugin)}"
                       if phase.switched_off else f"the pre_tool_call hook of plugin '{plugin}' did not answer "
                                                  f"within {hooks.current_timeout() or 0:g} s")
                return self._blocked(call, f"Blocked: {why}")
            if refusal:
                return self._blocked(call, refusal[0])
            if not phase.stopped:
                return None
            impl, answer = phase.results[-1]
            if answer["action"] == "block":
                return self._blocked(call, answer.get("message") or f"Blocked by plugin '{impl.plugin}'")
            request = ApprovalRequest(message=answer.get("message") or f"Run tool '{name}'?",
                                      rule_key=answer.get("rule_key"), tool_name=name, args=call.args,
                                      session_id=call.session_id)
            if not self.dispatcher.approvals.ask(request):
                return self._blocked(call, f"Blocked: not approved: {request.message}")
            start = phase.end

    def approval(self, call: _Call, given: list[str] | None = None) -> str | None:
        """Under the ``writes`` policy, ask before a tool that is not read-only, or a call that gives the ``given``
        destructive arguments of a read-only one (blocked when refused or unanswered)."""
        if call.result is not None:
            return None
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
                                       "change themselves.")
        call.approved = whole
        return None

    def destructive_arguments(self, call: _Call) -> str | None:
        """A call of a read-only tool that gives one of its ``destructive_if`` arguments is one that may change
        things: refused under ``read-only`` and in read-only views, asked about under ``writes``."""
        if call.result is not None:
            return None
        given = self.entry.annotations.destructive_arguments(call.args)
        if not given:
            return None
        refusal = self.dispatcher.scope.argument_refusal(self.entry.name, given)
        return self._blocked(call, refusal) if refusal is not None else self.approval(call, given)

    def handle(self, call: _Call) -> str | None:
        """The handler (inside the ``tool_execution`` middleware), its result fitted to the budget."""
        if call.result is not None:
            return None
        entry, dispatcher = self.entry, self.dispatcher
        try:
            if not (call.approved or self.middleware):
                result = self._handler(call, call.args)
            else:
                with approved_call(entry.name if call.approved else None, call.args):
                    result = self._execution_chain(call)
            limit = entry.max_result_size_chars
            if not (result.isascii() and (limit is UNLIMITED or len(result) <= (
                    dispatcher.budget.per_tool if limit is None else limit))):
                result = dispatcher._fit(entry, result)
        except Exception as exc:
            call.status, call.error_type = "error", _error_type(exc)
            call.error_message = str(exc)
            result = _failed(entry.name, exc)
        call.result = result
        return None

    def _handler(self, call: _Call, args: dict[str, Any]) -> str:
        invoke = call.invoke
        token, session = CURRENT.set(self.context), CALL.set(CallInfo(call.session_id, self.entry.name,
                                                                      call.tool_call_id))
        try:
            if invoke is None:
                result = self.entry.handler(args, task_id=call.task_id, session_id=call.session_id,
                                            user_task=call.user_task)
                return result if type(result) is str else handler_text(result)
            return invoke(self.entry, args, task_id=call.task_id, session_id=call.session_id,
                          user_task=call.user_task)
        except Exception:
            raise
        except BaseException as exc:
            if user_interrupted(exc, call.since):
                raise
            raise PluginFault(self.entry.plugin, "the handler", exc) from None
        finally:
            CALL.reset(session)
            CURRENT.reset(token)

    def _execution_chain(self, call: _Call) -> str:
        """The ``tool_execution`` middleware around the handler."""
        def handler(args: dict[str, Any]) -> str:
            return self._handler(call, args)

        chain: Callable[[dict[str, Any]], str] = handler
        for plugin, wrapper in reversed(self.dispatcher.middleware.get("tool_execution", ())):
            chain = _wrap(wrapper, plugin, chain, self.entry.name, call)
        return chain(call.args)

    def post_tool_call(self, call: _Call) -> str | None:
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
            return _failed(self.entry.name, fault)
        return result if transformed is None else valid_text(transformed)

    def _blocked(self, call: _Call, message: str) -> str | None:
        """Block the call (``post_tool_call`` still sees it); the steps go on (None)."""
        call.status, call.error_type, call.error_message = "blocked", "Blocked", message
        call.result = tool_error(message)
        return None


def _refuse(refusal: str, call: _Call) -> str:
    return tool_error(refusal)


class Dispatcher:
    """Runs tool calls through their plans, inside one containment boundary: whatever the input and whatever
    plugin code does, a call returns a string (only the user's Ctrl-C goes through)."""

    # -- session recording (issue 39): what answers a batch records it, when the runtime set a recorder --
    #: ``recorder(session_id, calls, results)`` records a batch of ``answer_tool_calls`` in the session store.
    recorder: Callable[..., None] | None = None
    #: ``deliverer(session_id, results)``: the results with what the session is owed appended (finished
    #: background sub-agents).
    deliverer: Callable[[str | None, list[str]], list[str]] | None = None
    #: ``error_hint()``: ``tools.error_hint`` of the config, added to every error result (``None``: none).
    error_hint: Callable[[], str | None] | None = None

    def __init__(self, registry: ToolRegistry, hooks: HookRunner, middleware: Middleware, budget: ResultBudget,
                 approvals: Approvals, contexts: Callable[[str | None], ToolContext], scope: ToolScope,
                 why_missing: Callable[[str], str | None] | None = None) -> None:
        self.registry = registry
        #: The tools this dispatcher runs, and the approval policy they run under.
        self.scope = scope
        self.hooks = hooks
        self.middleware = middleware
        self.budget = budget
        self.approvals = approvals
        #: The handler context of a plugin (made current while its handler runs).
        self.contexts = contexts
        #: Why a tool is not registered (its plugin is disabled, its MCP server failed, ...), if it can tell.
        self.why_missing = why_missing
        self._plans: dict[str, _Plan] = {}
        self._async_handlers: weakref.WeakKeyDictionary[ToolEntry, Callable[..., Any] | None] = \
            weakref.WeakKeyDictionary()
        watch_sigint()

    def scoped(self, scope: ToolScope, contexts: Callable[[str | None], ToolContext]) -> Dispatcher:
        """A dispatcher of the same tools, hooks and approvals that runs only what ``scope`` offers, its handlers
        seeing ``contexts``."""
        scoped = type(self)(self.registry, self.hooks, self.middleware, self.budget, self.approvals, contexts, scope)
        scoped.recorder, scoped.deliverer, scoped.error_hint = self.recorder, self.deliverer, self.error_hint
        return scoped

    def _plan(self, name: Any) -> _Plan | str:
        """The current plan of tool ``name``, made again when the tools, the hooks, the middleware or the policy
        changed since it was made; or the error that answers a call of a tool that is not registered."""
        if not isinstance(name, str):
            return tool_error(f"Tool names are strings, not {type(name).__name__}")
        generation, hooks, policy = self.registry.generation, self.hooks.state, self.scope.policy()
        entry = self.registry.get(name)
        if entry is None:
            self._plans.pop(name, None)
            return self._unknown(name)
        plan = self._plans[name] = _Plan(self, entry, generation, hooks, policy)
        return plan

    # -- one call ----------------------------------------------------------------------------

    def handle_function_call(self, function_name: str, function_args: Any, task_id: str | None = None,
                             tool_call_id: str | None = None, session_id: str | None = None,
                             user_task: str | None = None, enabled_tools: Iterable[str] | None = None) -> str:
        """Run one tool call; always returns a string (``{"error": ...}`` JSON on any failure, with the
        ``tools.error_hint`` when one is set)."""
        return self._hinted(self._handle(function_name, function_args, task_id, tool_call_id, session_id, user_task,
                                         enabled_tools))

    def _hinted(self, result: str) -> str:
        hint = self.error_hint() if self.error_hint is not None else None
        return with_hint(result, hint) if hint else result

    def _handle(self, function_name: Any, function_args: Any, task_id: str | None, tool_call_id: str | None,
                session_id: str | None, user_task: str | None, enabled_tools: Iterable[str] | None) -> str:
        since = sigints()
        try:
            plan: _Plan | str | None = self._plans.get(function_name) if type(function_name) is str else None
            if not isinstance(plan, _Plan) or plan.generation != self.registry.generation \
                    or plan.hooks is not self.hooks.state or plan.policy != self.scope.policy() \
                    or plan.middleware != bool(self.middleware):
                plan = self._plan(function_name)
                if isinstance(plan, str):
                    return plan
            if enabled_tools is not None and plan.refusal is None and function_name not in enabled_tools:
                return tool_error(f"Tool '{function_name}' is not enabled for this conversation")
            return plan.run(_Call(function_args, task_id, tool_call_id, session_id, user_task, since))
        except BaseException as exc:
            return _contained(function_name, exc, since)

    async def ahandle_function_call(self, function_name: str, function_args: Any, task_id: str | None = None,
                                    tool_call_id: str | None = None, session_id: str | None = None,
                                    user_task: str | None = None, enabled_tools: Iterable[str] | None = None) -> str:
        """:meth:`handle_function_call` without blocking the running loop: the same plan, its synchronous steps
        (hooks, middleware, approvals, a synchronous handler) on a worker thread, and an async handler and async
        hooks awaited on this loop. Cancelling the awaiting task cancels what runs on this loop; a synchronous
        handler runs to its end and its result is dropped."""
        return self._hinted(await self._ahandle(function_name, function_args, task_id, tool_call_id, session_id,
                                                user_task, enabled_tools))

    async def _ahandle(self, function_name: Any, function_args: Any, task_id: str | None, tool_call_id: str | None,
                       session_id: str | None, user_task: str | None, enabled_tools: Iterable[str] | None) -> str:
        import asyncio

        from ..workers.asyncbridge import CALLER_LOOP, CallerLoop, in_worker

        since = sigints()
        try:
            plan = self._plan(function_name)
            if isinstance(plan, str):
                return plan
            if enabled_tools is not None and plan.refusal is None and function_name not in enabled_tools:
                return tool_error(f"Tool '{function_name}' is not enabled for this conversation")
            function = await self._async_handler(plan.entry)
            if plan.direct and function is not None:
                return await self._await_directly(plan, function, _Call(function_args, task_id, tool_call_id,
                                                                        session_id, user_task, since))
            loop = CallerLoop(asyncio.get_running_loop())

            def run(call: _Call) -> str:
                CALLER_LOOP.set(loop)
                return plan.run(call)

            invoke = _on_loop(loop) if function is not None else None
            try:
                return await in_worker(run, _Call(function_args, task_id, tool_call_id, session_id, user_task, since,
                                                     invoke))
            except asyncio.CancelledError:
                loop.cancel()
                raise
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            return _contained(function_name, exc, since)

    async def _await_directly(self, plan: _Plan, function: Callable[..., Any], call: _Call) -> str:
        """A plan of parsing and an async handler, awaited on the running loop (nothing in it blocks)."""
        answer = plan.parse(call)
        if answer is not None:
            return answer
        entry = plan.entry
        token, session = CURRENT.set(plan.context), CALL.set(CallInfo(call.session_id, entry.name, call.tool_call_id))
        try:
            result = function(call.args, task_id=call.task_id, session_id=call.session_id,
                              user_task=call.user_task)
            if hasattr(result, "__await__"):
                result = await result
            result = valid_text(as_text(result))
        except Exception as exc:
            return _failed(entry.name, exc)
        except BaseException as exc:
            import asyncio

            if isinstance(exc, asyncio.CancelledError) or user_interrupted(exc, call.since):
                raise
            return _failed(entry.name, PluginFault(entry.plugin, "the handler", exc))
        finally:
            CALL.reset(session)
            CURRENT.reset(token)
        if self._fits(entry, result):
            return result
        from ..workers.asyncbridge import in_worker

        return await in_worker(self._fit, entry, result)

    async def _async_handler(self, entry: ToolEntry) -> Callable[..., Any] | None:
        """The entry's coroutine function (None for a synchronous handler); a lazy one is imported off the loop."""
        try:
            return self._async_handlers[entry]
        except KeyError:
            pass
        if not self.scope.offers(entry):
            return None  # a tool this scope refuses is never imported
        if entry.is_lazy:
            from ..workers.asyncbridge import in_worker

            function = await in_worker(async_handler, entry)
        else:
            function = async_handler(entry)
        self._async_handlers[entry] = function
        return function

    def _fit(self, entry: ToolEntry, result: str) -> str:
        """``result`` as valid text within the tool's size limit (its own, else the configured default); a larger
        one is saved and previewed, or truncated."""
        result = valid_text(result)
        limit = entry.max_result_size_chars
        if limit is UNLIMITED:
            return result
        limit = self.budget.per_tool if limit is None else limit
        return result if len(result) <= limit else self.budget.fit(entry.name, result, limit)

    def _fits(self, entry: ToolEntry, result: str) -> bool:
        """Whether :meth:`_fit` returns ``result`` (valid text) as it is, without writing a file."""
        limit = entry.max_result_size_chars
        return limit is UNLIMITED or len(result) <= (self.budget.per_tool if limit is None else limit)

    def _unknown(self, name: str) -> str:
        explained, close = self.unknown_tool(name)
        return tool_error(f"Unknown tool {explained}", suggestions=close)

    def unknown_tool(self, name: str) -> tuple[str, list[str]]:
        """``'name'`` followed by why it is not registered, when that is known, and the closest available tool
        names (an unavailable tool is never suggested); and those names."""
        import difflib

        why = self.why_missing(name) if self.why_missing is not None else None
        offered = self.registry.get_available_tool_names(self.scope.names())
        close = difflib.get_close_matches(name, offered, n=3, cutoff=0.6) if len(name) <= 200 else []
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        return f"'{_shown_name(name)}'" + (f": {why}" if why else "") + hint, close

    # -- a batch of calls -----------------------------------------------------------------------

    def run_tool_calls(self, calls: Iterable[ToolCallLike], **context: Any) -> list[str]:
        """Run a model's tool calls, any provider's, as dicts or SDK objects; in parallel when safe; results in
        call order (a call that cannot be read is answered by an error in its place; text, thinking, message and
        reasoning items of a whole ``response.content`` or ``response.output`` are skipped)."""
        _warn_if_on_a_loop("run_tool_calls")
        return self._run(read_tool_calls(calls), context)

    def answer_tool_calls(self, calls: Iterable[ToolCallLike], **context: Any) -> list[ToolReply]:
        """Run the calls as :meth:`run_tool_calls` does; each result as the reply item its provider expects."""
        _warn_if_on_a_loop("answer_tool_calls")
        parsed = read_tool_calls(calls)
        media = self.budget.media
        results = self._run(parsed, context)
        if self.deliverer is not None:
            results = self.deliverer(context.get("session_id"), results)
        if self.recorder is not None:
            self.recorder(context.get("session_id"), parsed, results)
        return [tool_reply(call, result, media) for call, result in zip(parsed, results, strict=True)]

    async def arun_tool_calls(self, calls: Iterable[ToolCallLike], **context: Any) -> list[str]:
        """:meth:`run_tool_calls` without blocking the running loop (parallel-safe batches run concurrently)."""
        return await self._arun(read_tool_calls(calls), context)

    async def aanswer_tool_calls(self, calls: Iterable[ToolCallLike], **context: Any) -> list[ToolReply]:
        """:meth:`answer_tool_calls` without blocking the running loop."""
        parsed = read_tool_calls(calls)
        media = self.budget.media
        results = await self._arun(parsed, context)
        from ..workers.asyncbridge import in_worker

        if self.deliverer is not None:
            results = await in_worker(self.deliverer, context.get("session_id"), results)
        if self.recorder is not None:

            await in_worker(self.recorder, context.get("session_id"), parsed, results)
        return [tool_reply(call, result, media) for call, result in zip(parsed, results, strict=True)]

    def _run(self, parsed: list[ToolCall], context: dict[str, Any]) -> list[str]:
        def run(call: ToolCall) -> str:
            if call.problem is not None:
                return tool_error(call.problem)
            return self.handle_function_call(call.name, call.arguments, tool_call_id=call.id, **context)

        if len(parsed) > 1 and self._parallel_ok(parsed):
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(parsed)),
                                    thread_name_prefix="hermes-tool") as pool:
                return list(pool.map(run, parsed))
        return [run(call) for call in parsed]

    async def _arun(self, parsed: list[ToolCall], context: dict[str, Any]) -> list[str]:
        import asyncio

        async def run(call: ToolCall) -> str:
            if call.problem is not None:
                return tool_error(call.problem)
            return await self.ahandle_function_call(call.name, call.arguments, tool_call_id=call.id, **context)

        if len(parsed) > 1 and self._parallel_ok(parsed):
            slots = asyncio.Semaphore(MAX_PARALLEL)

            async def bounded(call: ToolCall) -> str:
                async with slots:
                    return await run(call)

            return list(await asyncio.gather(*(bounded(call) for call in parsed)))
        return [await run(call) for call in parsed]

    def _parallel_ok(self, parsed: list[ToolCall]) -> bool:
        touched: list[PurePosixPath] = []
        for call in parsed:
            if call.problem is not None:
                continue
            if call.name in INTERACTIVE_TOOLS:
                return False
            entry = self.registry.get(call.name)
            if entry is not None and (self.scope.asks(entry) or self.scope.checks_arguments(entry)):
                return False  # one question at a time
            if entry is None or entry.parallel_safe:
                continue
            if not entry.path_args:
                return False
            try:
                args = parse_arguments(call.arguments)
            except ArgumentError:
                return False
            workspace = self.contexts(entry.plugin).workspace
            paths = [_resolved(workspace, str(args[a])) for a in entry.path_args if args.get(a)]
            if not paths:
                return False
            for path in paths:
                if any(_overlaps(path, other) for other in touched):
                    return False
                touched.append(path)
        return True


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


def _failed(function_name: str, exc: Exception) -> str:
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
    compat = sys.modules.get("hermes_core.plugins.compat")
    if compat is None or not isinstance(exc, ImportError):
        return None
    explained: str = compat.explain(exc)
    return explained if explained != str(exc) else None


def _contained(function_name: Any, exc: BaseException, since: int) -> str:
    """The error a call answers with when something escaped its steps; the user's Ctrl-C is raised again."""
    if user_interrupted(exc, since):
        raise exc
    name = _shown_name(function_name)
    try:
        log.debug("tool call %s failed", name, exc_info=exc)
        detail = str(exc)
    except BaseException:  # a hostile exception whose text cannot be made
        detail = ""
    return tool_error(f"Tool '{name}' failed: {type(exc).__name__}" + (f": {detail[:2000]}" if detail else ""),
                      error_type=type(exc).__name__)


def _on_loop(loop: CallerLoop) -> Callable[..., str]:
    """A ``call_handler`` for a worker thread that runs an async handler on the caller's loop ``loop``."""
    def call(entry: ToolEntry, args: dict[str, Any], **kwargs: Any) -> str:
        return loop.run(acall_handler(entry, args, **kwargs))

    return call


def _warn_if_on_a_loop(name: str) -> None:
    asyncio = sys.modules.get("asyncio")  # no running loop is possible before asyncio is imported
    if asyncio is not None and asyncio._get_running_loop() is not None:
        warnings.warn(f"{name}() blocks the running event loop until every call is done; "
                      f"await a{name}() instead", RuntimeWarning, stacklevel=4)


def _resolved(workspace: Path, path: str) -> PurePosixPath:
    """The real path ``path`` names from ``workspace`` (``..``, ``./``, ``~``, symlinks and absolute spellings
    of one file all give the same answer)."""
    return PurePosixPath(os.path.realpath(os.path.join(workspace, os.path.expanduser(path))))


def _overlaps(a: PurePosixPath, b: PurePosixPath) -> bool:
    return a == b or a in b.parents or b in a.parents


def _wrap(wrapper: Callable[..., Any], plugin: str, inner: Callable[[dict[str, Any]], str], name: str,
          call: _Call) -> Callable[[dict[str, Any]], str]:
    def wrapped(args: dict[str, Any]) -> str:
        call.trace.append(f"{plugin}:tool_execution")
        try:
            result = wrapper(tool_name=name, args=args, original_args=call.original, next_call=inner, **call.context)
        except Exception:
            raise
        except BaseException as exc:
            if user_interrupted(exc, call.since):
                raise
            raise PluginFault(plugin, "the tool_execution middleware", exc) from None
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)

    return wrapped
