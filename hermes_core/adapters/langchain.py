"""Hermes tools as LangChain tools: ``langchain_tools(runtime)``, for ``model.bind_tools(...)`` and LangGraph's
``ToolNode``.

Each is a structured tool whose ``args_schema`` is the tool's JSON schema, callable sync (``invoke``, through
``handle_function_call``) and async (``ainvoke``, awaiting ``ahandle_function_call`` on the caller's loop). The
result string is the ``ToolMessage`` content, errors included: a refused or failed call is a result the model
reads, never an exception that breaks a graph. Results go back to the model (``return_direct=False``). A tool that
is not ``parallel_safe`` runs alone, as in Hermes' own batches (``ToolNode`` runs a turn's calls at once).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, get_type_hints

from langchain_core.tools import BaseTool, StructuredTool

from .gate import CallGate
from .offered import OfferedTool, offered_tools

if TYPE_CHECKING:
    from ..host.views import ToolApi

__all__ = ["langchain_tools"]


def langchain_tools(tools: ToolApi, *, toolsets: Iterable[str] | None = None, task_id: str | None = None,
                    session_id: str | None = None) -> list[BaseTool]:
    """The tools ``tools`` (a ``Runtime`` or a view from ``runtime.filtered(...)``) offers now, of ``toolsets``
    when given, as LangChain ``StructuredTool`` objects, made now (see :class:`~hermes_core.adapters.latest.Latest`
    for tools registered later); ``task_id`` and ``session_id`` are passed to every call, and the model's id of
    the call (LangChain's ``tool_call_id``, given when a ``ToolCall`` is invoked, as ``ToolNode`` does)."""
    made: list[BaseTool] = []
    gate = CallGate()
    for tool in offered_tools(tools, toolsets):
        run, arun = _callables(tools, tool, gate, task_id, session_id)
        made.append(_HermesTool(name=tool.name, description=tool.description, args_schema=tool.parameters,
                                func=run, coroutine=arun, return_direct=False,
                                metadata=tool.metadata()))
    return made


class _HermesTool(StructuredTool):
    """A structured tool whose function takes the model's arguments as one dict (spread as keywords, an argument
    called ``config``, ``callbacks`` or ``run_manager`` would be replaced by LangChain's own, and one called
    ``self`` would raise), then the model's id of the call: LangChain hands it to a tool invoked with a
    ``ToolCall`` (as ``ToolNode`` does), and hooks and approvals see it as ``tool_call_id``."""

    def _to_args_and_kwargs(self, tool_input: str | dict[str, Any],
                            tool_call_id: str | None) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self._parse_input(tool_input, tool_call_id), tool_call_id), {}


def _callables(tools: ToolApi, tool: OfferedTool, gate: CallGate, task_id: str | None,
               session_id: str | None) -> tuple[Callable[..., str], Callable[..., Awaitable[str]]]:
    name, parallel_safe = tool.name, tool.parallel_safe

    def run(arguments: dict[str, Any] | str, tool_call_id: str | None) -> str:
        gate.enter(parallel_safe)
        try:
            return tools.handle_function_call(name, arguments, task_id=task_id, tool_call_id=tool_call_id,
                                              session_id=session_id)
        finally:
            gate.leave(parallel_safe)

    async def arun(arguments: dict[str, Any] | str, tool_call_id: str | None) -> str:
        await gate.aenter(parallel_safe)
        try:
            return await tools.ahandle_function_call(name, arguments, task_id=task_id, tool_call_id=tool_call_id,
                                                     session_id=session_id)
        finally:
            gate.leave(parallel_safe)

    for function in (run, arun):  # LangChain reads these hints at every call: evaluate their strings once, here
        function.__annotations__ = get_type_hints(function)
    return run, arun
