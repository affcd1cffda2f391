"""Hermes tools in simonw's ``llm``: ``llm_tools(runtime)`` for its Python API, and the plugin (entry point group
``llm``) that registers them through ``register_tools``, so ``llm tools`` lists them and ``llm -T read_file``
calls them.

The plugin registers the tools of the toolsets named by ``adapters.llm.toolsets`` in the config of
``$HERMES_HOME``, and by default only the read-only tools. Importing this module imports neither ``llm`` nor
any Hermes plugin: ``llm`` imports it at every start, so the tools are looked up only when ``llm`` asks for them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import pluggy

from .offered import offered_tools
from .session import AdapterSession

if TYPE_CHECKING:
    from llm import Tool

    from ..host.views import ToolApi
    from ..runtime import Runtime

__all__ = ["llm_tools", "register_tools", "selected_tools"]

#: llm's own marker (pluggy project ``llm``), made here so that loading the plugin costs no ``import llm``.
hookimpl = pluggy.HookimplMarker("llm")


def llm_tools(tools: ToolApi, *, toolsets: Iterable[str] | None = None, asynchronous: bool = False,
              task_id: str | None = None, session_id: str | None = None) -> list[Tool]:
    """The tools ``tools`` (a ``Runtime`` or a view from ``runtime.filtered(...)``) offers now, of ``toolsets``
    when given, as ``llm.Tool`` objects (made now; :class:`~hermes_core.adapters.latest.Latest` remakes them when
    tools come or go); each call goes through ``handle_function_call``, or, with
    ``asynchronous`` (for llm's async models), is awaited through ``ahandle_function_call`` on the caller's loop.
    Without ``session_id`` the tools of one list share a session of their own; calls and results are recorded in
    the session store."""
    from llm import Tool

    calls = AdapterSession(tools, session_id, "llm")
    return [Tool(name=tool.name, description=tool.description, input_schema=tool.parameters,
                 implementation=_implementation(calls, tool.name, asynchronous, task_id), plugin="hermes")
            for tool in offered_tools(tools, toolsets)]


def selected_tools(runtime: Runtime) -> ToolApi:
    """What the plugin offers of ``runtime``: the toolsets of ``adapters.llm.toolsets``, else the read-only tools.
    Raises ``ValueError`` for settings of another shape, or an unknown toolset."""
    adapters = (runtime.config.model_extra or {}).get("adapters") or {}
    settings = (adapters.get("llm") or {}) if isinstance(adapters, dict) else adapters
    if not isinstance(settings, dict):
        raise ValueError(f"adapters.llm in {runtime.home.config_file} must be a mapping such as "
                         f"{{toolsets: [file]}}, not {settings!r}")
    toolsets = settings.get("toolsets")
    if toolsets is None:
        return runtime.filtered(read_only=True)
    if not isinstance(toolsets, list) or not all(isinstance(name, str) for name in toolsets):
        raise ValueError(f"adapters.llm.toolsets in {runtime.home.config_file} must be a list of toolset names, "
                         f"not {toolsets!r}")
    return runtime.filtered(toolsets=toolsets)


@hookimpl
def register_tools(register: Callable[..., None]) -> None:
    """llm's hook: register the selected Hermes tools (none, with a message, when the config is wrong)."""
    from ..errors import HermesError
    from ..runtime import default_runtime

    try:
        view = selected_tools(default_runtime())
    except (HermesError, ValueError) as exc:  # a bad config.yaml: llm keeps working, without Hermes tools
        print(f"hermes: no tools registered with llm: {exc}", file=sys.stderr)
        return
    for tool in llm_tools(view):
        register(tool)


def _implementation(calls: AdapterSession, name: str, asynchronous: bool, task_id: str | None) -> Callable[..., Any]:
    def implementation(**arguments: Any) -> str:
        return calls.call(name, arguments, task_id=task_id, tool_call_id=None)

    async def async_implementation(**arguments: Any) -> str:
        return await calls.acall(name, arguments, task_id=task_id, tool_call_id=None)

    chosen = async_implementation if asynchronous else implementation
    chosen.__name__ = name
    return chosen
