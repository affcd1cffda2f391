"""``Runtime``: the composition root — one home, its plugins, registry, hooks, approvals and MCP manager."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .backends.base import BackendContribution, BackendSetup, ExecutionBackend, ExecutionBackends
from .calls.approval import ApprovalCallback, ApprovalRequest, Approvals
from .calls.asking import Asking, ModelCallback, UserCallback
from .calls.budget import ResultBudget
from .calls.hooks import HookRunner
from .calls.sessions import session
from .calls.toolcontext import ToolContext, current_tool_context
from .config.data import override_granted, plugin_settings
from .config.home import HermesHome
from .host.views import ToolApi
from .plugins import compat
from .plugins.cache import DiscoveryCache
from .plugins.context import PluginContext, normalize_command_name
from .plugins.contributions import Contributions
from .plugins.discovery import PluginCandidate, Source, candidate_from_folder, discover, installed_entry_points
from .plugins.loader import LoadResult, declares_only, load_declared, load_plugin
from .plugins.records import PluginRecord
from .plugins.selection import PluginSelection, SelectionPolicy, select, truthy
from .state.agent import AgentState
from .tools.formats import DefinitionFormatter
from .tools.policies import ToolScope, check_policy
from .tools.registry import ToolRegistry
from .tools.search import ToolSearchSettings
from .tools.toolsets import Toolsets
from .workers.interop import INTEROP

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from .calls.background import BackgroundRuns, CompletionCallback
    from .calls.dispatch import Dispatcher
    from .calls.endpoint import OpenAIEndpoint
    from .calls.progress import ProgressCallback
    from .checkpoints.turns import Checkpoints
    from .config.model import DelegationConfig, HermesConfig
    from .cron import CronScheduler
    from .mcp.client import McpManager
    from .skills.catalog import SkillCatalog
    from .skills.sources import SkillSource
    from .state.memory import MemoryFiles
    from .state.providers import MemoryProviders
    from .state.store import SessionStore
    from .state.turns import Turn
    from .tools.toolcalls import ToolCallLike, ToolReply

__all__ = [
    "Runtime",
    "aanswer_tool_calls",
    "ahandle_function_call",
    "answer_tool_calls",
    "arun_tool_calls",
    "default_runtime",
    "enforce_turn_budget",
    "get_tool_definitions",
    "handle_function_call",
    "reset_default_runtime",
    "resolve_toolset",
    "run_tool_calls",
]

log = logging.getLogger(__name__)


class Runtime(ToolApi):
    """Everything one agent's tool layer needs, read from and written to one home.

    Several runtimes live side by side in one process: each has its own home (config, user plugins,
    cache, results, logs), registry, hooks, approvals and MCP sessions, and nothing below it reads
    ``HERMES_HOME`` or another global.

    - ``home``: the home folder (default ``$HERMES_HOME``, else ``~/.hermes``).
    - ``cwd``: the project whose ``.hermes/plugins/`` is a source when project plugins are enabled
      (default: the working directory when plugins are loaded).
    - ``workspace``: where file tools work and commands start (default ``$HERMES_WORKSPACE``, else the
      working directory at creation).
    - ``entry_points``: the pip plugins to discover, instead of the installed distributions' entry
      points (``()`` for none) — for tests and embedders that decide what is discovered.
    - ``environ``: where ``HERMES_LOAD_PLUGINS``, ``HERMES_SAFE_MODE``, ``HERMES_ENABLE_PROJECT_PLUGINS``,
      ``HERMES_NO_CACHE`` and ``HERMES_PLUGINS_DEBUG`` are read (default ``os.environ``).
    - ``policy``: the approval policy, ``dangerous``, ``writes`` or ``read-only`` (default: ``approvals.policy``
      of the config, read when the runtime first needs it).
    """

    def __init__(self, home: Path | str | HermesHome | None = None, cwd: Path | None = None, *,
                 workspace: Path | str | None = None, entry_points: Iterable[EntryPoint] | None = None,
                 environ: Mapping[str, str] | None = None, policy: str | None = None) -> None:
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.home = home if isinstance(home, HermesHome) else HermesHome(Path(home)) if home else HermesHome.from_env()
        self.cwd = cwd
        self.workspace = Path(workspace or self.environ.get("HERMES_WORKSPACE") or os.getcwd()).expanduser().absolute()
        self._entry_points = None if entry_points is None else list(entry_points)
        self.registry = ToolRegistry(check_timeout=self._load_timeout(), tool_contexts=self.tool_context)
        self.toolsets = Toolsets(self.registry)
        self.hooks = HookRunner(lambda: self._config_data()["plugins"]["hook_timeout"],
                                lambda: self._config_data()["plugins"]["post_hooks"] == "background",
                                lambda: self._config_data()["plugins"]["max_abandoned_hooks"])
        self.contributions = Contributions(self.registry, self.toolsets, self.hooks)
        self.middleware = self.contributions.middleware
        self.commands = self.contributions.commands
        self.cli_commands = self.contributions.cli_commands
        self.skills = self.contributions.skills
        self.web_search_providers = self.contributions.web_search_providers
        self.approvals = Approvals(self.home.config, self.home.edit_config, observe=self.hooks.call)
        self.approvals.judge = self._smart_verdict
        #: Who answers a call's questions to the user and to a model, and hears its progress.
        self.asking = Asking(self._model_endpoint, self._user_timeout)
        self._endpoint: tuple[Any, OpenAIEndpoint | str] | None = None
        self.contributions.backends["local"] = BackendContribution(
            "local", _local_backend, None, "Runs commands on this machine with bash, each in its own session.")
        #: Where ``terminal``, ``process`` and ``execute_code`` run commands, per task.
        self.backends = ExecutionBackends(self.contributions.backends, lambda: self.config.terminal,
                                          self.workspace, self.home.root)
        self.plugins: list[PluginRecord] = []
        #: Where ``ctx.inject_message(content, role)`` goes; the agent loop sets it.
        self.message_sink: Callable[[str, str], None] | None = None
        self.mcp: McpManager | None = None
        self._loaded = False
        self._load_lock = threading.Lock()
        self._tool_contexts: dict[str | None, ToolContext] = {}
        self._watching_sessions = False
        self._sessions_lock = threading.Lock()
        self._plugin_contexts: list[PluginContext] = []
        #: What reload_plugins compares: each plugin's fingerprint, or a declared-only plugin's candidate until one
        #: of its tools is used.
        self._fingerprints: dict[str, tuple[object, ...] | PluginCandidate] = {}
        #: The declared-only plugins loaded without a context: the candidate, and what undoes its registrations.
        self._declared: dict[str, tuple[PluginCandidate, Callable[[], None]]] = {}
        tool_output = self._config_data()["tool_output"]
        self.budget = ResultBudget(self.home.results_dir, tool_output["max_result_size_chars"],
                                   tool_output["turn_budget_chars"], tool_output["max_media_bytes"],
                                   (tool_output["media_keep_hours"], tool_output["media_keep_bytes"]))
        #: The tools this runtime offers and dispatches (all of them, unless the policy is ``read-only``).
        self.scope = ToolScope(self.registry, self.toolsets, None if policy is None else check_policy(policy),
                               lambda: self._config_data()["approvals"]["policy"])
        self._dispatcher_lock = threading.Lock()
        self.formatter = DefinitionFormatter()
        #: The agent's own state: the session store, persistent memory and memory providers of this home.
        self.agent_state = AgentState(self.home.root, self._config_data, self.contributions.memory_providers)

    @functools.cached_property
    def dispatcher(self) -> Dispatcher:
        """What runs this runtime's tool calls, made by the first call (listing plugins and tools imports no
        dispatch code)."""
        with self._dispatcher_lock:  # one dispatcher, however many threads make the first call at once
            if "dispatcher" not in self.__dict__:
                from .calls.bridge import ToolBridge
                from .calls.dispatch import Dispatcher

                config = self._config_data()
                kind = _traced_dispatcher() if config["observability"]["otel"] else Dispatcher
                made = kind(self.registry, self.hooks, self.middleware, self.budget, self.approvals,
                            self.tool_context, self.scope, self.why_missing,
                            lambda: self._config_data()["tools"]["call_timeout"])
                made.recorder = self.agent_state.record_calls
                # read once, as the policy is: off, no step of any plan asks about checkpoints
                made.checkpoints = self.checkpoints if config["checkpoints"]["enabled"] else None
                made.bridge = ToolBridge(self.registry, lambda: self.tool_search_settings()[0])
                made.deliverer = self.background_runs.deliver_into
                made.error_hint = self._error_hint
                self.__dict__["dispatcher"] = made
            dispatcher: Dispatcher = self.__dict__["dispatcher"]
            return dispatcher

    @property
    def config(self) -> HermesConfig:
        """``config.yaml`` of this runtime's home (re-read when the file changes)."""
        return self.home.config()

    @functools.cached_property
    def checkpoints(self) -> Checkpoints:
        """The workspace's checkpoints (``checkpoints:`` in config.yaml): taken before file-changing calls when on,
        and listed, compared and restored on request."""
        from .checkpoints.turns import Checkpoints  # off the start-up path: only checkpoints need it

        return Checkpoints(self.home.checkpoints_dir, self.workspace, lambda: self.config.checkpoints)

    def _config_data(self) -> dict[str, Any]:
        """The config as plain data: what start-up reads, without building the pydantic models (from the
        home's cache unless ``HERMES_NO_CACHE`` is set)."""
        if truthy(self.environ.get("HERMES_NO_CACHE")):
            return self.config.model_dump(mode="json")
        return self.home.config_data()

    def _smart_verdict(self, request: ApprovalRequest) -> str:
        """``approvals.mode: smart``: a model's verdict on ``request`` (see ``calls/smartapproval.py``)."""
        from .calls.smartapproval import SmartJudge

        return SmartJudge(self.asking, self._config_data)(request)

    def _error_hint(self) -> str | None:
        """``tools.error_hint`` as the hint it asks for."""
        from .calls.errorhints import hint_of

        return hint_of((self._config_data().get("tools") or {}).get("error_hint"))

    def _load_timeout(self) -> float | None:
        """``plugins.load_timeout`` (``None`` for 0: no limit)."""
        return self._config_data()["plugins"]["load_timeout"] or None

    def set_approval_callback(self, callback: ApprovalCallback | None) -> ApprovalCallback | None:
        """Answer this runtime's approval requests with ``callback`` (``None``: the process-wide one)."""
        return self.approvals.set_callback(callback)

    def set_user_callback(self, callback: UserCallback | None) -> UserCallback | None:
        """Answer the questions this runtime's tools ask the user (``clarify``, ``ctx.ask_user``) with ``callback``:
        ``callback(UserQuestion)`` returns the answer text, the list of choices picked, a ``UserAnswer``, or
        ``None`` when the user declined (sync or async). ``None`` removes it: such questions then fail at once,
        saying nobody can answer. Returns the previous callback."""
        return self.asking.set_user_callback(callback)

    def set_model_callback(self, callback: ModelCallback | None) -> ModelCallback | None:
        """Answer the model requests of this runtime's tools (``delegate_task``'s sub-agents, ``ctx.ask_model``)
        with ``callback``: ``callback(ModelRequest)`` returns a ``ModelReply``, a string or a provider's response
        (sync or async). It comes before an MCP client's sampling and the ``delegation.base_url`` endpoint.
        Returns the previous callback."""
        return self.asking.set_model_callback(callback)

    def set_progress_callback(self, callback: ProgressCallback | None) -> ProgressCallback | None:
        """Tell ``callback(Progress)`` how far this runtime's long calls got (``terminal``'s output lines,
        ``delegate_task``'s finished sub-agents...). Returns the previous callback."""
        return self.asking.set_progress_callback(callback)

    def set_subagent_callback(self, callback: CompletionCallback | None) -> CompletionCallback | None:
        """Hand each finished background sub-agent run to ``callback(completion)`` as it finishes (then the
        session does not get it again); ``None`` leaves completions to the session's next ``answer_tool_calls``
        or ``subagent_status``. Returns the previous callback."""
        runs = self.background_runs
        previous, runs.callback = runs.callback, callback
        return previous

    @functools.cached_property
    def background_runs(self) -> BackgroundRuns:
        """The background sub-agent runs of this home (``state.db``), read on first use."""
        from .calls.background import BackgroundRuns

        return BackgroundRuns(self.home.root / "state.db", lambda: self.delegation_settings().max_concurrent_children)

    def delegation_settings(self) -> DelegationConfig:
        """``delegation`` of the config: sub-agents' limits and the model endpoint."""
        from .calls.subagents import settings_of

        return settings_of(self._config_data().get("delegation"))

    def _user_timeout(self) -> float:
        """How long a question waits for the user: ``agent.clarify_timeout`` (Hermes Agent's setting), bounded."""
        from .calls.asking import user_timeout

        agent = self._config_data().get("agent")
        return user_timeout(agent.get("clarify_timeout") if isinstance(agent, dict) else None)

    def tool_search_settings(self) -> tuple[ToolSearchSettings, int | None]:
        """``tools.tool_search`` of the config, and ``model.context_length`` when it is a positive integer."""
        data = self._config_data()
        tools, model = data.get("tools"), data.get("model")
        settings = ToolSearchSettings.of(tools.get("tool_search") if isinstance(tools, Mapping) else None)
        length = model.get("context_length") if isinstance(model, Mapping) else None
        return settings, length if type(length) is int and length > 0 else None

    def _model_endpoint(self) -> ModelCallback | str:
        """The endpoint ``delegation`` configures (one client per setting), or why there is none."""
        from .calls.endpoint import configured_endpoint

        settings = self.delegation_settings()
        key = (settings.base_url, settings.model, settings.api_key_env, settings.model_timeout)
        cached = self._endpoint
        if cached is None or cached[0] != key:
            cached = self._endpoint = (key, configured_endpoint(settings, self.environ))
        return cached[1]

    def set_policy(self, policy: str | None) -> None:
        """Run this runtime's calls under ``policy`` from now on (``None``: ``approvals.policy`` of the config, read
        again). Its filtered views follow, each staying at least as strict as it was made."""
        self.scope.own_policy = None if policy is None else check_policy(policy)

    # -- plugins -------------------------------------------------------------------------------

    def load_plugins(self, *, for_tool: str | None = None) -> list[PluginRecord]:
        """Discover, select and load every plugin once; later calls return the same records.

        ``for_tool``: load now only what a call of that tool needs (the plugins that declare it, and every plugin
        that runs code or contributes anything but declared tools); the rest is loaded, in order, by the first
        lookup of the registry that could need it (``hermes tools call`` of one tool among thousands)."""
        with self._load_lock:
            if not self._loaded:
                self._loaded = True
                config = self._config_data()
                selections = select(self.discover(), SelectionPolicy.of(config, self.environ))
                # installed distributions first: a plugin folder cannot claim a tool name before them
                timeout = config["plugins"]["load_timeout"] or None  # plugins.load_timeout; 0: no limit
                ordered = [s for s in sorted(selections, key=_load_order) if s.verdict == "selected"]
                later = _not_needed_for(ordered, for_tool) if for_tool is not None else []
                skipped = {id(s) for s in later}
                loads = {id(s): self._load(s.candidate, timeout) for s in ordered if id(s) not in skipped}
                if later and not _declared_names(later).isdisjoint(self.registry.names()):
                    skipped = set()  # a clash with what the code of a plugin registered: keep the usual order
                    loads.update((id(s), self._load(s.candidate, timeout)) for s in later)
                for selection in selections:
                    if id(selection) not in skipped:
                        self._add_record(selection, loads.get(id(selection)))
                if skipped:
                    self.registry.defer_rest(functools.partial(self._load_rest, later, timeout))
                if config["mcp_servers"]:
                    self.start_mcp(connect=False)
        return self.plugins

    def _load_rest(self, later: list[PluginSelection], timeout: float | None) -> None:
        """Load the plugins ``load_plugins(for_tool=...)`` left for later (the registry runs it once, under its own
        lock: see :meth:`ToolRegistry.defer_rest`)."""
        for selection in later:
            self._add_record(selection, self._load(selection.candidate, timeout))

    def reload_plugins(self) -> dict[str, list[str]]:
        """Discover the plugins again: load the new ones and those whose code or manifest changed (their old
        registrations undone first), unload those gone or no longer selected, keep the others as they are.
        Returns the ids ``loaded``, ``reloaded``, ``unloaded`` and ``kept``. A plugin whose new load fails is
        left out whole (its record says why), never half-registered."""
        from .plugins.reload import forget_modules

        if not self._loaded:
            return {"loaded": [r.id for r in self.load_plugins() if r.active], "reloaded": [], "unloaded": [],
                    "kept": []}
        with self._load_lock:
            config = self._config_data()
            selections = select(self.discover(), SelectionPolicy.of(config, self.environ))
            chosen = {s.candidate.id: s for s in selections if s.verdict == "selected"}
            report: dict[str, list[str]] = {"loaded": [], "reloaded": [], "unloaded": [], "kept": []}
            for record in list(self.plugins):
                selection = chosen.get(record.id)
                if selection is not None and record.load is not None and self._unchanged(record, selection.candidate):
                    report["kept"].append(record.id)
                    chosen.pop(record.id)
                    continue
                self.plugins.remove(record)
                if record.load is None:
                    continue  # not loaded before (disabled, shadowed): its new record comes below
                for context in [c for c in self._plugin_contexts if c.plugin_id == record.id]:
                    context.close()
                    self._plugin_contexts.remove(context)
                declared = self._declared.pop(record.id, None)
                if declared is not None:
                    declared[1]()
                forget_modules(record.module)
                report["reloaded" if selection is not None else "unloaded"].append(record.id)
            timeout = config["plugins"]["load_timeout"] or None
            for selection in sorted(chosen.values(), key=_load_order):
                self._add_record(selection, self._load(selection.candidate, timeout))
                if selection.candidate.id not in report["reloaded"]:
                    report["loaded"].append(selection.candidate.id)
            kept = {record.id for record in self.plugins}
            for selection in selections:  # the records of those not selected now
                if selection.candidate.id not in kept and selection.verdict != "selected":
                    self._add_record(selection, None)
            self.registry.invalidate_checks()
            return report

    def plugin_folders(self) -> list[tuple[Path, Source]]:
        """The plugin folders to scan: the home's always, the project's only when opted in."""
        folders: list[tuple[Path, Source]] = [(self.home.plugins_dir, "user")]
        if truthy(self.environ.get("HERMES_ENABLE_PROJECT_PLUGINS")):
            folders.append(((self.cwd or Path.cwd()) / ".hermes" / "plugins", "project"))
        return folders

    def discover(self) -> list[PluginCandidate]:
        """Every plugin candidate of this runtime's sources (from the home's discovery cache when valid)."""
        folders = self.plugin_folders()
        injected = self._entry_points

        def entry_points() -> list[EntryPoint]:
            return installed_entry_points() if injected is None else injected

        if truthy(self.environ.get("HERMES_NO_CACHE")):
            return discover(folders, entry_points())
        source_key: Any = "installed" if injected is None else \
            [(ep.group, ep.name, ep.value, str(getattr(ep.dist, "_path", ""))) for ep in injected]
        return DiscoveryCache(self.home.cache_dir).candidates(folders, entry_points, source_key)

    def load_candidate(self, candidate: PluginCandidate) -> PluginRecord:
        """Load one candidate as if it had been selected (the testing kit and embedders use it)."""
        return self._add_record(PluginSelection(candidate, "selected"), self._load(candidate, self._load_timeout()))

    def load_plugin_from_path(self, path: Path | str, plugin_id: str | None = None) -> PluginRecord:
        """Load one plugin folder (``plugin.yaml`` and/or ``__init__.py``) as a user plugin."""
        candidate = candidate_from_folder(Path(path).resolve(), "user", plugin_id)
        if candidate is None:
            raise FileNotFoundError(f"{path} holds neither plugin.yaml nor __init__.py")
        return self.load_candidate(candidate)

    def _add_record(self, selection: PluginSelection, load: LoadResult | None) -> PluginRecord:
        record = PluginRecord(selection.candidate, selection, load)
        self.plugins.append(record)
        if truthy(self.environ.get("HERMES_PLUGINS_DEBUG")):
            print(f"[hermes plugins] {record.id} ({record.source}): {record.state} {record.reason}".rstrip(),
                  file=sys.stderr)
        return record

    def _load(self, candidate: PluginCandidate, timeout: float | None) -> LoadResult:
        compat.install()  # plugins written for Hermes Agent find its internals they import (the shims)
        if declares_only(candidate):  # no context, no fingerprint until one of its tools is used: see _first_use
            result, undo = load_declared(candidate, self.contributions, self._first_use)
            self._fingerprints[candidate.id] = candidate
            if undo is not None:
                self._declared[candidate.id] = (candidate, undo)
            return result

        from .plugins.reload import fingerprint

        self._fingerprints[candidate.id] = fingerprint(candidate)  # what reload_plugins compares
        context = self.context(candidate.id, candidate)
        # Kept as long as the runtime: the compatibility shims act for a plugin through its context.
        self._plugin_contexts.append(context)
        return load_plugin(candidate, self.contributions, context, timeout)

    def _first_use(self, candidate: PluginCandidate, code_prefix: str) -> None:
        """The first tool of a declared-only plugin is being built (called, checked): from now on its code may run,
        so it gets its plugin context (what the compatibility shims act for) and its fingerprint is taken."""
        from .plugins.reload import fingerprint

        loaded = self._declared.get(candidate.id)
        if loaded is None or loaded[0] is not candidate:  # an entry of a load since undone
            return
        context = self.context(candidate.id, candidate)
        self._plugin_contexts.append(context)
        INTEROP.layer.adopt(code_prefix, context)
        self._fingerprints[candidate.id] = fingerprint(candidate)

    def _unchanged(self, record: PluginRecord, candidate: PluginCandidate) -> bool:
        """Reloading would load ``candidate`` as ``record`` was loaded: equal fingerprints, or for a declared-only
        plugin none of whose tools was used (its code never ran), equal declarations."""
        from .plugins.reload import fingerprint, same_declarations

        loaded = self._fingerprints.get(record.id)
        if isinstance(loaded, PluginCandidate):
            return record.module not in sys.modules and same_declarations(loaded, candidate)
        return loaded == fingerprint(candidate)

    def plugin(self, plugin_id: str) -> PluginRecord | None:
        """The active record of ``plugin_id`` (or its first record when none is active)."""
        matches = [r for r in self.plugins if r.id == plugin_id]
        return next((r for r in matches if r.state != "shadowed"), matches[0] if matches else None)

    def why_missing(self, name: str) -> str | None:
        """Why no tool ``name`` is registered, when the plugins, the project folder or the MCP servers tell."""
        from .missing import why_missing

        servers = {status.name: status for status in self.mcp.status()} if self.mcp is not None else {}
        project = None if truthy(self.environ.get("HERMES_ENABLE_PROJECT_PLUGINS")) else \
            (self.cwd or Path.cwd()) / ".hermes" / "plugins"
        return why_missing(name, self.plugins, servers, project)

    def context(self, plugin_id: str | None = None, candidate: PluginCandidate | None = None) -> PluginContext:
        """A ``PluginContext`` for registering tools and hooks (the host program's own when ``plugin_id`` is None)."""
        return PluginContext(
            plugin_id, self.contributions,
            settings=lambda: plugin_settings(self._config_data(), plugin_id) if plugin_id else {},
            dispatch=self._dispatch_for_plugin,
            manifest=(lambda: candidate.manifest) if candidate else None,  # built only if the plugin reads it
            override_granted=lambda: plugin_id is None or override_granted(self._config_data(), plugin_id),
            inject=self._inject, home=self.home, runtime=self,
            memory_provider=lambda: str(self._config_data()["memory"]["provider"] or ""))

    def _dispatch_for_plugin(self, tool_name: str, args: Any, **context: Any) -> str:
        """``ctx.dispatch_tool``: from inside a tool call of this runtime or of one of its views, through that
        call's own view (a sub-agent's tool cannot reach past its view); otherwise through the runtime."""
        current = current_tool_context()
        if current is not None and current.approvals is self.approvals:
            return current.dispatch(tool_name, args, **context)
        return self.handle_function_call(tool_name, args, **context)

    def _inject(self, content: str, role: str) -> bool:
        sink = self.message_sink
        if sink is None:
            return False
        sink(content, role)
        return True

    def tool_context(self, plugin_id: str | None) -> ToolContext:
        """What the tool handlers of ``plugin_id`` see of this runtime while they run."""
        context = self._tool_contexts.get(plugin_id)
        if context is None:
            context = self._tool_contexts.setdefault(plugin_id, ToolContext(
                plugin_id, self.home, self.workspace, self.approvals, _config=self.home.config,
                _config_data=self._config_data,
                _dispatch=self.handle_function_call, _available_tools=self.available_tools,
                _backends=self.backends, _hooks=self._invoke_hook,
                _web_search_providers=lambda: list(self.web_search_providers.values()),
                _watch_sessions=self._watch_sessions,
                _skills=self.skill_catalog, _inject=self._inject, _agent_state=lambda: self.agent_state,
                _asking=self.asking, _delegate=self.delegate_batch, _background=self.delegate_in_background,
                _background_runs=lambda: self.background_runs,
                _run_command=lambda name, raw_args: self.run_command(name, raw_args, scope=self),
                _commands=lambda: sorted(name for name, command in self.commands.items()
                                         if command.allowed_tools is not None)))
        return context

    def _watch_sessions(self) -> None:
        """From now on, tell the plugins' state objects when a session of this runtime ends: the runtime's own
        ``on_session_end`` implementation, added once, when a state object first needs it (a browser context)."""
        with self._sessions_lock:
            if self._watching_sessions:
                return
            self._watching_sessions = True
        self.hooks.add_callback("hermes", "on_session_end", self._end_session)

    def _end_session(self, session_id: str | None = None) -> None:
        for context in list(self._tool_contexts.values()):
            context.end_session(session_id)

    def _invoke_hook(self, hook_name: str, **kwargs: Any) -> list[Any]:
        return [value for _impl, value in self.hooks.call(hook_name, **kwargs)]

    def set_task_backend(self, task_id: str, backend: str, settings: Mapping[str, Any] | None = None) -> None:
        """Run ``task_id``'s commands on ``backend`` (``settings`` go over its ``terminal.<backend>`` section)."""
        self.backends.assign(task_id, backend, settings)

    def clear_task_backend(self, task_id: str) -> None:
        """``task_id``'s commands go back to ``terminal.backend``."""
        self.backends.unassign(task_id)

    def register_tool(self, name: str, toolset: str, schema: dict[str, Any], handler: Callable[..., Any],
                      **options: Any) -> bool:
        """Register a tool from the host program (same arguments as ``PluginContext.register_tool``)."""
        return self.context().register_tool(name, toolset, schema, handler, **options)

    # -- scheduled jobs ---------------------------------------------------------------------------

    @property
    def cron(self) -> CronScheduler:
        """This home's scheduled jobs (``$HERMES_HOME/cron``), run by the cron pack's scheduler: ``tick()``,
        ``jobs()``, ``create(...)``... Raises :class:`~hermes_core.errors.CronUnavailable` saying why when
        hermes-tools-cron is not installed or is switched off."""
        from .cron import scheduler_of

        self.load_plugins()
        return scheduler_of(self, self.plugin("cron"))

    # -- MCP -------------------------------------------------------------------------------------

    def start_mcp(self, *, connect: bool = True) -> McpManager:
        """The MCP servers' tools, from each server's last listing; with ``connect``, also connect every
        enabled server (``mcp`` is imported only then) and wait for each one's first attempt."""
        if self.mcp is None:
            from .mcp.client import McpManager

            self.mcp = McpManager(self.registry, self.toolsets, self._config_data()["mcp_servers"],
                                  self.home.logs_dir, None if truthy(self.environ.get("HERMES_NO_CACHE"))
                                  else self.home.cache_dir, self.asking, self.home.mcp_tokens_dir)
            self.mcp.load()
        if connect:
            self.mcp.start()
        return self.mcp

    def flush_hooks(self) -> bool:
        """Wait until the ``post_tool_call`` observers of the calls made so far, from any thread, have run (each
        phase within ``plugins.hook_timeout``). With ``plugins.post_hooks: background`` a call returns without
        waiting for them: the calling thread's next hook phase waits for them, and so do :meth:`close` and the
        interpreter's exit. False when one posted since the last flush missed its deadline (logged)."""
        return self.hooks.flush()

    def close(self) -> None:
        """Wait for the posted hook observers and end the hook workers, then stop MCP sessions and their child
        processes, close what the plugins keep in their tool contexts (a browser...) and close the execution
        backends (which the observers may still have used)."""
        self.hooks.close()
        if self.mcp is not None:
            self.mcp.close()
            self.mcp = None
        for context in list(self._tool_contexts.values()):
            context.close()
        self.backends.close()
        self.agent_state.close()

    # -- the model-facing API -------------------------------------------------------------------

    def resolve_toolset(self, name: str) -> list[str]:
        """The tools of a toolset, composites and legacy names expanded."""
        return self.toolsets.resolve(name)

    def list_new_mcp_servers(self) -> None:
        """Connect, once and within its ``connect_timeout``, each MCP server whose tools were never listed."""
        if self.mcp is not None:
            self.mcp.list_new()

    def session(self, platform: str, model: str | None = None,
                session_id: str | None = None) -> contextlib.AbstractContextManager[str]:
        """A session of this runtime: ``on_session_start`` now, ``on_session_end`` and ``on_session_finalize``
        when the ``with`` block ends; the block gets the session id to pass to its calls."""
        return session(self.hooks, platform, model, session_id)

    # -- the agent's own state --------------------------------------------------------------------

    @property
    def sessions(self) -> SessionStore:
        """The session store of this home (``state.db``, Hermes Agent's schema): ``record(session_id, role,
        content, ...)`` a conversation, ``search``, ``sessions``, ``messages``, ``export``, ``prune``."""
        return self.agent_state.sessions

    @property
    def memory(self) -> MemoryFiles:
        """The built-in persistent memory (``memories/MEMORY.md`` and ``USER.md``)."""
        return self.agent_state.memory

    @property
    def memory_providers(self) -> MemoryProviders:
        """The memory providers plugins registered, and the one ``memory.provider`` selects (``prefetch``,
        ``sync_turn`` for the host's turns)."""
        return self.agent_state.providers

    def memory_prompt(self, session_id: str | None = None) -> str:
        """The memory block a host puts in its system prompt, as Hermes Agent builds it (MEMORY.md, USER.md and the
        memory provider's block); with ``session_id`` it is frozen for that session, as Hermes Agent's is."""
        return self.agent_state.memory_prompt(session_id)

    def begin_turn(self, user_message: str, session_id: str | None = None) -> Turn:
        """Begin a turn of the host's conversation as Hermes Agent's loop does: the message is recorded, the memory
        provider hears ``on_turn_start`` and recalls what it knows (``turn.message`` is the message with it, for the
        model); ``turn.end(reply)`` records the reply and hands the turn to the provider (``sync_turn``,
        ``queue_prefetch``). Without ``session_id``, the runtime's own session."""
        return self.agent_state.begin_turn(user_message, session_id)

    # -- commands and skills ---------------------------------------------------------------------

    def skill_roots(self) -> list[tuple[Path, SkillSource]]:
        """The skill folders this runtime reads, in precedence order: ``$HERMES_HOME/skills`` (``user``), and
        ``./.hermes/skills`` (``project``) only when ``HERMES_ENABLE_PROJECT_PLUGINS`` is on."""
        from .skills.roots import skill_roots

        project = truthy(self.environ.get("HERMES_ENABLE_PROJECT_PLUGINS"))
        return skill_roots(self.home.root, (self.cwd or Path.cwd()) if project else None)

    def skill_catalog(self) -> SkillCatalog:
        """Every skill of this runtime: its plugins', the user's and (only when opted in) the project's."""
        from .skills.catalog import SkillCatalog

        return SkillCatalog(list(self.skills.values()), self.skill_roots(),
                            None if truthy(self.environ.get("HERMES_NO_CACHE")) else self.home.cache_dir)

    def run_command(self, name: str, raw_args: str = "", *, scope: ToolApi | None = None) -> str | None:
        """Run a plugin's slash command ``/name``.

        With ``scope`` (the model runs it: ``slash_command``) only a command that declared ``allowed_tools`` runs,
        its tool calls limited to those of ``scope`` it allowed (read-only ones unless it declared otherwise);
        :class:`~hermes_core.errors.PolicyError` says why it may not run."""
        from .errors import PolicyError
        from .workers.asyncbridge import run_sync

        command = self.commands.get(normalize_command_name(name))
        if command is None:
            raise KeyError(f"unknown command /{normalize_command_name(name)}")
        if scope is not None:
            if command.allowed_tools is None:
                raise PolicyError(f"/{command.name} declares no allowed_tools: only the user can run it")
            if not command.read_only and scope.policy == "read-only":
                raise PolicyError(f"/{command.name} may change things, and calls run under the read-only policy")
            if not command.read_only and scope.policy == "writes" and not self.approvals.ask(ApprovalRequest(
                    f"The model wants to run /{command.name} {raw_args[:200]}".rstrip() + ", which may change things",
                    f"slash_command:{command.name}", "slash_command", {"command": command.name, "args": raw_args},
                    current.session_id if (current := current_tool_context()) is not None else None)):
                raise PolicyError(f"/{command.name} was not approved")
            view = scope.filtered(command.allowed_tools, read_only=command.read_only)
            with view.tool_context(command.plugin).activate():
                return self.run_command(name, raw_args)
        try:
            result = command.handler(raw_args)
            return run_sync(result) if hasattr(result, "__await__") else result
        except ImportError as exc:  # a Hermes Agent internal the command imports: named as a load names it
            raise ImportError(INTEROP.layer.explain(exc), name=exc.name) from exc


def _traced_dispatcher() -> type[Dispatcher]:
    """The dispatcher that traces each call (``observability.otel``); the plain one, with a warning, when
    OpenTelemetry is not installed."""
    from .calls.dispatch import Dispatcher

    try:
        from .calls.tracing import TracedDispatcher
    except ImportError as exc:
        log.warning("observability.otel is on, but OpenTelemetry is not installed (%s): pip install "
                    "'hermes-tools[otel]'. Tool calls are not traced.", exc)
        return Dispatcher
    return TracedDispatcher


def _local_backend(setup: BackendSetup) -> ExecutionBackend:
    from .backends.shell import LocalBackend  # off the start-up path: only a command needs it

    return LocalBackend(setup)


def _declared_names(selections: Iterable[PluginSelection]) -> set[str]:
    return {tool[0] for s in selections for tool in (s.candidate.outline or {}).get("tools") or ()}


def _not_needed_for(ordered: list[PluginSelection], tool: str) -> list[PluginSelection]:
    """Of the ordered selections, the declared-only ones a call of ``tool`` does not need: not declaring it, and
    declaring no name a needed plugin declares (so that whoever wins a name wins it as in a full load)."""
    later = [s for s in ordered if declares_only(s.candidate)]
    skipped = {id(s) for s in later}
    names = _declared_names(s for s in ordered if id(s) not in skipped) | {tool}
    while True:
        clashing = [s for s in later if not _declared_names([s]).isdisjoint(names)]
        if not clashing:
            return later
        later = [s for s in later if s not in clashing]
        names |= _declared_names(clashing)


def _load_order(selection: PluginSelection) -> int:
    return {"pip": 0, "user": 1, "project": 2}[selection.candidate.source]


_default: Runtime | None = None
_default_lock = threading.Lock()


def default_runtime(*, for_tool: str | None = None) -> Runtime:
    """The process-wide runtime (home ``$HERMES_HOME``), created and loaded on first use (``for_tool``: see
    :meth:`Runtime.load_plugins`)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                runtime = Runtime()
                runtime.load_plugins(for_tool=for_tool)
                _default = runtime
    return _default


def reset_default_runtime() -> None:
    """Forget the default runtime (the next use builds a fresh one)."""
    global _default
    with _default_lock:
        if _default is not None:
            _default.close()
        _default = None


# -- the default runtime's API (``hermes_core.get_tool_definitions`` and friends) ---------------------------

def get_tool_definitions(enabled_toolsets: Iterable[str] | None = None,
                         disabled_toolsets: Iterable[str] | None = None, quiet_mode: bool = False, *,
                         format: str = "openai", strict: bool = False, defer: str = "bridge",
                         context_length: int | None = None) -> list[dict[str, Any]]:
    """Tool definitions from the default runtime, in ``format`` (see ``Runtime.get_tool_definitions``)."""
    return default_runtime().get_tool_definitions(enabled_toolsets, disabled_toolsets, quiet_mode, format=format,
                                                  strict=strict, defer=defer, context_length=context_length)


def handle_function_call(function_name: str, function_args: Any, task_id: str | None = None,
                         tool_call_id: str | None = None, session_id: str | None = None,
                         user_task: str | None = None, enabled_tools: Iterable[str] | None = None) -> str:
    """Run one tool call on the default runtime; always returns a string."""
    return default_runtime().handle_function_call(function_name, function_args, task_id, tool_call_id,
                                                  session_id, user_task, enabled_tools)


async def ahandle_function_call(function_name: str, function_args: Any, task_id: str | None = None,
                                tool_call_id: str | None = None, session_id: str | None = None,
                                user_task: str | None = None, enabled_tools: Iterable[str] | None = None) -> str:
    """Run one tool call on the default runtime without blocking the running event loop."""
    return await default_runtime().ahandle_function_call(function_name, function_args, task_id, tool_call_id,
                                                         session_id, user_task, enabled_tools)


def run_tool_calls(calls: Iterable[ToolCallLike], **context: Any) -> list[str]:
    """Run a model's tool calls (any provider's) on the default runtime; results in call order."""
    return default_runtime().run_tool_calls(calls, **context)


def answer_tool_calls(calls: Iterable[ToolCallLike], **context: Any) -> list[ToolReply]:
    """Run a model's tool calls on the default runtime; each provider's reply item, in call order."""
    return default_runtime().answer_tool_calls(calls, **context)


async def arun_tool_calls(calls: Iterable[ToolCallLike], **context: Any) -> list[str]:
    """``run_tool_calls`` on the default runtime, without blocking the running event loop."""
    return await default_runtime().arun_tool_calls(calls, **context)


async def aanswer_tool_calls(calls: Iterable[ToolCallLike], **context: Any) -> list[ToolReply]:
    """``answer_tool_calls`` on the default runtime, without blocking the running event loop."""
    return await default_runtime().aanswer_tool_calls(calls, **context)


def enforce_turn_budget(results: list[str], budget: int | None = None) -> list[str]:
    """Keep one turn's results under the turn budget (default 200 000 characters)."""
    return default_runtime().enforce_turn_budget(results, budget)


def resolve_toolset(name: str) -> list[str]:
    """The tools of a toolset in the default runtime."""
    return default_runtime().resolve_toolset(name)

