"""Hermes tools as LangChain tools: ``langchain_tools(runtime)``, for ``model.bind_tools(...)`` and LangGraph's
``ToolNode``.

Each is a structured tool whose ``args_schema`` is the tool's JSON schema, callable sync (``invoke``, through
``handle_function_call``) and async (``ainvoke``, awaiting ``ahandle_function_call`` on the caller's loop). The
result string is the ``ToolMessage`` content, errors included: a refused or failed call is a result the model
reads, never an exception that breaks a graph. Results go back to the model (``return_direct=False``). A tool that
is not ``parallel_safe`` runs alone, as in Hermes' own batches (``ToolNode`` runs a turn's calls at once). With
``questions="framework"`` a tool's question to the user (``clarify``) is LangGraph's ``interrupt()``: the graph
pauses with the question, and ``Command(resume=answer)`` answers it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, get_type_hints

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool

from ..calls.asking import caller_callbacks
from .gate import CallGate
from .offered import OfferedTool, offered_tools
from .questions import MAX_QUESTIONS, QuestionRecorder, check_questions
from .session import AdapterSession

if TYPE_CHECKING:
    from ..host.views import ToolApi

__all__ = ["langchain_tools"]


def langchain_tools(tools: ToolApi, *, toolsets: Iterable[str] | None = None, task_id: str | None = None,
                    session_id: str | None = None, questions: str = "hermes") -> list[BaseTool]:
    """The tools ``tools`` (a ``Runtime`` or a view from ``runtime.filtered(...)``) offers now, of ``toolsets``
    when given, as LangChain ``StructuredTool`` objects, made now (see :class:`~hermes_core.adapters.latest.Latest`
    for tools registered later); ``task_id`` and ``session_id`` are passed to every call, and the model's id of
    the call (LangChain's ``tool_call_id``, given when a ``ToolCall`` is invoked, as ``ToolNode`` does). Without
    ``session_id`` a LangGraph thread (``configurable.thread_id``) is a session, else the tools made by one call
    share one. Calls and results are recorded in the session store.

    ``questions``: ``"hermes"`` (the runtime's user callback answers ``clarify``) or ``"framework"`` (LangGraph's
    ``interrupt()``: the interrupt's value is ``{"hermes_question", "choices", "multi_select", "free_text",
    "tool"}``; resume with the answer text, or the list of choices picked, and the call runs again with it)."""
    made: list[BaseTool] = []
    gate = CallGate()
    framework = check_questions(questions) == "framework"
    calls = AdapterSession(tools, session_id, "langchain")
    for tool in offered_tools(tools, toolsets):
        run, arun = _callables(calls, tool, gate, task_id, framework)
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


def _callables(calls: AdapterSession, tool: OfferedTool, gate: CallGate, task_id: str | None,
               framework: bool) -> tuple[Callable[..., str], Callable[..., Awaitable[str]]]:
    name, parallel_safe = tool.name, tool.parallel_safe

    def run(arguments: dict[str, Any] | str, tool_call_id: str | None, config: RunnableConfig) -> str:
        gate.enter(parallel_safe)
        try:
            answers: list[Any] = []
            while True:
                recorder = QuestionRecorder(answers) if framework else None
                with caller_callbacks(user=recorder):
                    result = calls.call(name, arguments, task_id=task_id, tool_call_id=tool_call_id,
                                        framework=_thread(config))
                if recorder is None or not _interrupted(recorder, answers):
                    return result
        finally:
            gate.leave(parallel_safe)

    async def arun(arguments: dict[str, Any] | str, tool_call_id: str | None, config: RunnableConfig) -> str:
        await gate.aenter(parallel_safe)
        try:
            answers: list[Any] = []
            while True:
                recorder = QuestionRecorder(answers) if framework else None
                with caller_callbacks(user=recorder):
                    result = await calls.acall(name, arguments, task_id=task_id, tool_call_id=tool_call_id,
                                               framework=_thread(config))
                if recorder is None or not _interrupted(recorder, answers):
                    return result
        finally:
            gate.leave(parallel_safe)

    for function in (run, arun):  # LangChain reads these hints at every call: evaluate their strings once, here
        function.__annotations__ = get_type_hints(function)
    return run, arun


def _thread(config: RunnableConfig | None) -> str | None:
    """LangGraph's thread of the run (its conversation), when the graph has one."""
    thread = ((config or {}).get("configurable") or {}).get("thread_id")
    return str(thread) if thread else None


def _interrupted(recorder: QuestionRecorder, answers: list[Any]) -> bool:
    """When the call asked a question past ``answers``, ask it through LangGraph and add the answer: the graph
    pauses here and its resume value is the answer (outside a graph LangGraph raises its own error). False when
    the call asked nothing more, or too much."""
    if recorder.pending is None or len(answers) == MAX_QUESTIONS:
        return False
    from langgraph.types import interrupt

    answers.append(interrupt(recorder.payload()))
    return True
