"""Shim of Hermes Agent's ``model_tools``: tool calls, definitions and the async bridge of the runtime running the
plugin."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from . import host_runtime
from .tools_registry import registry

__all__ = ["_clear_tool_defs_cache", "_run_async", "_tool_defs_cache", "get_all_tool_names", "get_tool_definitions",
           "get_toolset_for_tool", "handle_function_call", "registry"]

#: Hermes Agent memoizes definitions here; Hermes builds them on each call, so there is nothing to clear.
_tool_defs_cache: dict[Any, Any] = {}


def _clear_tool_defs_cache() -> None:
    _tool_defs_cache.clear()


def handle_function_call(function_name: str, function_args: dict[str, Any] | str, task_id: str | None = None,
                         tool_call_id: str | None = None, session_id: str | None = None,
                         user_task: str | None = None, enabled_tools: list[str] | None = None,
                         **ignored: Any) -> str:
    """Call a tool through the runtime's full call path (hooks, middleware, result budget). Hermes Agent's other
    keywords (``turn_id``, ``skip_pre_tool_call_hook``, ...) are accepted and not used: hooks always run."""
    return host_runtime().handle_function_call(function_name, function_args, task_id=task_id,
                                               tool_call_id=tool_call_id, session_id=session_id,
                                               user_task=user_task, enabled_tools=enabled_tools)


def get_tool_definitions(enabled_toolsets: list[str] | None = None, disabled_toolsets: list[str] | None = None,
                         quiet_mode: bool = False, **ignored: Any) -> list[dict[str, Any]]:
    """The OpenAI definitions of the runtime's available tools (``enabled_toolsets`` / ``disabled_toolsets`` as in
    Hermes Agent)."""
    return host_runtime().get_tool_definitions(enabled_toolsets=enabled_toolsets,
                                               disabled_toolsets=disabled_toolsets)


def get_all_tool_names() -> list[str]:
    return registry.get_all_tool_names()


def get_toolset_for_tool(tool_name: str) -> str | None:
    return registry.get_toolset_for_tool(tool_name)


def _run_async(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` to completion from synchronous code (on a worker thread when a loop already runs here)."""
    from ...workers.asyncbridge import run_sync

    return run_sync(coro)
