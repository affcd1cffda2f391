"""Summaries of found sessions by a model, asked only when one can answer: the host's model callback, the MCP
client's sampling under ``hermes mcp serve``, or the auxiliary model Hermes Agent configures for session search
(``auxiliary.session_search``: an OpenAI-compatible ``base_url``, ``model``, ``api_key``, ``timeout``). A failed
request leaves the messages to speak for themselves."""

from __future__ import annotations

import logging
from typing import Any, Final

from hermes_core.errors import LlmEndpointError, NoAnswer
from hermes_core.plugin import AuxiliaryModel, ToolContext, auxiliary_model

log = logging.getLogger(__name__)

_PROMPT: Final = ("Summarise, in at most three sentences, what this past conversation says about \"{query}\": the "
                  "goal, what was decided or done, and where it was left. Answer with the summary only.\n\n{messages}")
_MAX_CHARS: Final = 12_000
_MAX_TOKENS: Final = 400


def summary_model(context: ToolContext) -> AuxiliaryModel | str | None:
    """What :func:`summarize` asks after the host and the caller (``auxiliary.session_search``, or why there is
    none); None when no model at all can be asked, so no summaries are written."""
    try:
        endpoint: AuxiliaryModel | str = auxiliary_model("session_search") or "auxiliary.session_search is not set"
    except LlmEndpointError as exc:
        endpoint = str(exc)
    return None if context.model_unavailable(endpoint) else endpoint


def summarize(context: ToolContext, endpoint: AuxiliaryModel | str, query: str, result: dict[str, Any]) -> str | None:
    """The model's summary of one discovered session (its opening, the match in context, its end), or None."""
    lines = [f"{m.get('role')}: {m.get('content')}" for part in ("bookend_start", "messages", "bookend_end")
             for m in result.get(part, []) if isinstance(m.get("content"), str) and m["content"]]
    prompt = _PROMPT.format(query=query, messages="\n".join(lines)[:_MAX_CHARS])
    try:
        reply = context.ask_model([{"role": "user", "content": prompt}], max_tokens=_MAX_TOKENS,
                                  purpose="session_search", endpoint=endpoint)
    except NoAnswer as exc:
        log.warning("session_search: no summary: %s", exc)
        return None
    return reply.text.strip() or None
