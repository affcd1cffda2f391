"""``web_extract``: a URL's main text as Markdown (HTML through trafilatura; other text as is)."""

from __future__ import annotations

import json
from typing import Any

from hermes_core.plugin import tool_context, tool_error

from .fetch import FetchError, fetch
from .markdown import ConversionError, Markdown, html_to_markdown
from .settings import SettingsError, load_settings
from .text import decode

HTML_MEDIA_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def web_extract(args: dict[str, Any], **kwargs: Any) -> str:
    """Fetch ``args["url"]`` and return ``{url, title, content_type, content}`` (and a ``note`` when cut) as JSON."""
    url = str(args.get("url") or "").strip()
    if not url:
        return _error("url is required: give an http or https URL")
    try:
        settings = load_settings()
        progress = tool_context().progress_reporter()
        progress(0, 2, f"fetching {url}")
        page = fetch(url, settings)
        progress(1, 2, f"converting {len(page.body)} bytes of {page.media_type}")
        if page.media_type in HTML_MEDIA_TYPES:
            converted = html_to_markdown(page, settings)
        else:
            converted = Markdown(None, decode(page.body, page.charset))
    except (SettingsError, FetchError, ConversionError) as exc:
        return _error(str(exc))
    if converted.content is None:
        return _error(f"no main text found in {page.url} (the page may need JavaScript to render)")
    result = {"url": page.url, "title": converted.title, "content_type": page.media_type, "content": converted.content}
    if converted.note:
        result["note"] = converted.note
    return json.dumps(result, ensure_ascii=False)


def _error(message: str) -> str:
    return tool_error(message)
