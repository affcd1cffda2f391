"""Hermes: a declarative, entry-point based plugin ecosystem for the tools of AI agents."""

from __future__ import annotations

from typing import Any

from ._version import __version__
from .approval import ApprovalRequest, Approvals, request_approval, set_approval_callback
from .arguments import ArgumentError
from .backends import (
    BackendError,
    BackendSetup,
    BackendUnavailable,
    CommandResult,
    ExecutionBackend,
    MissingDirectory,
    Process,
    Staged,
)
from .config import ConfigError, HermesConfig, load_config
from .context import PluginContext
from .discovery import PluginCandidate
from .dispatch import AGENT_LOOP_TOOLS, tool_error
from .errors import HermesError
from .home import HermesHome, hermes_home
from .hooks import hookimpl, hookspec
from .manifest import ManifestError, PluginManifest
from .output import OutputBuffer
from .records import PluginRecord
from .registry import UNLIMITED, Availability, ToolEntry, ToolRegistry, tool_entry
from .runtime import Runtime, default_runtime, reset_default_runtime
from .toolcontext import ToolContext, tool_context
from .toolsets import LEGACY_TOOLSETS, PRESETS, Toolset, ToolsetCycleError, UnknownToolsetError
from .websearch import WebSearchProvider

__all__ = [
    "AGENT_LOOP_TOOLS",
    "LEGACY_TOOLSETS",
    "PRESETS",
    "UNLIMITED",
    "ApprovalRequest",
    "Approvals",
    "ArgumentError",
    "Availability",
    "BackendError",
    "BackendSetup",
    "BackendUnavailable",
    "CommandResult",
    "ConfigError",
    "ExecutionBackend",
    "HermesConfig",
    "HermesError",
    "HermesHome",
    "LocalBackend",
    "ManifestError",
    "MissingDirectory",
    "OutputBuffer",
    "PluginCandidate",
    "PluginContext",
    "PluginManifest",
    "PluginRecord",
    "Process",
    "Runtime",
    "ShellBackend",
    "ShellProcess",
    "Staged",
    "ToolContext",
    "ToolEntry",
    "ToolRegistry",
    "Toolset",
    "ToolsetCycleError",
    "UnknownToolsetError",
    "WebSearchProvider",
    "__version__",
    "default_runtime",
    "enforce_turn_budget",
    "get_tool_definitions",
    "handle_function_call",
    "hermes_home",
    "hookimpl",
    "hookspec",
    "load_config",
    "request_approval",
    "reset_default_runtime",
    "resolve_toolset",
    "run_tool_calls",
    "set_approval_callback",
    "tool_context",
    "tool_entry",
    "tool_error",
]


def get_tool_definitions(enabled_toolsets: list[str] | None = None, disabled_toolsets: list[str] | None = None,
                         quiet_mode: bool = False) -> list[dict[str, Any]]:
    """OpenAI tool definitions from the default runtime (see :meth:`Runtime.get_tool_definitions`)."""
    return default_runtime().get_tool_definitions(enabled_toolsets, disabled_toolsets, quiet_mode)


def handle_function_call(function_name: str, function_args: Any, task_id: str | None = None,
                         tool_call_id: str | None = None, session_id: str | None = None,
                         user_task: str | None = None, enabled_tools: list[str] | None = None) -> str:
    """Run one tool call on the default runtime; always returns a string."""
    return default_runtime().handle_function_call(function_name, function_args, task_id, tool_call_id,
                                                  session_id, user_task, enabled_tools)


def run_tool_calls(calls: list[dict[str, Any]], **context: Any) -> list[str]:
    """Run a model's tool calls on the default runtime; results in call order."""
    return default_runtime().run_tool_calls(calls, **context)


def enforce_turn_budget(results: list[str], budget: int | None = None) -> list[str]:
    """Keep one turn's results under the turn budget (default 200 000 characters)."""
    return default_runtime().enforce_turn_budget(results, budget)


def resolve_toolset(name: str) -> list[str]:
    """The tools of a toolset in the default runtime."""
    return default_runtime().resolve_toolset(name)


#: Exported from :mod:`hermes_core.shellbackend`, imported on first use (it is off the start-up path).
_SHELL_NAMES = frozenset({"LocalBackend", "ShellBackend", "ShellProcess"})


def __getattr__(name: str) -> Any:
    if name in _SHELL_NAMES:
        from . import shellbackend

        return getattr(shellbackend, name)
    raise AttributeError(f"module 'hermes_core' has no attribute {name!r}")
