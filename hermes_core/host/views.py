"""The model-facing API over one tool scope — a ``Runtime``'s, or a filtered view's — and ``ToolView`` itself.

A filtered view (:meth:`ToolApi.filtered`) shares its runtime's plugins, hooks, approvals, results and MCP
sessions, and offers and dispatches only the tools its scope selects: for plan modes that may only look and
for sub-agents that get fewer tools than their parent. The parent is never changed by a view.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..calls.asking import Asking, ModelCallback
from ..calls.toolcontext import ToolContext
from ..tools.policies import Policy, ToolScope
from ..tools.registry import ToolRegistry
from ..tools.search import Deferral, ToolSearchSettings, bridge_entries, deferral_of, mark_native
from ..tools.toolsets import LEGACY_TOOLSETS, Toolsets

if TYPE_CHECKING:  # the call path is imported by the first call: listing tools needs none of it
    from ..calls.background import BackgroundRuns
    from ..calls.budget import ResultBudget
    from ..calls.dispatch import Dispatcher
    from ..calls.subagents import DelegationSettings, Reporter, SubAgentResult, SubAgentTask
    from ..state.agent import AgentState
    from ..tools.formats import DefinitionFormatter
    from ..tools.toolcalls import ToolCallLike, ToolReply

__all__ = ["ToolApi", "ToolView", "select_names"]

log = logging.getLogger(__name__)

_LEGACY_TOOL_NAMES = frozenset(tool for tools in LEGACY_TOOLSETS.values() for tool in tools)


def select_names(registry: ToolRegistry, toolsets: Toolsets, enabled_toolsets: Iterable[str] | None = None,
                 disabled_toolsets: Iterable[str] | None = None) -> tuple[list[str], list[str]]:
    """Registered tool names after enabling and then disabling toolsets (whatever a scope offers), and the
    unknown toolset names."""
    unknown: list[str] = []
    if enabled_toolsets is None:
        names = registry.names()
    else:
        names, unknown = toolsets.resolve_many(enabled_toolsets)
    if disabled_toolsets:
        removed, unknown_disabled = toolsets.resolve_many(disabled_toolsets)
        unknown += unknown_disabled
        names = [n for n in names if n not in set(removed)]
    return names, unknown


class ToolApi(ABC):
    """Definitions and every call path, sync and async, over the tools of :attr:`scope`."""

    registry: ToolRegistry
    toolsets: Toolsets
    scope: ToolScope
    formatter: DefinitionFormatter
    budget: ResultBudget
    #: The runtime's own agent state (session store, memory), where hosts and adapters record calls.
    agent_state: AgentState
    #: Who answers questions to the user and to a model, and hears progress (the runtime's, shared by its views).
    asking: Asking

    @property
    @abstractmethod
    def dispatcher(self) -> Dispatcher:
        """What runs the calls of this scope (made by the first call: listing tools imports no dispatch code)."""

    @property
    def policy(self) -> Policy:
        """The approval policy calls run under: ``dangerous``, ``writes`` or ``read-only``."""
        return self.scope.policy()

    def filtered(self, tools: Iterable[str] | None = None, *, toolsets: Iterable[str] | None = None,
                 read_only: bool = False, policy: str | None = None) -> ToolView:
        """A view that offers and dispatches only some of these tools: those named in ``tools`` or belonging to
        ``toolsets`` (all of them when both are None), only read-only ones with ``read_only``, under ``policy``
        when that is stricter than this one's. A view of a view narrows it further.

        The view shares this runtime's plugins, hooks, approvals and MCP sessions; this object is unchanged.
        An unknown toolset raises :class:`~hermes_core.errors.UnknownToolsetError`, an unknown policy
        :class:`~hermes_core.errors.PolicyError`.
        """
        return ToolView(self, self.scope.narrowed(tools, toolsets, read_only, policy))

    @abstractmethod
    def tool_context(self, plugin_id: str | None) -> ToolContext:
        """What the tool handlers of ``plugin_id`` see while they run here."""

    @abstractmethod
    def list_new_mcp_servers(self) -> None:
        """Connect, once and within its ``connect_timeout``, each MCP server whose tools were never listed."""

    @property
    @abstractmethod
    def background_runs(self) -> BackgroundRuns:
        """The background sub-agent runs of the runtime's home (shared by its views)."""

    @abstractmethod
    def run_command(self, name: str, raw_args: str = "", *, scope: ToolApi | None = None) -> str | None:
        """Run a plugin's slash command ``/name`` (with ``scope``: as the model does, within that scope)."""

    @abstractmethod
    def delegation_settings(self) -> DelegationSettings:
        """``delegation`` of the runtime's config: the limits of sub-agents and the model endpoint."""

    def select_tools(self, enabled_toolsets: Iterable[str] | None = None,
                     disabled_toolsets: Iterable[str] | None = None) -> tuple[list[str], list[str]]:
        """Tool names offered here after enabling and then disabling toolsets, and the unknown toolset names."""
        names, unknown = select_names(self.registry, self.toolsets, enabled_toolsets, disabled_toolsets)
        return self.scope.names(names), unknown

    def available_tools(self) -> list[str]:
        """Names of the tools offered here that are available now."""
        return self.registry.get_available_tool_names(self.scope.names())

    @abstractmethod
    def tool_search_settings(self) -> tuple[ToolSearchSettings, int | None]:
        """``tools.tool_search`` of the runtime's config, and the model's context length when it says
        (``model.context_length``, as Hermes Agent's config.yaml writes it)."""

    def get_tool_definitions(self, enabled_toolsets: Iterable[str] | None = None,
                             disabled_toolsets: Iterable[str] | None = None,
                             quiet_mode: bool = False, *, format: str = "openai",
                             strict: bool = False, defer: str = "bridge",
                             context_length: int | None = None) -> list[dict[str, Any]]:
        """Definitions of the available tools selected by the toolset filters, in ``format``:

        - ``"openai"``: Chat Completions, ``{"type": "function", "function": {name, description, parameters}}``;
        - ``"openai-responses"``: ``{"type": "function", name, description, parameters, strict}``;
        - ``"anthropic"``: ``{name, description, input_schema}``;
        - ``"gemini"``: ``{name, description, parameters_json_schema}`` (a ``FunctionDeclaration``);
        - ``"mcp"``: ``{name, description, inputSchema, annotations}`` (an ``mcp.types.Tool``; ``annotations``
          holds the hints the tool declares, ``readOnlyHint`` and the like, and is left out when it declares none).

        ``strict=True`` (the OpenAI formats) converts each schema to OpenAI strict mode; a tool whose schema
        cannot be made strict is left out with a warning naming it. An unknown format raises ``ValueError``.
        Only the tools this runtime or view offers are defined (policy ``read-only``: only read-only ones).
        An MCP server never listed yet is connected first, once, within its ``connect_timeout``.

        Tool search (``tools.tool_search``, see docs/toolsets.md): when it activates, the deferrable tools are
        left out and the bridge tools (``tool_search``, ``tool_describe``, ``tool_call``) stand in for them
        (``defer="bridge"``); with ``defer="native"`` (``format="anthropic"`` only) they are kept, marked
        ``defer_loading``, beside Anthropic's tool-search tool; ``defer="none"`` never defers.
        ``context_length`` (else ``model.context_length`` of the config) sizes the ``auto`` threshold.
        """
        from .schema_patches import patch_definitions

        if defer not in ("bridge", "native", "none"):
            raise ValueError(f"defer must be 'bridge', 'native' or 'none', not {defer!r}")
        if defer == "native" and format != "anthropic":
            raise ValueError(f"defer='native' is Anthropic's (format='anthropic'), not {format!r}'s")
        self.list_new_mcp_servers()
        names, unknown = self.select_tools(enabled_toolsets, disabled_toolsets)
        if unknown and not quiet_mode:
            known = ", ".join(self.toolsets.names())
            log.warning("unknown toolset%s %s (known: %s)", "s" if len(unknown) > 1 else "",
                        ", ".join(repr(u) for u in unknown), known)
        available = self.registry.get_available_tool_names(names)
        deferral = self._deferral(available, context_length) if defer != "none" else None
        shown = deferral.kept if deferral is not None and defer == "bridge" else available
        entries = [entry for name in shown if (entry := self.registry.get(name)) is not None]
        definitions = patch_definitions([entry.definition() for entry in entries], available,
                                        _LEGACY_TOOL_NAMES.union(self.registry.names()))
        if deferral is not None and defer == "bridge":
            bridge = bridge_entries(len(deferral.deferred))
            definitions += [entry.definition() for entry in bridge]
            entries += bridge
        rendered = self.formatter.render(definitions, entries, format, strict)
        return mark_native(rendered, deferral.deferred) if deferral is not None and defer == "native" else rendered

    def _deferral(self, available: list[str], context_length: int | None) -> Deferral | None:
        """Which of the ``available`` tools tool search defers now, if it activates."""
        settings, configured = self.tool_search_settings()
        registry = self.registry

        def definition(name: str) -> dict[str, Any]:
            entry = registry.get(name)
            return entry.definition() if entry is not None else {}

        deferral = deferral_of(available, definition, settings, context_length or configured)
        if deferral is not None:
            log.info("tool search: %d tools deferred behind tool_search/tool_describe/tool_call, %d kept",
                     len(deferral.deferred), len(deferral.kept))
        return deferral

    def handle_function_call(self, function_name: str, function_args: Any, task_id: str | None = None,
                             tool_call_id: str | None = None, session_id: str | None = None,
                             user_task: str | None = None, enabled_tools: Iterable[str] | None = None) -> str:
        """Run one tool call through hooks and the handler; always returns a string (``{"error": ...}`` JSON on
        any failure). ``function_args`` is a dict or the JSON text the model sent."""
        return self.dispatcher.handle_function_call(function_name, function_args, task_id, tool_call_id,
                                                    session_id, user_task, enabled_tools)

    async def ahandle_function_call(self, function_name: str, function_args: Any, task_id: str | None = None,
                                    tool_call_id: str | None = None, session_id: str | None = None,
                                    user_task: str | None = None, enabled_tools: Iterable[str] | None = None) -> str:
        """``handle_function_call`` for async code: never blocks the running event loop (async handlers are
        awaited on it, synchronous ones run on worker threads); cancelling the awaiting task cancels an async
        handler, while a synchronous one runs to its end and its result is dropped."""
        return await self.dispatcher.ahandle_function_call(function_name, function_args, task_id, tool_call_id,
                                                           session_id, user_task, enabled_tools)

    def run_tool_calls(self, calls: Iterable[ToolCallLike], **context: Any) -> list[str]:
        """Run a model's tool calls (parallel when safe); one result string per call, in call order.

        ``calls`` may mix OpenAI Chat Completions tool calls, OpenAI Responses ``function_call`` items, Anthropic
        ``tool_use`` blocks, Gemini function calls and ``{"name", "arguments"}`` dicts, each as a dict or as the
        provider SDK's object; a call that cannot be read is answered by an error in its place. ``context``:
        ``task_id``, ``session_id``, ``user_task``, ``enabled_tools``.
        """
        return self.dispatcher.run_tool_calls(calls, **context)

    def answer_tool_calls(self, calls: Iterable[ToolCallLike], **context: Any) -> list[ToolReply]:
        """Run the calls as ``run_tool_calls`` does and return, in call order, the reply each provider expects:
        a Chat Completions ``tool`` message, a Responses ``function_call_output`` item, an Anthropic ``tool_result``
        block or a Gemini ``function_response`` Part."""
        return self.dispatcher.answer_tool_calls(calls, **context)

    async def arun_tool_calls(self, calls: Iterable[ToolCallLike], **context: Any) -> list[str]:
        """``run_tool_calls`` for async code (parallel-safe batches run concurrently)."""
        return await self.dispatcher.arun_tool_calls(calls, **context)

    async def aanswer_tool_calls(self, calls: Iterable[ToolCallLike], **context: Any) -> list[ToolReply]:
        """``answer_tool_calls`` for async code."""
        return await self.dispatcher.aanswer_tool_calls(calls, **context)

    def enforce_turn_budget(self, results: list[str], budget: int | None = None) -> list[str]:
        """Keep one turn's results under the turn budget by saving the largest first."""
        return self.budget.enforce_turn_budget(results, budget)

    # -- sub-agents ------------------------------------------------------------------------------

    def delegate(self, goal: str, *, context: str | None = None, toolsets: Iterable[str] | None = None,
                 role: str = "leaf", max_iterations: int | None = None, model: ModelCallback | None = None,
                 session_id: str | None = None, task_id: str | None = None) -> SubAgentResult:
        """Run one sub-agent on ``goal`` and wait for its summary: a model (``model``, else the host's model
        callback, the caller's, the endpoint of ``delegation.base_url``) works on it with these tools, or those of
        ``toolsets`` among them, less ``DELEGATE_BLOCKED_TOOLS``, for at most ``max_iterations`` turns. Its tool
        calls run through this scope's call path (hooks, approvals, policies); it cannot ask the user.

        Raises :class:`~hermes_core.errors.DelegationError` when a rule forbids it (the depth limit, an unknown
        toolset) and :class:`~hermes_core.errors.NoAnswer` when no model can be asked; a sub-agent that fails
        is a result with ``status`` ``error`` and the reason.
        """
        from ..calls.subagents import SubAgentTask

        task = SubAgentTask(goal, context, None if toolsets is None else tuple(toolsets), role)
        return self.delegate_batch([task], max_iterations=max_iterations, model=model, session_id=session_id,
                                   task_id=task_id)[0]

    def delegate_batch(self, tasks: Iterable[SubAgentTask | str], *, max_iterations: int | None = None,
                       model: ModelCallback | None = None, session_id: str | None = None,
                       task_id: str | None = None, progress: Reporter | None = None) -> list[SubAgentResult]:
        """Run one sub-agent per task side by side (at most ``delegation.max_concurrent_children``) and wait for
        all of them; results in task order (see :meth:`delegate`). ``progress(done, total, message)`` hears each
        one finish."""
        from ..calls.subagents import SubAgents

        return SubAgents(self, self.asking, self.delegation_settings()).run(
            list(tasks), max_iterations=max_iterations, model=model, session_id=session_id, task_id=task_id,
            progress=progress)

    def delegate_in_background(self, tasks: Iterable[SubAgentTask | str], *, max_iterations: int | None = None,
                               model: ModelCallback | None = None, session_id: str | None = None,
                               task_id: str | None = None) -> str:
        """Start one sub-agent per task (see :meth:`delegate_batch`) and return the run's id at once: the
        completion is kept under the home and delivered once (``background_runs``). Rule violations raise
        before anything starts, as in :meth:`delegate_batch`."""
        from ..calls.subagents import SubAgents, SubAgentTask

        work = [SubAgentTask(task) if isinstance(task, str) else task for task in tasks]
        runs = self.background_runs
        runs.recover()
        wait = SubAgents(self, self.asking, self.delegation_settings()).start(
            work, max_iterations=max_iterations, model=model, session_id=session_id, task_id=task_id)
        described: dict[str, Any] = {"goals": [task.goal for task in work]} if len(work) > 1 \
            else {"goal": work[0].goal}
        described |= {"context": work[0].context, "toolsets": list(work[0].toolsets or ()) or None,
                      "role": work[0].role}
        return runs.start(lambda: [result.as_dict() for result in wait()], described, session_id)


class ToolView(ToolApi):
    """A filtered view of a runtime's tools (made by :meth:`Runtime.filtered`): its own scope and dispatcher over
    the runtime's registry, hooks, middleware, approvals and result budget.

    Tool handlers that call other tools (``tool_context().dispatch``, ``ctx.dispatch_tool``) stay inside the view,
    and ``tool_context().available_tools()`` lists the view's tools.
    """

    def __init__(self, parent: ToolApi, scope: ToolScope) -> None:
        #: The runtime, or the view, this view was made from.
        self.parent = parent
        self.scope = scope
        self.registry = parent.registry
        self.toolsets = parent.toolsets
        self.formatter = parent.formatter
        self.budget = parent.budget
        self.agent_state = parent.agent_state
        self.asking = parent.asking
        self._tool_contexts: dict[str | None, ToolContext] = {}

    @functools.cached_property
    def dispatcher(self) -> Dispatcher:
        """The parent's dispatcher, scoped to this view."""
        return self.parent.dispatcher.scoped(self.scope, self.tool_context)

    def tool_context(self, plugin_id: str | None) -> ToolContext:
        """The runtime's context for ``plugin_id``'s handlers (its settings and per-runtime state), dispatching
        and listing tools through this view."""
        context = self._tool_contexts.get(plugin_id)
        if context is None:
            context = self._tool_contexts.setdefault(plugin_id, dataclasses.replace(
                self.parent.tool_context(plugin_id), _dispatch=self.handle_function_call,
                _available_tools=self.available_tools, _delegate=self.delegate_batch,
                _background=self.delegate_in_background,
                _run_command=lambda name, raw_args: self.run_command(name, raw_args)))
        return context

    @property
    def background_runs(self) -> BackgroundRuns:
        """The runtime's."""
        return self.parent.background_runs

    def run_command(self, name: str, raw_args: str = "", *, scope: ToolApi | None = None) -> str | None:
        """The runtime's command ``/name``, its tool calls within this view (see ``Runtime.run_command``)."""
        return self.parent.run_command(name, raw_args, scope=scope or self)

    def list_new_mcp_servers(self) -> None:
        """The runtime's MCP servers are the view's."""
        self.parent.list_new_mcp_servers()

    def delegation_settings(self) -> DelegationSettings:
        """The runtime's."""
        return self.parent.delegation_settings()

    def tool_search_settings(self) -> tuple[ToolSearchSettings, int | None]:
        """The runtime's."""
        return self.parent.tool_search_settings()

    def __repr__(self) -> str:
        return f"<ToolView offering {len(self.scope.names())} tools, policy {self.policy!r}>"
