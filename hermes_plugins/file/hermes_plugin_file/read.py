"""read_file: a window of a text file's lines, each prefixed with its line number."""

from __future__ import annotations

import io
from typing import Any, Final

from .results import FileToolError, file_tool
from .textfile import open_text_file
from .workspace import resolve_readable, workspace_root

DEFAULT_LIMIT: Final = 500
MAX_LINE_CHARS: Final = 2000
MAX_CONTENT_CHARS: Final = 100_000


def _numbered(number: int, line: str) -> str:
    text = line.rstrip("\n")
    if len(text) > MAX_LINE_CHARS:
        text = f"{text[:MAX_LINE_CHARS]}… [line truncated, {len(text)} chars]"
    return f"{number:>6}|{text}"


@file_tool
def read_file(args: dict[str, Any]) -> dict[str, Any]:
    """Return lines ``offset`` to ``offset + limit - 1`` (1-based), at most MAX_CONTENT_CHARS of them."""
    offset, limit = args.get("offset", 1), max(1, args.get("limit", DEFAULT_LIMIT))  # Hermes Agent's schema allows 0
    if offset < 1:
        raise FileToolError(f"offset ({offset}) must be at least 1")
    root = workspace_root()
    path, shown = resolve_readable(args["path"], root)

    lines: list[str] = []
    chars, total, full = 0, 0, False
    # Streamed so memory stays bounded; the scan goes on to EOF only to count the lines.
    with open_text_file(path, shown) as raw, io.TextIOWrapper(raw, encoding="utf-8", errors="replace") as stream:
        for total, line in enumerate(stream, 1):
            if total < offset or full or len(lines) >= limit:
                continue
            entry = _numbered(total, line)
            if lines and chars + len(entry) > MAX_CONTENT_CHARS:
                full = True
                continue
            lines.append(entry)
            chars += len(entry) + 1
    if offset > max(total, 1):
        raise FileToolError(f"offset {offset} is past the end of {shown!r}, which has {total} lines")

    result: dict[str, Any] = {
        "path": shown,
        "content": "\n".join(lines),
        "offset": offset,
        "lines_returned": len(lines),
        "total_lines": total,
    }
    next_offset = offset + len(lines)
    if next_offset <= total:
        result["next_offset"] = next_offset
        result["note"] = f"more lines follow; call read_file again with offset={next_offset}"
    return result
