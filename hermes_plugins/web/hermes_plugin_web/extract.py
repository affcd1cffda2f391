"""``web_extract``: a URL's main text as Markdown (HTML through trafilatura; other text as is)."""

from __future__ import annotations

import json
from typing import Any

from hermes_core import tool_error

from .fetch import FetchError, Page, fetch
from .settings import SettingsError, load_settings

HTML_MEDIA_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def web_extract(args: dict[str, Any], **kwargs: Any) -> str:
    """Fetch ``args["url"]`` and return ``{url, title, content_type, content}`` as JSON."""
    url = str(args.get("url") or "").strip()
    if not url:
        return _error("url is required: give an http or https URL")
    try:
        page = fetch(url, load_settings())
    except (SettingsError, FetchError) as exc:
        return _error(str(exc))
    if page.media_type in HTML_MEDIA_TYPES:
        try:
            title, content = html_to_markdown(page)
        except ImportError as exc:
            return _error(f"web_extract needs trafilatura to convert HTML: {exc}")
        if content is None:
            return _error(f"no main text found in {page.url} (the page may need JavaScript to render)")
    else:
        title, content = None, decode(page)
    return json.dumps(
        {"url": page.url, "title": title, "content_type": page.media_type, "content": content},
        ensure_ascii=False,
    )


def html_to_markdown(page: Page) -> tuple[str | None, str | None]:
    """The page's title and main text as Markdown (None when trafilatura finds no main text)."""
    import trafilatura  # slow to import: only when a page needs it
    from trafilatura.metadata import extract_metadata
    from trafilatura.utils import load_html

    # Without a declared charset, bytes let trafilatura detect the encoding from the document itself.
    html: str | bytes = decode(page) if page.charset else page.body
    tree = load_html(html)
    metadata = extract_metadata(tree, default_url=page.url) if tree is not None else None
    markdown = trafilatura.extract(html, url=page.url, output_format="markdown", include_links=True)
    return (metadata.title if metadata else None), markdown


def decode(page: Page) -> str:
    """The body as text, in its declared charset (UTF-8 when none is declared or it is unknown)."""
    try:
        return page.body.decode(page.charset or "utf-8", errors="replace")
    except LookupError:
        return page.body.decode("utf-8", errors="replace")


def _error(message: str) -> str:
    return tool_error(message)
