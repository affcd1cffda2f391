"""``Runtime``: one config, plugin manager, registry and MCP manager; and the default instance."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .approval import ApprovalStore
from .budget import ResultBudget
from .cache import cached_candidates
from .config import HermesConfig, config_path, hermes_home, load_config
from .context import CliCommand, Command, PluginContext, Skill
from .discovery import PluginRecord, directory_candidates, read_manifest, select
from .dispatch import CURRENT_RUNTIME, Dispatcher
from .hooks import HookRunner
from .loader import load_plugin
from .registry import ToolRegistry
from .schema_patches import patch_definitions
from .toolsets import LEGACY_TOOLSETS, Toolsets

__all__ = ["Runtime", "current_runtime", "default_runtime", "reset_default_runtime"]

log = logging.getLogger(__name__)

_LEGACY_TOOL_NAMES = frozenset(tool for tools in LEGACY_TOOLSETS.values() for tool in tools)


class Runtime:
    """Holds everything one agent's tool layer needs; tests create their own, nothing leaks between them."""

    def __init__(self, home: Path | None = None, cwd: Path | None = None) -> None:
        self.home = Path(home) if home else hermes_home()
        self.cwd = cwd
        self.registry = ToolRegistry()
        self.toolsets = Toolsets(self.registry)
        self.hooks = HookRunner(lambda: self.config.plugins.hook_timeout)
        self.approvals = ApprovalStore()
        self.middleware: dict[str, list[tuple[str, Callable[..., Any]]]] = {}
        self.commands: dict[str, Command] = {}
        self.cli_commands: dict[str, CliCommand] = {}
        self.skills: dict[str, Skill] = {}
        self.plugins: list[PluginRecord] = []
        self.message_sink: Callable[[str, str], None] | None = None
        self.mcp: Any = None
        self._loaded = False
        self._load_lock = threading.Lock()
        tool_output = self.config.tool_output
        self.budget = ResultBudget(lambda: self.home / "results", tool_output.max_result_size_chars,
                                   tool_output.turn_budget_chars)
        self.dispatcher = Dispatcher(self.registry, self.hooks, self.budget, self.approvals, self.middleware, self)

    @property
    def config(self) -> HermesConfig:
        """``config.yaml`` of this runtime's home (re-read when the file changes)."""
        return load_config(config_path(self.home))

    # -- plugins -------------------------------------------------------------------------------

    def load_plugins(self) -> list[PluginRecord]:
        """Discover, select and load every plugin once; later calls return the same records."""
        with self._load_lock:
            if not self._loaded:
                self._loaded = True
                self.plugins = select(cached_candidates(self.cwd), self.config)
                for record in self.plugins:
                    if record.state == "pending":
                        load_plugin(self, record)
                if self.config.mcp_servers:
                    self.start_mcp()
        return self.plugins

    def load_plugin_from_path(self, path: Path, plugin_id: str | None = None) -> PluginRecord:
        """Load one plugin folder (``plugin.yaml`` and/or ``__init__.py``) as a user plugin."""
        path = Path(path).resolve()
        [record] = [r for r in directory_candidates(path.parent, "user") if r.path == str(path)] or [None]
        if record is None:
            raise FileNotFoundError(f"{path} holds neither plugin.yaml nor __init__.py")
        if plugin_id:
            record.id = plugin_id
        read_manifest(record)
        if record.state == "pending":
            load_plugin(self, record)
        self.plugins.append(record)
        return record

    def plugin(self, plugin_id: str) -> PluginRecord | None:
        """The active record of ``plugin_id`` (or its first record when none is active)."""
        matches = [r for r in self.plugins if r.id == plugin_id]
        return next((r for r in matches if r.state not in ("shadowed",)), matches[0] if matches else None)

    def context(self, plugin_id: str | None = None) -> PluginContext:
        """A ``PluginContext`` for registering tools and hooks from the host program itself."""
        return PluginContext(self, plugin_id)

    def register_tool(self, name: str, toolset: str, schema: dict[str, Any], handler: Callable[..., Any],
                      **options: Any) -> bool:
        """Register a tool from the host program (same arguments as ``PluginContext.register_tool``)."""
        return self.context().register_tool(name, toolset, schema, handler, **options)

    # -- MCP -------------------------------------------------------------------------------------

    def start_mcp(self) -> Any:
        """Connect the configured MCP servers (imports ``mcp`` only now)."""
        if self.mcp is None:
            from .mcp.client import McpManager

            self.mcp = McpManager(self)
            self.mcp.start()
        return self.mcp

    def close(self) -> None:
        """Stop MCP sessions and their child processes."""
        if self.mcp is not None:
            self.mcp.close()
            self.mcp = None

    # -- the model-facing API -------------------------------------------------------------------

    def resolve_toolset(self, name: str) -> list[str]:
        """The tools of a toolset, composites and legacy names expanded."""
        return self.toolsets.resolve(name)

    def select_tools(self, enabled_toolsets: Iterable[str] | None = None,
                     disabled_toolsets: Iterable[str] | None = None) -> tuple[list[str], list[str]]:
        """Tool names after enabling and then disabling toolsets, and the unknown toolset names."""
        unknown: list[str] = []
        if enabled_toolsets is None:
            names = self.registry.names()
        else:
            names, unknown = self.toolsets.resolve_many(enabled_toolsets)
        if disabled_toolsets:
            removed, unknown_disabled = self.toolsets.resolve_many(disabled_toolsets)
            unknown += unknown_disabled
            names = [n for n in names if n not in set(removed)]
        return names, unknown

    def get_tool_definitions(self, enabled_toolsets: Iterable[str] | None = None,
                             disabled_toolsets: Iterable[str] | None = None,
                             quiet_mode: bool = False) -> list[dict[str, Any]]:
        """OpenAI tool definitions of the available tools selected by the toolset filters."""
        names, unknown = self.select_tools(enabled_toolsets, disabled_toolsets)
        if unknown and not quiet_mode:
            known = ", ".join(self.toolsets.names())
            log.warning("unknown toolset%s %s (known: %s)", "s" if len(unknown) > 1 else "",
                        ", ".join(repr(u) for u in unknown), known)
        available = self.registry.get_available_tool_names(names)
        definitions = [self.registry.get(name).definition() for name in available]  # type: ignore[union-attr]
        return patch_definitions(definitions, available, _LEGACY_TOOL_NAMES.union(self.registry.names()))

    def handle_function_call(self, function_name: str, function_args: Any, task_id: str | None = None,
                             tool_call_id: str | None = None, session_id: str | None = None,
                             user_task: str | None = None, enabled_tools: Iterable[str] | None = None) -> str:
        """Run one tool call through hooks and the handler; always returns a string."""
        return self.dispatcher.handle_function_call(function_name, function_args, task_id, tool_call_id,
                                                    session_id, user_task, enabled_tools)

    def run_tool_calls(self, calls: list[dict[str, Any]], **context: Any) -> list[str]:
        """Run a model's tool calls (parallel when safe); results in call order."""
        return self.dispatcher.run_tool_calls(calls, **context)

    def enforce_turn_budget(self, results: list[str], budget: int | None = None) -> list[str]:
        """Keep one turn's results under the turn budget by saving the largest first."""
        return self.budget.enforce_turn_budget(results, budget)

    # -- commands and skills ---------------------------------------------------------------------

    def run_command(self, name: str, raw_args: str = "") -> str | None:
        """Run a plugin's slash command ``/name``."""
        from .asyncbridge import run_sync
        from .context import normalize_command_name

        command = self.commands.get(normalize_command_name(name))
        if command is None:
            raise KeyError(f"unknown command /{normalize_command_name(name)}")
        result = command.handler(raw_args)
        return run_sync(result) if hasattr(result, "__await__") else result


_default: Runtime | None = None
_default_lock = threading.Lock()


def default_runtime() -> Runtime:
    """The process-wide runtime, created and loaded on first use."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                runtime = Runtime()
                runtime.load_plugins()
                _default = runtime
    return _default


def reset_default_runtime() -> None:
    """Forget the default runtime (the next use builds a fresh one)."""
    global _default
    with _default_lock:
        if _default is not None:
            _default.close()
        _default = None


def current_runtime() -> Runtime:
    """The runtime dispatching the current tool call, else the default one."""
    return CURRENT_RUNTIME.get() or default_runtime()

