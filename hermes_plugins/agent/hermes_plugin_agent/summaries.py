"""Summaries of found sessions by the auxiliary model Hermes Agent configures for session search
(``auxiliary.session_search``: an OpenAI-compatible ``base_url``, ``model``, ``api_key``, ``timeout``), asked only
when one is configured. A failed request leaves the messages to speak for themselves."""

from __future__ import annotations

import json
import logging
import os
import urllib.request
from typing import Any, Final

log = logging.getLogger(__name__)

_PROMPT: Final = ("Summarise, in at most three sentences, what this past conversation says about \"{query}\": the "
                  "goal, what was decided or done, and where it was left. Answer with the summary only.\n\n{messages}")
_MAX_CHARS: Final = 12_000


def summarize(model: dict[str, Any], query: str, result: dict[str, Any]) -> str | None:
    """The model's summary of one discovered session (its opening, the match in context, its end), or None."""
    lines = [f"{m.get('role')}: {m.get('content')}" for part in ("bookend_start", "messages", "bookend_end")
             for m in result.get(part, []) if isinstance(m.get("content"), str) and m["content"]]
    body = {"model": str(model["model"]), "messages": [
        {"role": "user", "content": _PROMPT.format(query=query, messages="\n".join(lines)[:_MAX_CHARS])}]}
    key = str(model.get("api_key") or os.environ.get("OPENAI_API_KEY", ""))
    request = urllib.request.Request(str(model["base_url"]).rstrip("/") + "/chat/completions",
                                     data=json.dumps(body).encode(), headers={
                                         "Content-Type": "application/json",
                                         **({"Authorization": f"Bearer {key}"} if key else {})})
    try:
        with urllib.request.urlopen(request, timeout=float(model.get("timeout") or 60)) as response:  # the user's URL
            reply = json.loads(response.read(1_000_000))
        return str(reply["choices"][0]["message"]["content"]).strip() or None
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        log.warning("session_search: the summary model at %s failed: %s", model.get("base_url"), exc)
        return None
