"""Hermes: a declarative, entry-point based plugin ecosystem for the tools of AI agents."""

from __future__ import annotations

from ._version import __version__

TYPE_CHECKING = False  # ``typing`` itself costs an import that ``import hermes_core`` need not pay
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from .approval import ApprovalRequest, Approvals, request_approval, set_approval_callback
    from .arguments import ArgumentError
    from .authoring import ToolError, ToolSpec, tool, tool_spec
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
    from .config import HermesConfig, load_config
    from .context import PluginContext
    from .discovery import PluginCandidate
    from .dispatch import AGENT_LOOP_TOOLS, tool_error
    from .errors import ConfigError, HermesError
    from .formats import FORMATS
    from .home import HermesHome, hermes_home
    from .hooks import hookimpl, hookspec
    from .manifest import ManifestError, PluginManifest
    from .output import OutputBuffer
    from .policies import POLICIES, Policy, PolicyError
    from .records import PluginRecord
    from .registry import UNLIMITED, Availability, ToolAnnotations, ToolEntry, ToolRegistry, tool_entry
    from .runtime import Runtime, default_runtime, reset_default_runtime
    from .shellbackend import LocalBackend, ShellBackend, ShellProcess
    from .toolcalls import (
        AnthropicToolResult,
        AnthropicToolUse,
        ChatCompletionsToolCall,
        ChatCompletionsToolMessage,
        GeminiFunctionCall,
        GeminiFunctionResponsePart,
        PlainToolCall,
        ResponsesFunctionCall,
        ResponsesFunctionCallOutput,
        ToolCallLike,
        ToolReply,
    )
    from .toolcontext import ToolContext, tool_context
    from .toolsets import LEGACY_TOOLSETS, PRESETS, Toolset, ToolsetCycleError, UnknownToolsetError
    from .views import ToolView
    from .websearch import WebSearchProvider

#: Where each public name lives: importing ``hermes_core`` imports none of them until first use, so a
#: command pays only for the parts it touches (pydantic, for one, only when a model is needed).
_LAZY = {
    "approval": ("ApprovalRequest", "Approvals", "request_approval", "set_approval_callback"),
    "arguments": ("ArgumentError",),
    "authoring": ("ToolError", "ToolSpec", "tool", "tool_spec"),
    "backends": ("BackendError", "BackendSetup", "BackendUnavailable", "CommandResult", "ExecutionBackend",
                 "MissingDirectory", "Process", "Staged"),
    "config": ("HermesConfig", "load_config"),
    "context": ("PluginContext",),
    "discovery": ("PluginCandidate",),
    "dispatch": ("AGENT_LOOP_TOOLS", "tool_error"),
    "errors": ("ConfigError", "HermesError"),
    "formats": ("FORMATS",),
    "home": ("HermesHome", "hermes_home"),
    "hooks": ("hookimpl", "hookspec"),
    "manifest": ("ManifestError", "PluginManifest"),
    "output": ("OutputBuffer",),
    "policies": ("POLICIES", "Policy", "PolicyError"),
    "records": ("PluginRecord",),
    "registry": ("UNLIMITED", "Availability", "ToolAnnotations", "ToolEntry", "ToolRegistry", "tool_entry"),
    "runtime": ("Runtime", "default_runtime", "reset_default_runtime"),
    "shellbackend": ("LocalBackend", "ShellBackend", "ShellProcess"),
    "toolcalls": ("AnthropicToolResult", "AnthropicToolUse", "ChatCompletionsToolCall", "ChatCompletionsToolMessage",
                  "GeminiFunctionCall", "GeminiFunctionResponsePart", "PlainToolCall", "ResponsesFunctionCall",
                  "ResponsesFunctionCallOutput", "ToolCallLike", "ToolReply"),
    "toolcontext": ("ToolContext", "tool_context"),
    "toolsets": ("LEGACY_TOOLSETS", "PRESETS", "Toolset", "ToolsetCycleError", "UnknownToolsetError"),
    "views": ("ToolView",),
    "websearch": ("WebSearchProvider",),
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names}

__all__ = [
    "AGENT_LOOP_TOOLS",
    "FORMATS",
    "LEGACY_TOOLSETS",
    "POLICIES",
    "PRESETS",
    "UNLIMITED",
    "AnthropicToolResult",
    "AnthropicToolUse",
    "ApprovalRequest",
    "Approvals",
    "ArgumentError",
    "Availability",
    "BackendError",
    "BackendSetup",
    "BackendUnavailable",
    "ChatCompletionsToolCall",
    "ChatCompletionsToolMessage",
    "CommandResult",
    "ConfigError",
    "ExecutionBackend",
    "GeminiFunctionCall",
    "GeminiFunctionResponsePart",
    "HermesConfig",
    "HermesError",
    "HermesHome",
    "LocalBackend",
    "ManifestError",
    "MissingDirectory",
    "OutputBuffer",
    "PlainToolCall",
    "PluginCandidate",
    "PluginContext",
    "PluginManifest",
    "PluginRecord",
    "Policy",
    "PolicyError",
    "Process",
    "ResponsesFunctionCall",
    "ResponsesFunctionCallOutput",
    "Runtime",
    "ShellBackend",
    "ShellProcess",
    "Staged",
    "ToolAnnotations",
    "ToolCallLike",
    "ToolContext",
    "ToolEntry",
    "ToolError",
    "ToolRegistry",
    "ToolReply",
    "ToolSpec",
    "ToolView",
    "Toolset",
    "ToolsetCycleError",
    "UnknownToolsetError",
    "WebSearchProvider",
    "__version__",
    "aanswer_tool_calls",
    "ahandle_function_call",
    "answer_tool_calls",
    "arun_tool_calls",
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
    "tool",
    "tool_context",
    "tool_entry",
    "tool_error",
    "tool_spec",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_core' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


def get_tool_definitions(enabled_toolsets: Iterable[str] | None = None,
                         disabled_toolsets: Iterable[str] | None = None, quiet_mode: bool = False, *,
                         format: str = "openai", strict: bool = False) -> list[dict[str, Any]]:
    """Tool definitions from the default runtime, in ``format`` (see ``Runtime.get_tool_definitions``)."""
    from .runtime import default_runtime

    return default_runtime().get_tool_definitions(enabled_toolsets, disabled_toolsets, quiet_mode, format=format,
                                                  strict=strict)


def handle_function_call(function_name: str, function_args: Any, task_id: str | None = None,
                         tool_call_id: str | None = None, session_id: str | None = None,
                         user_task: str | None = None, enabled_tools: Iterable[str] | None = None) -> str:
    """Run one tool call on the default runtime; always returns a string."""
    from .runtime import default_runtime

    return default_runtime().handle_function_call(function_name, function_args, task_id, tool_call_id,
                                                  session_id, user_task, enabled_tools)


async def ahandle_function_call(function_name: str, function_args: Any, task_id: str | None = None,
                                tool_call_id: str | None = None, session_id: str | None = None,
                                user_task: str | None = None, enabled_tools: Iterable[str] | None = None) -> str:
    """Run one tool call on the default runtime without blocking the running event loop."""
    from .runtime import default_runtime

    return await default_runtime().ahandle_function_call(function_name, function_args, task_id, tool_call_id,
                                                         session_id, user_task, enabled_tools)


def run_tool_calls(calls: Iterable[ToolCallLike], **context: Any) -> list[str]:
    """Run a model's tool calls (any provider's) on the default runtime; results in call order."""
    from .runtime import default_runtime

    return default_runtime().run_tool_calls(calls, **context)


def answer_tool_calls(calls: Iterable[ToolCallLike], **context: Any) -> list[ToolReply]:
    """Run a model's tool calls on the default runtime; each provider's reply item, in call order."""
    from .runtime import default_runtime

    return default_runtime().answer_tool_calls(calls, **context)


async def arun_tool_calls(calls: Iterable[ToolCallLike], **context: Any) -> list[str]:
    """``run_tool_calls`` on the default runtime, without blocking the running event loop."""
    from .runtime import default_runtime

    return await default_runtime().arun_tool_calls(calls, **context)


async def aanswer_tool_calls(calls: Iterable[ToolCallLike], **context: Any) -> list[ToolReply]:
    """``answer_tool_calls`` on the default runtime, without blocking the running event loop."""
    from .runtime import default_runtime

    return await default_runtime().aanswer_tool_calls(calls, **context)


def enforce_turn_budget(results: list[str], budget: int | None = None) -> list[str]:
    """Keep one turn's results under the turn budget (default 200 000 characters)."""
    from .runtime import default_runtime

    return default_runtime().enforce_turn_budget(results, budget)


def resolve_toolset(name: str) -> list[str]:
    """The tools of a toolset in the default runtime."""
    from .runtime import default_runtime

    return default_runtime().resolve_toolset(name)

