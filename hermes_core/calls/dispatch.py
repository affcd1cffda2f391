"""The model-facing call path: ``handle_function_call``, ``run_tool_calls`` and ``answer_tool_calls``, and their
async twins, which never block the caller's event loop."""

from __future__ import annotations

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

from .approval import ApprovalRequest, Approvals, approved_call
from .arguments import ArgumentError, ArgumentValidator, parse_arguments
from .budget import ResultBudget
from .hooks import HookImpl, HookRunner
from .middleware import Middleware
from .policies import ToolScope
from .registry import (
    UNLIMITED,
    Availability,
    ToolEntry,
    ToolRegistry,
    acall_handler,
    as_text,
    async_handler,
    call_handler,
    handler_text,
)
from .toolcalls import ToolCall, ToolCallLike, ToolReply, read_tool_call, tool_reply
from .toolcontext import CURRENT, ToolContext

if TYPE_CHECKING:
    from .asyncbridge import CallerLoop

__all__ = ["AGENT_LOOP_TOOLS", "INTERACTIVE_TOOLS", "MAX_PARALLEL", "Dispatcher", "tool_error"]

log = logging.getLogger(__name__)

#: Tools that need the agent's own state or its user; the agent loop runs them, not the registry.
AGENT_LOOP_TOOLS = frozenset({"todo", "memory", "session_search", "delegate_task", "clarify"})
#: Tools that talk to the user: a batch that holds one never runs in parallel.
INTERACTIVE_TOOLS = frozenset({"clarify"})
MAX_PARALLEL = 8
#: Hooks that wrap a tool call; without any of them the call takes the short path.
TOOL_HOOKS = frozenset({"pre_tool_call", "post_tool_call", "transform_tool_result"})
#: Characters of one argument an approval question shows; a call shown cut is not approved as a whole.
SHOWN_ARGUMENT_CHARS = 2000
_AGENT_LOOP_ONLY = ("Tool '{}' is handled by the agent loop, which owns the state and the user it needs; it cannot be "
                    "dispatched through the tool registry")


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


class _Plan:
    """What every call of one tool needs and only changes with the tools, the hooks or the policy: its entry,
    its argument check, the context its handler sees, whether it must ask or run hooks, and why it is refused."""

    __slots__ = ("check", "checked", "context", "direct", "entry", "generation", "hook_generation", "hooked", "policy",
                 "refusal")

    def __init__(self, dispatcher: Dispatcher, entry: ToolEntry, generation: int, hook_generation: int,
                 policy: str) -> None:
        scope = dispatcher.scope
        self.entry = entry
        #: The registry's and the hooks' generations and the policy this plan was made for.
        self.generation = generation
        self.hook_generation = hook_generation
        self.policy = policy
        self.refusal = _AGENT_LOOP_ONLY.format(entry.name) if entry.name in AGENT_LOOP_TOOLS else scope.refusal(entry)
        #: Whether the tool has availability checks to run (else it is always available).
        self.checked = entry.has_checks
        #: The call needs tool hooks or an approval the policy asks for (middleware is looked at per call).
        self.hooked = not dispatcher.hooks.active.isdisjoint(TOOL_HOOKS) or scope.asks(entry)
        self.context = dispatcher.contexts(entry.plugin)
        #: The compiled argument check (a bound method: the cheapest thing to call).
        self.check = ArgumentValidator(entry.schema["parameters"]).__call__
        #: A call needs nothing but its availability, its argument check and its handler (unless middleware was
        #: added since).
        self.direct = self.refusal is None and not self.hooked


class Dispatcher:
    """Runs one tool call through arguments, hooks, middleware, the handler and the result budget."""

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
        self._plans_generation = -1
        self._async_handlers: weakref.WeakKeyDictionary[ToolEntry, Callable[..., Any] | None] = \
            weakref.WeakKeyDictionary()

    def scoped(self, scope: ToolScope, contexts: Callable[[str | None], ToolContext]) -> Dispatcher:
        """A dispatcher of the same tools, hooks and approvals that runs only what ``scope`` offers, its handlers
        seeing ``contexts``."""
        return Dispatcher(self.registry, self.hooks, self.middleware, self.budget, self.approvals, contexts, scope)

    def _plan(self, name: str) -> _Plan | None:
        """The plan of tool ``name`` (None when no such tool is registered), made again when the tools, the hooks
        or the policy changed since it was made."""
        generation = self.registry.generation
        if self._plans_generation != generation:
            self._plans = {}
            self._plans_generation = generation
        plan = self._plans.get(name)
        policy = self.scope.policy()
        if plan is not None and plan.hook_generation == self.hooks.generation and plan.policy == policy:
            return plan
        entry = self.registry.get(name)
        if entry is None:
            return None
        plan = self._plans[name] = _Plan(self, entry, generation, self.hooks.generation, policy)
        return plan

    # -- one call ----------------------------------------------------------------------------

    def handle_function_call(self, function_name: str, function_args: Any, task_id: str | None = None,
                             tool_call_id: str | None = None, session_id: str | None = None,
                             user_task: str | None = None, enabled_tools: Iterable[str] | None = None) -> str:
        """Run one tool call; always returns a string (``{"error": ...}`` JSON on any failure)."""
        plan = self._plans.get(function_name)
        if plan is None or not plan.direct or enabled_tools is not None or self.middleware \
                or plan.generation != self.registry.generation or plan.hook_generation != self.hooks.generation \
                or plan.policy != self.scope.policy():
            return self._handle(function_name, function_args, task_id, tool_call_id, session_id, user_task,
                                enabled_tools)
        # The short path, taken by most calls: a tool with nothing to check, ask or hook, its plan still current.
        if plan.checked:
            availability = self.registry.check(function_name)
            if not availability.available:
                return _unavailable(function_name, availability)
        try:
            args = plan.check(function_args if type(function_args) is dict else parse_arguments(function_args))
        except ArgumentError as exc:
            return _invalid(function_name, exc)
        return self._call_directly(plan, args, task_id, session_id, user_task)

    def _handle(self, function_name: str, function_args: Any, task_id: str | None, tool_call_id: str | None,
                session_id: str | None, user_task: str | None, enabled_tools: Iterable[str] | None) -> str:
        """:meth:`handle_function_call` the whole way: plan, checks, hooks, middleware, approval."""
        try:
            prepared = self._prepare(function_name, function_args, enabled_tools)
            if isinstance(prepared, str):
                return prepared
            plan, args = prepared
            if plan.hooked or self.middleware:
                context = {"task_id": task_id, "session_id": session_id, "tool_call_id": tool_call_id}
                return self._call_with_hooks(plan.entry, args, context, user_task)
        except Exception as exc:
            return _failed(function_name, exc)
        return self._call_directly(plan, args, task_id, session_id, user_task)

    def _call_directly(self, plan: _Plan, args: dict[str, Any], task_id: str | None, session_id: str | None,
                       user_task: str | None) -> str:
        """The handler of a call that needs no hook, middleware or approval, its result fitted to the budget."""
        entry = plan.entry
        token = CURRENT.set(plan.context)
        try:
            result = entry.handler(args, task_id=task_id, session_id=session_id, user_task=user_task)
            if type(result) is not str:
                result = handler_text(result)
        except Exception as exc:
            return _failed(entry.name, exc)
        finally:
            CURRENT.reset(token)
        limit = entry.max_result_size_chars
        if result.isascii() and (limit is UNLIMITED or len(result) <= (self.budget.per_tool if limit is None else
                                                                        limit)):
            return result
        try:
            return self._fit(entry, result)
        except Exception as exc:
            return _failed(entry.name, exc)

    def _prepare(self, function_name: str, function_args: Any,
                 enabled_tools: Iterable[str] | None) -> tuple[_Plan, dict[str, Any]] | str:
        """The tool's plan and its checked arguments, or the error that answers the call instead."""
        plan = self._plan(function_name)
        if plan is None:
            return tool_error(_AGENT_LOOP_ONLY.format(function_name)) if function_name in AGENT_LOOP_TOOLS else \
                self._unknown(function_name)
        if plan.refusal is not None:
            return tool_error(plan.refusal)
        if enabled_tools is not None and function_name not in enabled_tools:
            return tool_error(f"Tool '{function_name}' is not enabled for this conversation")
        if plan.checked:
            availability = self.registry.check(function_name)
            if not availability.available:
                return _unavailable(function_name, availability)
        try:
            return plan, plan.check(parse_arguments(function_args))
        except ArgumentError as exc:
            return _invalid(function_name, exc)

    async def ahandle_function_call(self, function_name: str, function_args: Any, task_id: str | None = None,
                                    tool_call_id: str | None = None, session_id: str | None = None,
                                    user_task: str | None = None, enabled_tools: Iterable[str] | None = None) -> str:
        """:meth:`handle_function_call` without blocking the running loop: an async handler is awaited on it, a
        synchronous one (and hooks and middleware) runs on a worker thread. Cancelling the awaiting task cancels
        the async handler; a synchronous one runs to its end and its result is dropped."""

        entry = self.registry.get(function_name)
        try:  # a tool this scope refuses is never imported: the sync path answers it
            function = None if entry is None or not self.scope.offers(entry) else await self._async_handler(entry)
            if function is None:
                from .asyncbridge import in_worker

                return await in_worker(self.handle_function_call, function_name, function_args, task_id,
                                       tool_call_id, session_id, user_task, enabled_tools)
            prepared = self._prepare(function_name, function_args, enabled_tools)
            if isinstance(prepared, str):
                return prepared
            plan, args = prepared
            entry = plan.entry
            if plan.hooked or self.middleware:
                return await self._acall_with_hooks(entry, args, task_id, tool_call_id, session_id, user_task)
            token = CURRENT.set(plan.context)
            try:
                result = function(args, task_id=task_id, session_id=session_id, user_task=user_task)
                if hasattr(result, "__await__"):
                    result = await result
            finally:
                CURRENT.reset(token)
            result = valid_text(result if type(result) is str else as_text(result))
            if self._fits(entry, result):
                return result
            from .asyncbridge import in_worker

            return await in_worker(self._fit, entry, result)
        except Exception as exc:
            return _failed(function_name, exc)

    async def _async_handler(self, entry: ToolEntry) -> Callable[..., Any] | None:
        """The entry's coroutine function (None for a synchronous handler); a lazy one is imported off the loop."""
        try:
            return self._async_handlers[entry]
        except KeyError:
            pass
        if entry.is_lazy:
            from .asyncbridge import in_worker

            function = await in_worker(async_handler, entry)
        else:
            function = async_handler(entry)
        self._async_handlers[entry] = function
        return function

    async def _acall_with_hooks(self, entry: ToolEntry, args: dict[str, Any], task_id: str | None,
                                tool_call_id: str | None, session_id: str | None, user_task: str | None) -> str:
        """The hook phases are synchronous and may wait (deadlines, approvals): they run exactly as in the sync
        path, on a worker thread, and only the async handler comes back to this loop to be awaited."""
        import asyncio

        from .asyncbridge import CallerLoop, in_worker

        context = {"task_id": task_id, "session_id": session_id, "tool_call_id": tool_call_id}
        loop = CallerLoop(asyncio.get_running_loop())
        try:
            return await in_worker(self._call_with_hooks, entry, args, context, user_task, _on_loop(loop))
        except asyncio.CancelledError:
            loop.cancel()
            raise

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
        close = difflib.get_close_matches(name, offered, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        return f"'{name}'" + (f": {why}" if why else "") + hint, close

    def _call_with_hooks(self, entry: ToolEntry, args: dict[str, Any], context: dict[str, Any],
                         user_task: str | None, call: Callable[..., str] = call_handler) -> str:
        name = entry.name
        trace: list[str] = []
        original_args = args
        if self.middleware:
            args = self._request_middleware(name, args, original_args, context, trace)
        status, error_type, error_message = "ok", None, None
        started = time.perf_counter()
        try:
            args = self._pre_tool_call(name, args, context, trace)
            approved = self._approve_by_policy(entry, args, context["session_id"])
        except _Blocked as blocked:
            status, error_type, error_message = "blocked", "Blocked", str(blocked)
            result = tool_error(str(blocked))
        else:
            try:
                with approved_call(name if approved else None, args):
                    result = self._fit(entry, self._execution_chain(entry, args, original_args, context, trace,
                                                                    user_task, call))
            except Exception as exc:
                status, error_type, error_message = "error", type(exc).__name__, str(exc)
                result = tool_error(f"Tool '{name}' failed: {error_type}: {exc}", error_type=error_type)
        observed = {**context, "tool_name": name, "args": args, "result": result,
                    "duration_ms": (time.perf_counter() - started) * 1000, "status": status,
                    "error_type": error_type, "error_message": error_message, "turn_id": None,
                    "api_request_id": None, "middleware_trace": trace}
        transformed = self.hooks.after_tool_call(observed)
        return result if transformed is None else transformed

    def _request_middleware(self, name: str, args: dict[str, Any], original: dict[str, Any],
                            context: dict[str, Any], trace: list[str]) -> dict[str, Any]:
        for plugin, callback in self.middleware.get("tool_request", ()):
            try:
                answer = callback(tool_name=name, args=args, original_args=original, **context)
            except Exception:
                log.exception("tool_request middleware of plugin %r raised; skipped", plugin)
                continue
            if isinstance(answer, dict) and isinstance(answer.get("args"), dict):
                args = answer["args"]
                trace.append(f"{plugin}:tool_request")
        return args

    def _pre_tool_call(self, name: str, args: dict[str, Any], context: dict[str, Any],
                       trace: list[str]) -> dict[str, Any]:
        """The arguments after every ``pre_tool_call`` answered; raises ``_Blocked``. One hand-off to a hook
        worker runs them all, unless one asks for approval (asked here, then the others run)."""
        kwargs = {**context, "tool_name": name, "args": args, "turn_id": None, "api_request_id": None,
                  "middleware_trace": trace}

        def answered(impl: HookImpl, answer: Any) -> bool:  # runs where the implementation ran
            if not isinstance(answer, dict):
                return False
            action = answer.get("action")
            if action == "modify" and isinstance(answer.get("args"), dict):
                kwargs["args"] = answer["args"]
                trace.append(f"{impl.plugin}:pre_tool_call")
            return action in ("block", "approve")

        start = 0
        while True:
            phase = self.hooks.run(("pre_tool_call",), kwargs, stop=answered, fail_closed=True, start=start)
            if phase.missed is not None:
                timeout = self.hooks.current_timeout() or 0
                why = (f": it is still running an earlier call that missed its {timeout:g} s deadline"
                       if phase.still_late else f" within {timeout:g} s")
                raise _Blocked(f"Blocked: the pre_tool_call hook of plugin '{phase.missed.plugin}' did not answer"
                               f"{why}")
            if not phase.stopped:
                return kwargs["args"]
            impl, answer = phase.results[-1]
            if answer.get("action") == "block":
                raise _Blocked(str(answer.get("message") or f"Blocked by plugin '{impl.plugin}'"))
            request = ApprovalRequest(message=str(answer.get("message") or f"Run tool '{name}'?"),
                                      rule_key=answer.get("rule_key"), tool_name=name, args=kwargs["args"],
                                      session_id=context["session_id"])
            if not self.approvals.ask(request):
                raise _Blocked(f"Blocked: not approved: {request.message}")
            start = phase.end

    def _approve_by_policy(self, entry: ToolEntry, args: dict[str, Any], session_id: str | None) -> bool:
        """Under the ``writes`` policy, ask before a tool that is not read-only (raises ``_Blocked`` when refused or
        unanswered). True when the user approved this very call now, having seen it whole."""
        if not self.scope.asks(entry):
            return False
        name = entry.name
        rule_key = f"tool:{name}"
        if self.approvals.is_approved(rule_key, session_id):
            return False  # approved for the session or always: nothing was asked about this call
        shown, whole = _shown_call(name, args)
        request = ApprovalRequest(
            message=f"The approval policy 'writes' asks before tools that may change things, and '{name}' is not "
                    f"read-only:\n    {shown}", rule_key=rule_key, tool_name=name, args=args, session_id=session_id)
        if not self.approvals.ask(request):
            raise _Blocked(f"Blocked by the approval policy 'writes': tool '{name}' may change things and was not "
                           "approved. Do not retry it; ask the user to approve it or to make the change themselves.")
        return whole

    def _execution_chain(self, entry: ToolEntry, args: dict[str, Any], original: dict[str, Any],
                         context: dict[str, Any], trace: list[str], user_task: str | None,
                         call_entry: Callable[..., str] = call_handler) -> str:
        """The ``tool_execution`` middleware around the handler, which ``call_entry(entry, args, **kw)`` runs."""
        tool_context = self.contexts(entry.plugin)

        def handler(call_args: dict[str, Any]) -> str:
            token = CURRENT.set(tool_context)
            try:
                return call_entry(entry, call_args, task_id=context["task_id"], session_id=context["session_id"],
                                  user_task=user_task)
            finally:
                CURRENT.reset(token)

        call: Callable[[dict[str, Any]], str] = handler
        for plugin, wrapper in reversed(self.middleware.get("tool_execution", ())):
            call = _wrap(wrapper, plugin, call, entry.name, original, context, trace)
        return call(args)

    # -- a batch of calls -----------------------------------------------------------------------

    def run_tool_calls(self, calls: Iterable[ToolCallLike], **context: Any) -> list[str]:
        """Run a model's tool calls, any provider's, as dicts or SDK objects; in parallel when safe; results in
        call order (a call that cannot be read is answered by an error in its place)."""
        _warn_if_on_a_loop("run_tool_calls")
        return self._run([read_tool_call(call) for call in calls], context)

    def answer_tool_calls(self, calls: Iterable[ToolCallLike], **context: Any) -> list[ToolReply]:
        """Run the calls as :meth:`run_tool_calls` does; each result as the reply item its provider expects."""
        _warn_if_on_a_loop("answer_tool_calls")
        parsed = [read_tool_call(call) for call in calls]
        return [tool_reply(call, result) for call, result in zip(parsed, self._run(parsed, context), strict=True)]

    async def arun_tool_calls(self, calls: Iterable[ToolCallLike], **context: Any) -> list[str]:
        """:meth:`run_tool_calls` without blocking the running loop (parallel-safe batches run concurrently)."""
        return await self._arun([read_tool_call(call) for call in calls], context)

    async def aanswer_tool_calls(self, calls: Iterable[ToolCallLike], **context: Any) -> list[ToolReply]:
        """:meth:`answer_tool_calls` without blocking the running loop."""
        parsed = [read_tool_call(call) for call in calls]
        return [tool_reply(call, result) for call, result in zip(parsed, await self._arun(parsed, context),
                                                                 strict=True)]

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
            if entry is not None and self.scope.asks(entry):
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


def _failed(function_name: str, exc: Exception) -> str:
    log.debug("tool %s failed", function_name, exc_info=True)
    return tool_error(f"Tool '{function_name}' failed: {type(exc).__name__}: {exc}", error_type=type(exc).__name__)


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
          original: dict[str, Any], context: dict[str, Any], trace: list[str]) -> Callable[[dict[str, Any]], str]:
    def call(args: dict[str, Any]) -> str:
        trace.append(f"{plugin}:tool_execution")
        result = wrapper(tool_name=name, args=args, original_args=original, next_call=inner, **context)
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)

    return call
