"""A tool's questions to the user (``clarify``, ``ctx.ask_user``) asked by the framework instead of Hermes'
user callback: LangGraph's ``interrupt()``, pydantic-ai's deferred questions (``CallDeferred(kind="question")``).

The call runs with a user callback that answers from what the framework has already answered and keeps the first
question past those (the call then fails, and its result is dropped); the adapter asks that question the
framework's way. LangGraph runs the call again with every answer; pydantic-ai takes the answer as the call's
result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal

from ..calls.asking import UserQuestion
from ..errors import NoAnswer

__all__ = ["QuestionRecorder", "Questions", "check_questions"]

#: Who asks a tool's questions: ``hermes``, the user callback of the runtime (``Runtime.set_user_callback``);
#: ``framework``, the framework's own human-in-the-loop step.
Questions = Literal["hermes", "framework"]
#: Questions one call may ask through the framework before it is given up.
MAX_QUESTIONS: Final = 16


def check_questions(value: str) -> Questions:
    """``value`` as :data:`Questions`; raises ``ValueError`` naming the choices otherwise."""
    if value == "hermes":
        return "hermes"
    if value == "framework":
        return "framework"
    raise ValueError(f"questions must be 'hermes' or 'framework', not {value!r}")


class QuestionRecorder:
    """A user callback answering from ``answers`` in order; the first question past them is kept in
    :attr:`pending` and fails the call (:class:`NoAnswer`), to be asked by the framework."""

    def __init__(self, answers: Sequence[Any] = ()) -> None:
        self.answers = list(answers)
        self.pending: UserQuestion | None = None
        self._asked = 0

    def __call__(self, question: UserQuestion) -> Any:
        if self._asked < len(self.answers):
            self._asked += 1
            return self.answers[self._asked - 1]
        self.pending = question
        raise NoAnswer("the framework asks the user; the call waits for the answer")

    def payload(self) -> dict[str, Any]:
        """The pending question as the framework carries it (an interrupt's value, a deferred call's metadata)."""
        question = self.pending
        assert question is not None
        return {"hermes_question": question.question, "choices": list(question.choices),
                "multi_select": question.multi_select, "free_text": question.free_text, "tool": question.tool_name}
