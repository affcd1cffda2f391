"""Hermes tools as a pydantic-ai toolset: ``Agent(model, toolsets=[HermesToolset(runtime)])``.

Definitions come from the registry on every run step (tools that appear or go away follow); each call is awaited
through the view's ``ahandle_function_call`` on the agent's own event loop. A tool that is not ``parallel_safe``
runs alone (pydantic-ai's ``sequential``); with ``approval="framework"`` a tool that asks under
``approvals.policy: writes`` is pydantic-ai's ``requires_approval`` kind, answered through ``DeferredToolResults``;
with ``questions="framework"`` a tool's question to the user (``clarify``) is a deferred question
(``CallDeferred(kind="question")``), whose answer in ``DeferredToolResults.calls`` is the call's result.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from pydantic_ai.exceptions import ApprovalRequired, CallDeferred
from pydantic_ai.tools import RunContext, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from ..calls.asking import caller_callbacks
from .offered import asks, check_approval, framework_approved, offered_tools
from .questions import QuestionRecorder, check_questions
from .session import AdapterSession

if TYPE_CHECKING:
    from ..host.views import ToolApi

__all__ = ["HermesToolset"]

#: Where arguments that are not a JSON object travel from the validator to ``call_tool``.
_RAW = "\x00hermes: the arguments as the model sent them"


class _Passed:
    """Hermes checks and coerces the arguments itself (one error listing every problem, as a tool result), so
    pydantic-ai passes on what the model sent: text that is not a JSON object too, which pydantic-ai would
    otherwise count as a failed attempt (and, out of retries, end the run with)."""

    def validate_json(self, input: str | bytes | bytearray, *, allow_partial: Any = False, **kwargs: Any) -> Any:
        import json

        try:
            value = json.loads(input)
        except ValueError:
            value = None
        return value if isinstance(value, dict) else {_RAW: input}

    def validate_python(self, input: Any, *, allow_partial: Any = False, **kwargs: Any) -> Any:
        return input if isinstance(input, dict) else {_RAW: input}


_PASSED = _Passed()


class HermesToolset(AbstractToolset[Any]):
    """The tools ``tools`` (a ``Runtime`` or a view from ``runtime.filtered(...)``) offers, of ``toolsets`` when
    given, as a pydantic-ai toolset.

    ``approval``: ``"hermes"`` (its approval callback asks during the call) or ``"framework"`` (pydantic-ai's
    deferred approvals ask; see :data:`~hermes_core.adapters.offered.Approval`). ``questions``: ``"hermes"``
    (the runtime's user callback answers ``clarify``) or ``"framework"`` (a deferred question whose metadata is
    ``{"hermes_question", "choices", "multi_select", "free_text", "tool"}``; the answer given for it is what the
    model reads). ``task_id`` and ``session_id`` are passed to every call (a session approval holds for the
    session); without ``session_id`` each pydantic-ai conversation (else each run) is a session. Calls and results
    are recorded in the session store. A failed call is a tool result the model reads (``{"error": ...}``), never
    an exception that ends the run.
    """

    def __init__(self, tools: ToolApi, *, toolsets: Iterable[str] | None = None, id: str | None = None,
                 approval: str = "hermes", task_id: str | None = None, session_id: str | None = None,
                 questions: str = "hermes") -> None:
        self.tools = tools
        self.toolsets = None if toolsets is None else list(toolsets)
        self.approval = check_approval(approval)
        self.questions = check_questions(questions)
        self.task_id = task_id
        self.calls = AdapterSession(tools, session_id, "pydantic-ai")
        self._id = id

    @property
    def id(self) -> str | None:
        return self._id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        framework = self.approval == "framework"
        return {tool.name: ToolsetTool(
            toolset=self, max_retries=1, args_validator=_PASSED,
            tool_def=ToolDefinition(
                name=tool.name, description=tool.description, parameters_json_schema=tool.parameters,
                sequential=not tool.parallel_safe,
                kind="unapproved" if framework and asks(self.tools, tool.name) else "function",
                metadata=tool.metadata()))
            for tool in offered_tools(self.tools, self.toolsets)}

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any],
                        tool: ToolsetTool[Any]) -> str:
        if tool.tool_def.kind == "unapproved" and not ctx.tool_call_approved:
            raise ApprovalRequired
        arguments = tool_args.get(_RAW, tool_args)
        approved = framework_approved(name, tool_args) if ctx.tool_call_approved else nullcontext()
        recorder = QuestionRecorder() if self.questions == "framework" else None
        with approved, caller_callbacks(user=recorder):
            result = await self.calls.acall(name, arguments, task_id=self.task_id, tool_call_id=ctx.tool_call_id,
                                            framework=getattr(ctx, "conversation_id", None) or ctx.run_id)
        if recorder is not None and recorder.pending is not None:
            raise CallDeferred(recorder.payload(), kind="question")
        return result

    def __repr__(self) -> str:
        return f"HermesToolset({self.tools!r})"
