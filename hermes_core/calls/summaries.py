"""Summaries of long tool output (``web.summarize: true``, off by default), shared by ``web_extract`` and
``browser_snapshot``: text longer than ``web.summarize_threshold`` characters is condensed by a model — the
``auxiliary.web_extract`` endpoint when config.yaml names one (Hermes Agent's key, which its browser snapshots use
too), else ``ask_model`` (the host's model, the MCP client's sampling, the ``delegation`` endpoint) — and its full
text is saved in the results folder, its path beside the summary.

The text is untrusted: it is fenced as data, and the model is told to ignore instructions inside it. A failure
returns no summary and says why; the caller shows the text cut instead.
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path
from typing import Any, Final

from .auxiliary import auxiliary_model
from .toolcontext import tool_context

__all__ = ["DEFAULT_THRESHOLD", "MAX_INPUT", "MAX_SUMMARY_TOKENS", "SummarySettings", "save_full_text", "summarize"]

#: Characters past which a text is summarised when ``web.summarize`` is on.
DEFAULT_THRESHOLD: Final = 40_000
#: The most of a text sent to the model, in characters.
MAX_INPUT: Final = 400_000
MAX_SUMMARY_TOKENS: Final = 2_000
#: Seconds the model may take.
TIMEOUT: Final = 120.0


class SummarySettings:
    """``web.summarize`` and ``web.summarize_threshold`` of the calling runtime's config."""

    def __init__(self, web: dict[str, Any]) -> None:
        self.enabled = web.get("summarize") is True
        threshold = web.get("summarize_threshold", DEFAULT_THRESHOLD)
        self.threshold = threshold if isinstance(threshold, int) and not isinstance(threshold, bool) \
            and threshold >= 1000 else DEFAULT_THRESHOLD


def save_full_text(content: str, tool: str, url: str, folder: Path) -> Path:
    """Save ``content`` (what ``tool`` read at ``url``) in ``folder``, under a new name; its path."""
    folder.mkdir(parents=True, exist_ok=True)
    host = re.sub(r"[^A-Za-z0-9.-]", "_", url.split("://", 1)[-1].split("/", 1)[0])[:64]
    path = folder / f"{time.strftime('%Y%m%d-%H%M%S')}-{tool}-{host}-{uuid.uuid4().hex[:8]}.md"
    path.write_text(content, encoding="utf-8")
    return path


def summarize(content: str, *, instructions: str, header: str, saved: Path,
              kind: str = "page") -> tuple[str | None, str | None]:
    """A model's summary of ``content`` (a ``kind``, described by ``header``; its full text at ``saved``) as
    ``instructions`` ask for it, or ``None`` and why."""
    messages = [{"role": "system", "content": instructions},
                {"role": "user", "content": f"{header}\n\n<page>\n{content[:MAX_INPUT]}\n</page>"}]
    try:
        model = auxiliary_model("web_extract")
        if model is not None:
            text = model.complete(messages, max_tokens=MAX_SUMMARY_TOKENS)
        else:
            text = tool_context().ask_model(messages, max_tokens=MAX_SUMMARY_TOKENS, purpose="web_extract",
                                            timeout=TIMEOUT).text
    except Exception as exc:  # the text still comes back, cut
        return None, f"the summary failed ({exc}); the {kind} is cut instead"
    text = text.strip()
    if not text:
        return None, f"the model returned an empty summary; the {kind} is cut instead"
    return (f"{text}\n\n[Summary by a model of a {kind} of {len(content):,} characters. The full text is saved to "
            f"{saved}; read it with read_file path={str(saved)!r}.]"), None
