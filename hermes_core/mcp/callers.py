"""Who answers an MCP server's questions during a call of one of its tools: the calling tool's user, model and
progress channel, taken where the call was made (its thread's context) and used from the MCP event loop.

A server asks its client in the middle of a call (elicitation, sampling) and reports progress on it; the
client's answerers are those of the call: under ``hermes mcp serve`` the serving client's own (elicitation through
a chain), in ``hermes tools call`` the terminal's, in a host the callbacks it set. No ``mcp`` import here: the
remote tool's handler builds a :class:`Caller` on every call.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..calls.progress import ProgressReporter

if TYPE_CHECKING:
    from ..calls.asking import Asking, ModelReply, ModelRequest, UserAnswer, UserQuestion

__all__ = ["Caller"]


@dataclass(frozen=True, eq=False)
class Caller:
    """The answerers of one tool call (or of the runtime, for what a server asks outside a call)."""

    #: The runtime's answerers (None: nobody can be asked).
    asking: Asking | None
    #: The calling thread's context: the caller's own callbacks (``caller_callbacks``) live there.
    context: contextvars.Context = field(default_factory=contextvars.copy_context)
    progress: ProgressReporter = field(default_factory=lambda: ProgressReporter(None))
    tool_name: str | None = None
    session_id: str | None = None

    @classmethod
    def here(cls, asking: Asking | None) -> Caller:
        """The answerers of the tool call running in this thread now."""
        from ..calls.toolcontext import ACTIVE

        context, call = ACTIVE.get()
        progress = context.progress_reporter() if context is not None else ProgressReporter(None)
        return cls(asking, contextvars.copy_context(), progress, call.tool_name if call else None,
                   call.session_id if call else None)

    def _run(self, function: Any, *args: Any) -> Any:
        return self.context.copy().run(function, *args)  # a copy: several questions may be asked at once

    def who_answers_user(self) -> str | None:
        """Why nobody can answer a question to the user here, or None when someone can."""
        if self.asking is None:
            return "no user can be asked here"
        found = self._run(self.asking.user_callback)
        return found if isinstance(found, str) else None

    def who_answers_model(self) -> str | None:
        """Why no model can be asked here, or None when one can."""
        if self.asking is None:
            return "no model can be asked here"
        found = self._run(self.asking.model_callback)
        return found if isinstance(found, str) else None

    def ask_user(self, question: UserQuestion, timeout: float | None = None) -> UserAnswer:
        """The user's answer (blocking: call from a worker thread); ``NoAnswer`` says why there is none."""
        from ..errors import NoAnswer

        if self.asking is None:
            raise NoAnswer("no user can be asked here")
        return self._run(self.asking.ask_user, question, timeout)

    def ask_model(self, request: ModelRequest, timeout: float | None = None) -> ModelReply:
        """The model's reply (blocking: call from a worker thread); ``NoAnswer`` says why there is none."""
        from ..errors import NoAnswer

        if self.asking is None:
            raise NoAnswer("no model can be asked here")
        return self._run(self.asking.ask_model, request, timeout)
