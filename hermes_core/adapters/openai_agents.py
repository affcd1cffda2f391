"""Hermes tools as the OpenAI Agents SDK's ``FunctionTool`` objects: ``Agent(..., tools=function_tools(runtime))``.

Each tool carries its JSON schema, strict where it can be made strict (a schema that cannot keeps its own, with
the warning ``get_tool_definitions(format="openai", strict=True)`` gives), and an async ``on_invoke_tool`` that
awaits the view's ``ahandle_function_call`` on the runner's own event loop. A tool that is not ``parallel_safe``
runs alone, as in Hermes' own batches (the SDK runs a turn's calls at once). With ``approval="framework"`` a tool
that asks under ``approvals.policy: writes`` has ``needs_approval``: the run is interrupted and
``RunState.approve`` answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from .gate import CallGate
from .offered import OfferedTool, asks, check_approval, framework_approved, offered_tools
from .session import AdapterSession

if TYPE_CHECKING:
    from agents import FunctionTool, RunContextWrapper, ToolContext

    from ..host.views import ToolApi

__all__ = ["function_tools"]


def function_tools(tools: ToolApi, *, toolsets: Iterable[str] | None = None, strict: bool = True,
                   approval: str = "hermes", task_id: str | None = None,
                   session_id: str | None = None) -> list[FunctionTool]:
    """The tools ``tools`` (a ``Runtime`` or a view from ``runtime.filtered(...)``) offers now, of ``toolsets``
    when given, as ``FunctionTool`` objects (a list made now: for tools registered later, make it through
    :class:`~hermes_core.adapters.latest.Latest` and give each run ``agent.clone(tools=latest())``).

    ``approval``: ``"hermes"`` (its approval callback asks during the call) or ``"framework"`` (the SDK's
    ``needs_approval``). ``task_id`` and ``session_id`` are passed to every call (without ``session_id`` the tools
    of one list share a session of their own). Calls and results are recorded in the session store. A failed call
    is a tool result the model reads (``{"error": ...}``), never an exception that ends the run.
    """
    from agents import FunctionTool

    framework = check_approval(approval) == "framework"
    gate = CallGate()
    calls = AdapterSession(tools, session_id, "openai-agents")
    return [FunctionTool(name=tool.name, description=tool.description, params_json_schema=tool.parameters,
                         on_invoke_tool=_invoker(calls, tool, gate, framework, task_id),
                         strict_json_schema=tool.strict,
                         needs_approval=_needs_approval(tools, tool.name) if framework else False)
            for tool in offered_tools(tools, toolsets, strict=strict)]


def _invoker(calls: AdapterSession, tool: OfferedTool, gate: CallGate, framework: bool,
             task_id: str | None) -> Callable[[ToolContext[Any], str], Awaitable[str]]:
    name, parallel_safe = tool.name, tool.parallel_safe

    async def on_invoke_tool(context: ToolContext[Any], arguments: str) -> str:
        # A call the user approved through the SDK (RunState.approve): that approval answers Hermes' question.
        approved = framework_approved(name, _arguments(arguments)) \
            if framework and context.is_tool_approved(name, context.tool_call_id) is True else nullcontext()
        await gate.aenter(parallel_safe)
        try:
            with approved:
                return await calls.acall(name, arguments, task_id=task_id, tool_call_id=context.tool_call_id)
        finally:
            gate.leave(parallel_safe)

    return on_invoke_tool


def _needs_approval(tools: ToolApi, name: str) -> Callable[[RunContextWrapper[Any], dict[str, Any], str],
                                                            Awaitable[bool]]:
    async def needs_approval(context: RunContextWrapper[Any], arguments: dict[str, Any], call_id: str) -> bool:
        return asks(tools, name)  # the policy now, not when the tools were made

    return needs_approval


def _arguments(text: str) -> dict[str, Any] | None:
    import json

    try:
        value = json.loads(text or "{}")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
