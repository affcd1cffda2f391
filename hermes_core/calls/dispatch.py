"""The model-facing call path: ``handle_function_call``, ``run_tool_calls`` and ``answer_tool_calls``, and their
async twins, which never block the caller's event loop."""

from __future__ import annotations

import contextvars
import functools
import logging
import os
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ..errors import DeadlineExceeded, PluginFault
from ..tools.policies import ToolScope
from ..tools.registry import (
    UNLIMITED,
    ToolEntry,
    ToolRegistry,
    acall_handler,
    as_text,
    async_handler,
)
from ..tools.toolcalls import ToolCall, ToolCallLike, ToolReply, read_tool_calls, tool_reply
from ..workers.executor import Job, Workers
from ..workers.exitguard import sigints, user_interrupted, watch_sigint
from .approval import Approvals
from .arguments import ArgumentError, parse_arguments
from .budget import ResultBudget
from .errorhints import with_hint
from .hooks import HookRunner
from .media import media_store  # noqa: F401 - fills the slot that lets handlers' results keep their media
from .middleware import Middleware
from .plan import Call, Closing, Plan, bounded, call_info, failed, missed_deadline, tool_error, valid_text
from .toolcontext import ACTIVE, ToolContext
from .turns import CheckpointGate, turn

if TYPE_CHECKING:
    from ..workers.asyncbridge import CallerLoop
    from .bridge import ToolBridge

__all__ = ["AGENT_LOOP_TOOLS", "INTERACTIVE_TOOLS", "MAX_PARALLEL", "Dispatcher", "tool_error"]

log = logging.getLogger(__name__)

#: Deprecated and empty: todo, memory, session_search, clarify and delegate_task all run in the tool layer now (the
#: agent's state in state/, the user and models through the runtime's callbacks, calls/asking.py).
AGENT_LOOP_TOOLS: frozenset[str] = frozenset()
#: Tools that talk to the user or to a model mid-call: a batch that holds one never runs in parallel, and an
#: ``execute_code`` script never calls one.
INTERACTIVE_TOOLS = frozenset({"clarify", "delegate_task"})
MAX_PARALLEL = 8
#: Calls of one tool that may still run past their deadline (each holds a thread) before the next is refused.
MAX_LATE_CALLS = 4
#: The threads handlers with a deadline run on (the pool keeps a few idle ones; an abandoned one is replaced).
_HANDLERS = Workers("hermes-handler")


def _shown_name(name: Any) -> str:
    """A tool name as an error message shows it: a string cut to 200 characters, else its type."""
    if type(name) is not str:
        return f"<{type(name).__name__}>"
    return name if len(name) <= 200 else f"{name[:200]}..."


class Dispatcher:
    """Runs tool calls through their plans, inside one containment boundary: whatever the input and whatever
    plugin code does, a call returns a string (only the user's Ctrl-C goes through)."""

    #: A closing step every plan gets (the tracing dispatcher reports to the call's span), or None.
    report: Closing | None = None
    #: ``recorder(session_id, calls, results)`` records a batch of ``answer_tool_calls`` in the session store
    #: (the runtime sets it: the agent's state, issue 39).
    recorder: Callable[..., None] | None = None
    #: ``deliverer(session_id, results)``: the results with what the session is owed appended (finished
    #: background sub-agents).
    deliverer: Callable[[str | None, list[str]], list[str]] | None = None
    #: ``error_hint()``: ``tools.error_hint`` of the config, added to every error result (``None``: none).
    error_hint: Callable[[], str | None] | None = None
    # -- tool search (issue 43): the bridge tools, answered or unwrapped before a call finds its plan --
    bridge: ToolBridge | None = None

    # -- checkpoints (issue 42): the step before the handler of a call that may change files, once per turn --
    #: ``runtime.checkpoints`` when ``checkpoints`` is on (None: off, and no plan has the step).
    checkpoints: CheckpointGate | None = None

    def __init__(self, registry: ToolRegistry, hooks: HookRunner, middleware: Middleware, budget: ResultBudget,
                 approvals: Approvals, tool_contexts: Callable[[str | None], ToolContext], scope: ToolScope,
                 why_missing: Callable[[str], str | None] | None = None,
                 call_timeout: Callable[[], float | None] = lambda: None) -> None:
        self.registry = registry
        #: The tools this dispatcher runs, and the approval policy they run under.
        self.scope = scope
        self.hooks = hooks
        self.middleware = middleware
        self.budget = budget
        self.approvals = approvals
        #: The tool context of a plugin's handlers (made current while one runs).
        self.tool_contexts = tool_contexts
        #: Why a tool is not registered (its plugin is disabled, its MCP server failed, ...), if it can tell.
        self.why_missing = why_missing
        #: Seconds a plugin's handler may take (``tools.call_timeout``; None or 0: no deadline), read at most once a
        #: second.
        self.call_timeout = call_timeout
        self._timeout: float | None = None
        self._timeout_read = float("-inf")
        self.late = _LateCalls()
        self._plans: dict[str, Plan] = {}
        self._async_handlers: weakref.WeakKeyDictionary[ToolEntry, Callable[..., Any] | None] = \
            weakref.WeakKeyDictionary()
        watch_sigint()

    def scoped(self, scope: ToolScope, tool_contexts: Callable[[str | None], ToolContext]) -> Dispatcher:
        """A dispatcher of the same tools, hooks and approvals that runs only what ``scope`` offers, its handlers
        seeing ``tool_contexts``."""
        scoped = type(self)(self.registry, self.hooks, self.middleware, self.budget, self.approvals, tool_contexts,
                            scope, call_timeout=self.call_timeout)
        scoped.late = self.late  # (one count of the handlers still running late, whichever view started them)
        scoped.recorder, scoped.checkpoints, scoped.bridge = self.recorder, self.checkpoints, self.bridge
        scoped.deliverer, scoped.error_hint = self.deliverer, self.error_hint
        return scoped

    def _current_plan(self, name: Any) -> Plan | str:
        """The plan of tool ``name``: the one made before while nothing it was made for changed, else a new one; or
        the error that answers a call of a tool that is not registered."""
        plan = self._plans.get(name) if type(name) is str else None
        if plan is None or plan.generation != self.registry.generation or plan.hooks is not self.hooks.state \
                or plan.policy != self.scope.policy() or plan.middleware != bool(self.middleware):
            return self._plan(name)
        return plan

    def _plan(self, name: Any) -> Plan | str:
        """Make the plan of tool ``name`` (kept for the calls after it), or the error that answers a call of a tool
        that is not registered."""
        if not isinstance(name, str):
            return tool_error(f"Tool names are strings, not {type(name).__name__}")
        generation, hooks, policy = self.registry.generation, self.hooks.state, self.scope.policy()
        entry = self.registry.get(name)
        if entry is None:
            self._plans.pop(name, None)
            return self._unknown(name)
        plan = self._plans[name] = Plan(self, entry, generation, hooks, policy, self.scope.refusal(entry))
        return plan

    def call_timeout_now(self) -> float | None:
        """``tools.call_timeout`` in force (read again once it is a second old)."""
        now = time.monotonic()
        if now - self._timeout_read > 1.0:
            self._timeout, self._timeout_read = self.call_timeout() or None, now
        return self._timeout

    def within(self, timeout: float, entry: ToolEntry, execute: Callable[..., str], call: Call) -> str:
        """``execute(call, timeout)`` on a worker thread, in the call's containment (``os._exit`` there raises), within
        ``timeout`` seconds: past it the worker is abandoned and :class:`DeadlineExceeded` raised at once. While
        :data:`MAX_LATE_CALLS` calls of the tool still run past their deadline, the next is refused at once."""
        late = self.late
        if late.of(entry.name) >= MAX_LATE_CALLS:
            raise DeadlineExceeded(f"{MAX_LATE_CALLS} calls of the tool still run past their {timeout:g} s deadline "
                                   "(tools.call_timeout); it is refused until one of them ends")
        job = _HANDLERS.run(Job((functools.partial(execute, timeout=timeout),), call, timeout,
                                on_abandon=functools.partial(late.add, entry.name, 1),
                                on_late_return=functools.partial(late.add, entry.name, -1)))
        if job.missed is not None:
            raise missed_deadline(entry, timeout, "its thread was abandoned")
        _, ok, value = job.outcomes[0]
        if ok:
            return value
        raise value

    # -- one call ----------------------------------------------------------------------------

    def handle_function_call(self, function_name: str, function_args: Any, task_id: str | None = None,
                             tool_call_id: str | None = None, session_id: str | None = None,
                             user_task: str | None = None, enabled_tools: Iterable[str] | None = None) -> str:
        """Run one tool call; always returns a string (``{"error": ...}`` JSON on any failure, with the
        ``tools.error_hint`` when one is set)."""
        since = sigints()
        try:  # (the hottest path inline: a registered tool whose plan holds, for any conversation)
            plan = self._plans.get(function_name) if type(function_name) is str else None
            if plan is None or enabled_tools is not None or plan.generation != self.registry.generation \
                    or plan.hooks is not self.hooks.state or plan.policy != self.scope.policy() \
                    or plan.middleware != bool(self.middleware):
                result = self._handle(function_name, function_args, task_id, tool_call_id, session_id, user_task,
                                      enabled_tools, since)
            elif plan.inline:
                result = plan.run_inline(function_args, task_id, tool_call_id, session_id, user_task, since)
            else:
                result = plan.run(Call(function_args, task_id, tool_call_id, session_id, user_task, since))
        except BaseException as exc:
            result = _contained(function_name, exc, since)
        if self.error_hint is None or '"error"' not in result:  # (:meth:`_hinted`'s test, inline on the hot path)
            return result
        return self._hinted(result)

    def _hinted(self, result: str) -> str:
        if self.error_hint is None or '"error"' not in result:  # (a result that cannot be an error costs a scan)
            return result
        hint = self.error_hint()
        return with_hint(result, hint) if hint else result

    def _handle(self, function_name: Any, function_args: Any, task_id: str | None, tool_call_id: str | None,
                session_id: str | None, user_task: str | None, enabled_tools: Iterable[str] | None, since: int) -> str:
        """A call :meth:`handle_function_call` does not run at once: a bridge tool of tool search (answered, or
        unwrapped into the call it asks for), a tool without a plan that holds, or a conversation's own selection
        (raises what the call raised)."""
        if self._bridged(function_name):  # (the bridge's names are reserved: no registered tool has a plan of one)
            assert self.bridge is not None
            bridged = self.bridge.route(function_name, function_args, self.scope)
            if isinstance(bridged, str):
                return bridged
            function_name, function_args = bridged
        made = self._plan_for(function_name, enabled_tools)
        if isinstance(made, str):
            return made
        if made.inline:
            return made.run_inline(function_args, task_id, tool_call_id, session_id, user_task, since)
        return made.run(Call(function_args, task_id, tool_call_id, session_id, user_task, since))

    def _bridged(self, function_name: Any) -> bool:
        """Whether ``function_name`` is a bridge tool of tool search, in force now."""
        return self.bridge is not None and type(function_name) is str and function_name in self.bridge.names \
            and self.bridge.active()

    def _plan_for(self, function_name: Any, enabled_tools: Iterable[str] | None) -> Plan | str:
        """The plan of a call of ``function_name`` in a conversation that enables ``enabled_tools`` (None: any), or
        the error that answers it."""
        plan = self._current_plan(function_name)
        if isinstance(plan, str) or enabled_tools is None or plan.refusal is not None or function_name in enabled_tools:
            return plan
        return tool_error(f"Tool '{function_name}' is not enabled for this conversation")

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
            if self._bridged(function_name):
                assert self.bridge is not None
                bridged = await in_worker(self.bridge.route, function_name, function_args, self.scope)
                if isinstance(bridged, str):
                    return bridged
                function_name, function_args = bridged
            plan = self._plan_for(function_name, enabled_tools)
            if isinstance(plan, str):
                return plan
            function = await self._async_handler(plan.entry)
            if plan.direct and function is not None:
                return await self._await_directly(plan, function, Call(function_args, task_id, tool_call_id,
                                                                        session_id, user_task, since))
            loop = CallerLoop(asyncio.get_running_loop())

            def run(call: Call) -> str:
                CALLER_LOOP.set(loop)
                return plan.run(call)

            invoke = _on_loop(loop) if function is not None else None
            try:
                return await in_worker(run, Call(function_args, task_id, tool_call_id, session_id, user_task, since,
                                                     invoke))
            except asyncio.CancelledError:
                loop.cancel()
                raise
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            return _contained(function_name, exc, since)

    async def _await_directly(self, plan: Plan, function: Callable[..., Any], call: Call) -> str:
        """A plan of parsing and an async handler, awaited on the running loop (nothing in it blocks)."""
        answer = plan.parse(call)
        if answer is not None:
            return answer
        entry, timeout = plan.entry, plan.deadline()
        token = ACTIVE.set((plan.tool_context, call_info((call.session_id, entry.name, call.tool_call_id))))
        try:
            result = function(call.args, task_id=call.task_id, session_id=call.session_id,
                              user_task=call.user_task)
            if hasattr(result, "__await__"):
                result = await (bounded(result, timeout, entry) if timeout else result)
            result = valid_text(as_text(result))
        except Exception as exc:
            return failed(entry.name, exc)
        except BaseException as exc:
            import asyncio

            if isinstance(exc, asyncio.CancelledError) or user_interrupted(exc, call.since):
                raise
            return failed(entry.name, PluginFault(entry.plugin, "the handler", exc))
        finally:
            ACTIVE.reset(token)
        if self._fits(entry, result):
            return result
        from ..workers.asyncbridge import in_worker

        return await in_worker(self.fit, entry, result)

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

    def fit(self, entry: ToolEntry, result: str) -> str:
        """``result`` as valid text within the tool's size limit (its own, else the configured default); a larger
        one is saved and previewed, or truncated."""
        result = valid_text(result)
        limit = entry.max_result_size_chars
        if limit is UNLIMITED:
            return result
        limit = self.budget.per_tool if limit is None else limit
        return result if len(result) <= limit else self.budget.fit(entry.name, result, limit)

    def _fits(self, entry: ToolEntry, result: str) -> bool:
        """Whether :meth:`fit` returns ``result`` (valid text) as it is, without writing a file."""
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

        with turn():
            if len(parsed) > 1 and self._parallel_ok(parsed):
                from concurrent.futures import ThreadPoolExecutor

                # each call in a copy of this thread's context: the batch's turn, its caller's callbacks, its depth
                contexts = [contextvars.copy_context() for _ in parsed]
                with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(parsed)),
                                        thread_name_prefix="hermes-tool") as pool:
                    return list(pool.map(lambda context, call: context.run(run, call), contexts, parsed))
            return [run(call) for call in parsed]

    async def _arun(self, parsed: list[ToolCall], context: dict[str, Any]) -> list[str]:
        import asyncio

        async def run(call: ToolCall) -> str:
            if call.problem is not None:
                return tool_error(call.problem)
            return await self.ahandle_function_call(call.name, call.arguments, tool_call_id=call.id, **context)

        with turn():
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
            workspace = self.tool_contexts(entry.plugin).workspace
            paths = [_resolved(workspace, str(args[a])) for a in entry.path_args if args.get(a)]
            if not paths:
                return False
            for path in paths:
                if any(_overlaps(path, other) for other in touched):
                    return False
                touched.append(path)
        return True


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
    """How a worker thread calls an async handler: on the caller's loop ``loop`` (cancelled after ``timeout``)."""
    def call(entry: ToolEntry, args: dict[str, Any], timeout: float | None, **kwargs: Any) -> str:
        running = acall_handler(entry, args, **kwargs)
        return loop.run(bounded(running, timeout, entry) if timeout else running)

    return call


class _LateCalls:
    """Calls of each tool whose handler missed its deadline and still runs (each holds a thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def of(self, name: str) -> int:
        return self._counts.get(name, 0)

    def add(self, name: str, change: int, job: Job) -> None:
        with self._lock:
            self._counts[name] = self._counts.get(name, 0) + change


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


