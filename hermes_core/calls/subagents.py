"""Sub-agents: a goal worked on by a model with a filtered view of the parent's tools; only a summary comes back.

A sub-agent's loop asks the model (the host's model callback, else the caller's, e.g. MCP sampling, else the
endpoint of ``delegation.base_url``) with its conversation and its view's tool definitions, answers the model's
tool calls with ``answer_tool_calls`` on that view (hooks, approvals and policies apply; an approval question
reaches the parent's user), and stops when the model replies without calling a tool or its turns run out.

Hermes Agent 0.19's rules hold: a sub-agent never gets :data:`DELEGATE_BLOCKED_TOOLS` (nor more tools than its
parent), sub-agents nest at most ``delegation.max_spawn_depth`` deep (1: a sub-agent cannot delegate), one batch
runs at most ``delegation.max_concurrent_children`` tasks side by side, and each gets an iteration budget.
"""

from __future__ import annotations

import contextvars
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Literal, Protocol

from ..config.model import DelegationConfig
from ..errors import DelegationError, NoAnswer
from ..tools.toolcalls import is_error_result
from ..workers.asyncbridge import WorkerThreads
from .asking import Asking, ModelCallback, ModelReply, ModelRequest, caller_callbacks

__all__ = ["DELEGATE_BLOCKED_TOOLS", "ROLES", "DelegationSettings", "SubAgentResult", "SubAgentTask", "SubAgents",
           "routed_models"]

log = logging.getLogger(__name__)

#: Tools a sub-agent never gets: no recursive delegation (unless an orchestrator may), no user, no shared memory,
#: no messages or scheduled work in the parent's name, no scripts (it reasons step by step).
DELEGATE_BLOCKED_TOOLS: Final = frozenset({"delegate_task", "clarify", "memory", "send_message", "execute_code",
                                           "cronjob"})
#: ``leaf`` sub-agents cannot delegate; ``orchestrator`` ones keep ``delegate_task`` within the depth limit.
ROLES: Final = ("leaf", "orchestrator")
#: The longest summary that goes back to the parent whole.
MAX_SUMMARY_CHARS: Final = 24_000
#: What a sub-agent's tools answer when one of them asks the user.
NO_USER: Final = "a sub-agent cannot ask the user; only its parent can"

#: ``delegation`` of config.yaml: the limits of sub-agents and their model endpoint.
DelegationSettings = DelegationConfig

#: How deep the running code is in the delegation tree (0: not in a sub-agent).
DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("hermes_delegation_depth", default=0)
#: Models chosen per task index by the host for the batch being started (``routed_models``).
_ROUTED: contextvars.ContextVar[Mapping[int, str] | None] = contextvars.ContextVar("hermes_routed_models",
                                                                                  default=None)
_WORKERS = WorkerThreads("hermes-subagent")

#: Reports progress: done, total, message.
Reporter = Callable[[float, "float | None", "str | None"], Any]


class ToolScopeLike(Protocol):
    """What sub-agents need of a runtime or a view (``ToolScopeLike``)."""

    @property
    def toolsets(self) -> Any: ...
    @property
    def dispatcher(self) -> Any: ...
    def select_tools(self, enabled_toolsets: Any = None, disabled_toolsets: Any = None
                     ) -> tuple[list[str], list[str]]: ...
    def filtered(self, tools: Any = None, *, policy: str | None = None) -> ToolScopeLike: ...
    def get_tool_definitions(self, *, quiet_mode: bool = False) -> list[dict[str, Any]]: ...
    def answer_tool_calls(self, calls: Any, **context: Any) -> list[Any]: ...


@dataclass(frozen=True)
class SubAgentTask:
    """One piece of work for a sub-agent."""

    #: What the sub-agent should accomplish, self-contained.
    goal: str
    #: Background it needs (paths, errors, constraints): it knows nothing of the parent's conversation.
    context: str | None = None
    #: Toolsets it may use, within the parent's tools (``None``: all of the parent's, less the blocked ones).
    toolsets: tuple[str, ...] | None = None
    role: Literal["leaf", "orchestrator"] | str = "leaf"
    #: The model it should ask, when the host routes tasks to models (a hint the model callback may ignore).
    model: str | None = None
    #: Tool names it may use, within those its toolsets give it (``None``: no further limit).
    tools: tuple[str, ...] | None = None
    #: The approval policy its calls run under, when stricter than the parent's (``None``: the parent's).
    policy: str | None = None


@dataclass(frozen=True)
class SubAgentResult:
    """What a sub-agent did: its summary, or why it has none."""

    task_index: int
    #: ``completed`` (it replied with a summary), ``failed`` (no summary), ``error`` or ``timeout``.
    status: Literal["completed", "failed", "error", "timeout"]
    summary: str | None
    #: Model requests it made.
    api_calls: int
    duration_seconds: float
    #: ``completed``, ``max_iterations`` (the budget ran out), ``error`` or ``timeout``.
    exit_reason: str
    model: str | None = None
    error: str | None = None
    #: Each tool call: ``{"tool", "args_bytes", "result_bytes", "status"}``.
    tool_trace: tuple[dict[str, Any], ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        """The result as ``delegate_task`` reports it (Hermes Agent's shape)."""
        data = asdict(self)
        data["tool_trace"] = list(self.tool_trace)
        return {key: value for key, value in data.items() if value is not None or key == "summary"}


class routed_models:  # (a class: entered around one batch)
    """While the block runs, the task at each index of the batch started there asks the model given for it (how a
    host routes tasks to models; Hermes Agent's delegate-routing plugin does it through ``tools.delegate_tool``)."""

    def __init__(self, models: Mapping[int, str]) -> None:
        self._models = dict(models)

    def __enter__(self) -> None:
        self._token = _ROUTED.set(self._models)

    def __exit__(self, *exc_info: object) -> None:
        _ROUTED.reset(self._token)


class SubAgents:
    """Runs sub-agents on the tools of one runtime or view (``ToolApi.delegate_batch``)."""

    def __init__(self, api: ToolScopeLike, asking: Asking, settings: DelegationConfig) -> None:
        self.api, self.asking, self.settings = api, asking, settings

    def run(self, tasks: Sequence[SubAgentTask | str], *, max_iterations: int | None = None,
            model: ModelCallback | None = None, session_id: str | None = None, task_id: str | None = None,
            progress: Reporter | None = None) -> list[SubAgentResult]:
        """Run one sub-agent per task, side by side, and wait for all of them; results in task order (see
        :meth:`start`)."""
        return self.start(tasks, max_iterations=max_iterations, model=model, session_id=session_id,
                          task_id=task_id, progress=progress)()

    def start(self, tasks: Sequence[SubAgentTask | str], *, max_iterations: int | None = None,
              model: ModelCallback | None = None, session_id: str | None = None, task_id: str | None = None,
              progress: Reporter | None = None) -> Callable[[], list[SubAgentResult]]:
        """Start one sub-agent per task, side by side; what waits for all of them (results in task order).

        Raises :class:`~hermes_core.errors.DelegationError` before starting any when a rule forbids it (depth,
        number of tasks, an unknown toolset or role) and :class:`~hermes_core.errors.NoAnswer` when no model can
        be asked. ``max_iterations`` may lower ``delegation.max_iterations``, never raise it.
        """
        settings = self.settings
        depth = DEPTH.get()
        if depth >= settings.max_spawn_depth:
            raise DelegationError(f"Delegation depth limit reached (depth={depth}, max_spawn_depth="
                                  f"{settings.max_spawn_depth}): this sub-agent cannot delegate. Raise "
                                  "delegation.max_spawn_depth in config.yaml if deeper nesting is required.")
        work = [SubAgentTask(task) if isinstance(task, str) else task for task in tasks]
        if not work:
            raise DelegationError("Provide either 'goal' (one task) or 'tasks' (a batch).")
        if len(work) > settings.max_concurrent_children:
            raise DelegationError(f"Too many tasks: {len(work)} given, but delegation.max_concurrent_children is "
                                  f"{settings.max_concurrent_children}; split them into several calls or raise it "
                                  "in config.yaml.")
        for index, task in enumerate(work):
            if not task.goal.strip():
                raise DelegationError(f"Task {index} is missing a 'goal'.")
            if task.role not in ROLES:
                raise DelegationError(f"Task {index} has role {task.role!r}; expected one of {', '.join(ROLES)}.")
        views = [self._view(task, depth) for task in work]
        callback = model or self.asking.model_callback()
        if isinstance(callback, str):
            raise NoAnswer(callback)
        budget = min(max_iterations or settings.max_iterations, settings.max_iterations)
        routed = _ROUTED.get() or {}
        children = [_Child(self, index, task, view, callback, budget, routed.get(index) or task.model, session_id,
                           f"{task_id or 'task'}:sub-{uuid.uuid4().hex[:8]}", depth + 1)
                    for index, (task, view) in enumerate(zip(work, views, strict=True))]
        running = [(child, _WORKERS.submit(contextvars.copy_context().run, child.run)) for child in children]
        return lambda: self._wait(running, progress)

    def _view(self, task: SubAgentTask, depth: int) -> ToolScopeLike:
        """The tools ``task``'s sub-agent gets: the parent's (or those of its toolsets), less the blocked ones."""
        names, unknown = self.api.select_tools(task.toolsets)
        if unknown:
            raise DelegationError(f"Unknown toolset{'s' if len(unknown) > 1 else ''} "
                                  f"{', '.join(repr(name) for name in unknown)} for a sub-agent; known: "
                                  f"{', '.join(self.api.toolsets.names())}")
        blocked = set(DELEGATE_BLOCKED_TOOLS)
        if task.role == "orchestrator" and self.settings.orchestrator_enabled \
                and depth + 1 < self.settings.max_spawn_depth:
            blocked.discard("delegate_task")
        names = [name for name in names if name not in blocked]
        if task.tools is not None:
            strange = sorted(set(task.tools) - set(names))
            if strange:
                raise DelegationError(f"Tool{'s' if len(strange) > 1 else ''} {', '.join(map(repr, strange))} "
                                      "not among the tools a sub-agent may get here")
            names = [name for name in names if name in task.tools]
        return self.api.filtered(names, policy=task.policy)

    def _wait(self, running: list[tuple[_Child, Any]], progress: Reporter | None) -> list[SubAgentResult]:
        timeout = self.settings.child_timeout_seconds
        deadline = None if timeout is None else time.monotonic() + timeout
        results: list[SubAgentResult] = []
        for finished, (child, future) in enumerate(running, 1):
            try:
                result = future.result(None if deadline is None else max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                child.stop.set()  # it ends after the turn it is in
                result = child.result("timeout", None, "timeout",
                                      f"the sub-agent ran longer than delegation.child_timeout_seconds ({timeout:g} s)")
            except Exception as exc:  # a bug of the loop itself: the others go on
                log.exception("sub-agent %d failed", child.index)
                result = child.result("error", None, "error", f"{type(exc).__name__}: {exc}")
            results.append(result)
            if progress is not None:
                mark = "✓" if result.status == "completed" else "✗"
                progress(finished, len(running), f"{mark} [{child.index + 1}/{len(running)}] {child.task.goal[:60]}")
        return results


class _Child:
    """One sub-agent's run: its conversation, its budget and what it did."""

    def __init__(self, owner: SubAgents, index: int, task: SubAgentTask, view: ToolScopeLike, model: ModelCallback,
                 budget: int, model_name: str | None, session_id: str | None, task_id: str, depth: int) -> None:
        self.owner, self.index, self.task, self.view, self.model = owner, index, task, view, model
        self.budget, self.model_name, self.session_id, self.task_id, self.depth = \
            budget, model_name, session_id, task_id, depth
        self.stop = threading.Event()
        self.started = time.monotonic()
        self.api_calls = 0
        self.trace: list[dict[str, Any]] = []
        self.answered_by: str | None = None

    def run(self) -> SubAgentResult:
        token = DEPTH.set(self.depth)
        self._notify("subagent_start", child_role=self.task.role, child_goal=self.task.goal)
        try:
            with caller_callbacks(user=NO_USER):
                result = self._loop()
        except NoAnswer as exc:
            result = self.result("error", None, "error", str(exc))
        finally:
            DEPTH.reset(token)
        self._notify("subagent_stop", child_role=self.task.role, child_summary=result.summary,
                     child_status=result.status, duration_ms=int(result.duration_seconds * 1000))
        return result

    def _loop(self) -> SubAgentResult:
        tools = tuple(self.view.get_tool_definitions(quiet_mode=True))
        messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt(self.task, self.depth,
                                                                                      self.owner.settings)},
                                          {"role": "user", "content": self.task.goal}]
        for _ in range(self.budget):
            if self.stop.is_set():
                return self.result("timeout", None, "timeout", "stopped: the delegation timed out")
            reply = self._ask(messages, tools)
            messages.append(reply.message())
            if not reply.tool_calls:
                return self._summary(reply.text, "completed")
            calls = [call.chat_completions() for call in reply.tool_calls]
            answers = self.view.answer_tool_calls(calls, task_id=self.task_id, session_id=self.session_id)
            for call, answer in zip(reply.tool_calls, answers, strict=True):
                content = str(answer.get("content", ""))
                arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
                self.trace.append({"tool": call.name, "args_bytes": len(arguments), "result_bytes": len(content),
                                   "status": "error" if is_error_result(content) else "ok"})
            messages.extend(dict(answer) for answer in answers)
        # the budget is spent: one last turn, without tools, for the summary
        messages.append({"role": "user", "content": "You have used all your tool-calling turns. Reply now with your "
                                                    "summary of what you did, found and could not finish."})
        return self._summary(self._ask(messages, ()).text, "max_iterations")

    def _ask(self, messages: list[dict[str, Any]], tools: tuple[dict[str, Any], ...]) -> ModelReply:
        request = ModelRequest(tuple(messages), tools, model=self.model_name, purpose="delegate_task",
                               session_id=self.session_id)
        self.api_calls += 1
        reply = self.owner.asking.ask_model(request, self.owner.settings.model_timeout, self.model)
        self.answered_by = reply.model or self.answered_by
        return reply

    def _summary(self, text: str, exit_reason: str) -> SubAgentResult:
        text = text.strip()
        if not text:
            return self.result("failed", None, exit_reason, "the sub-agent did not produce a summary")
        if len(text) > MAX_SUMMARY_CHARS:
            text = f"{text[:MAX_SUMMARY_CHARS]}\n[... summary cut: {len(text) - MAX_SUMMARY_CHARS} more characters]"
        return self.result("completed", text, exit_reason)

    def result(self, status: Literal["completed", "failed", "error", "timeout"], summary: str | None,
               exit_reason: str, error: str | None = None) -> SubAgentResult:
        return SubAgentResult(self.index, status, summary, self.api_calls,
                              round(time.monotonic() - self.started, 3), exit_reason,
                              self.answered_by or self.model_name, error, tuple(self.trace))

    def _notify(self, hook: str, **kwargs: Any) -> None:
        """Hermes Agent's ``subagent_start`` / ``subagent_stop`` hooks (observers: a failure is only logged)."""
        try:
            self.view.dispatcher.hooks.call(hook, parent_session_id=self.session_id, child_session_id=self.session_id,
                                            child_subagent_id=self.task_id, parent_turn_id="", **kwargs)
        except Exception:
            log.exception("%s observers failed", hook)


def system_prompt(task: SubAgentTask, depth: int, settings: DelegationConfig) -> str:
    """What a sub-agent is told before its goal: its task, its context, and how to report back."""
    parts = ["You are a focused sub-agent working on one delegated task.", "", f"YOUR TASK:\n{task.goal}"]
    if task.context and task.context.strip():
        parts.append(f"\nCONTEXT:\n{task.context}")
    parts.append("\nComplete the task with the tools available to you. Nobody will answer questions: decide for "
                 "yourself. When you are done, reply without calling a tool, with a short summary of what you did, "
                 "what you found, the files you created or changed, and any problem you met. Lead with the "
                 "outcome and prefer bullet points: your reply goes back to the agent that delegated the task.")
    if task.role == "orchestrator" and depth < settings.max_spawn_depth:
        parts.append(f"\nYou may delegate parts of your task with delegate_task (you are at depth {depth} of "
                     f"{settings.max_spawn_depth}); do simple steps yourself, and combine your workers' summaries "
                     "into yours.")
    return "\n".join(parts)


def settings_of(data: Mapping[str, Any] | None) -> DelegationConfig:
    """``delegation`` of config data as its model (defaults when absent)."""
    return DelegationConfig.model_validate(dict(data or {}))

