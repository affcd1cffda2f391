"""``clarify``: ask the user a question mid-task, through whoever answers the runtime's questions (a terminal
prompt, an MCP client's elicitation, a framework's human-in-the-loop, the host's callback)."""

from __future__ import annotations

import json
from typing import Any, Final

from hermes_core.errors import NoAnswer
from hermes_core.plugin import tool_context, tool_error

__all__ = ["MAX_CHOICES", "clarify"]

#: Choices the model may offer; the user may always type an answer of their own instead.
MAX_CHOICES: Final = 4


def clarify(args: dict[str, Any], **kwargs: Any) -> str:
    """Ask the user ``question`` (with up to four ``choices``) and return their answer (Hermes Agent's shape)."""
    question = str(args.get("question") or "").strip()
    if not question:
        return tool_error("Question text is required.")
    choices = [text for text in (str(choice).strip() for choice in args.get("choices") or []) if text][:MAX_CHOICES]
    multi_select = bool(args.get("multi_select")) and bool(choices)
    try:
        answer = tool_context().ask_user(question, choices, multi_select=multi_select)
    except NoAnswer as exc:
        return tool_error(f"clarify could not ask the user: {exc}")
    result: dict[str, Any] = {"question": question, "choices_offered": choices or None, "user_response": answer.text}
    if multi_select:
        result["selected"] = list(answer.selected)
    return json.dumps(result, ensure_ascii=False)
