"""HTML to Markdown with trafilatura, in a child process with a deadline and a cap on its input.

Conversion time grows faster than the page (a 4 MB table takes minutes) and Python code cannot be
interrupted, so the conversion runs in ``python -m hermes_plugin_web.markdown``, which is killed when
``convert_timeout`` runs out, and it sees at most ``max_convert_bytes`` of the page.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .fetch import Page
from .settings import WebSettings
from .text import decode

#: Where this package's parent directory is, so the child imports this same copy of it.
_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)


class ConversionError(Exception):
    """The page could not be converted; the message is meant for the model."""


@dataclass(frozen=True)
class Markdown:
    """A converted page: title and main text (None when trafilatura finds none), and what was cut."""

    title: str | None
    content: str | None
    note: str | None = None


def html_to_markdown(page: Page, settings: WebSettings) -> Markdown:
    """Convert ``page`` in a child process; raises :class:`ConversionError`."""
    cap = settings.max_convert_bytes
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (_PACKAGE_ROOT, os.environ.get("PYTHONPATH"))))}
    try:
        child = subprocess.run([sys.executable, "-m", __name__, page.url, page.charset or ""], input=page.body[:cap],
                               capture_output=True, timeout=settings.convert_timeout, env=env)
    except subprocess.TimeoutExpired:
        raise ConversionError(f"converting {page.url} to Markdown took longer than {settings.convert_timeout:g} s "
                              "(plugin setting convert_timeout), and was stopped") from None
    if child.returncode:
        lines = child.stderr.decode(errors="replace").strip().splitlines()
        raise ConversionError(f"could not convert {page.url} to Markdown: {lines[-1] if lines else child.returncode}")
    title, content = json.loads(child.stdout)
    note = (f"the page has {len(page.body)} bytes; only its first {cap} were converted (plugin setting "
            "max_convert_bytes)") if len(page.body) > cap else None
    return Markdown(title, content, note)


def _convert(html: str | bytes, url: str) -> tuple[str | None, str | None]:
    """The page's title and main text as Markdown (None when trafilatura finds no main text)."""
    import trafilatura
    from trafilatura.metadata import extract_metadata
    from trafilatura.utils import load_html

    tree = load_html(html)
    metadata = extract_metadata(tree, default_url=url) if tree is not None else None
    markdown = trafilatura.extract(html, url=url, output_format="markdown", include_links=True)
    return (metadata.title if metadata else None), markdown


def main() -> None:
    """The child: the page's bytes on stdin, its URL and charset as arguments, ``[title, content]`` out."""
    url, charset = sys.argv[1], sys.argv[2] or None
    body = sys.stdin.buffer.read()
    try:
        # Without a declared charset, bytes let trafilatura detect the encoding from the document itself.
        result = _convert(decode(body, charset) if charset else body, url)
    except ImportError as exc:
        sys.exit(f"web_extract needs trafilatura to convert HTML: {exc}")
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
