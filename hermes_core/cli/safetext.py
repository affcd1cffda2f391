"""What the CLI prints that came from a plugin or an MCP server cannot drive the terminal.

Names, descriptions, reasons and results may hold control characters (NUL, CR, newlines in a name),
escape sequences (an OSC that retitles the window or writes the clipboard, a CSI that moves the cursor)
and bidirectional overrides (U+202E shows text reversed). :func:`printable` replaces each with a visible
escape (``\\x1b``, ``\\u202e``); :func:`json_safe` escapes them inside JSON strings; :class:`SafeStream`
applies :func:`printable` to everything the ``hermes`` command writes, keeping its own colours (SGR
sequences) and line breaks.
"""

from __future__ import annotations

import re
from typing import Any, Final, TextIO

__all__ = ["SafeStream", "json_safe", "printable"]

# C0 and C1 controls, DEL, and the format characters that reorder or hide text (bidi embeddings, overrides
# and isolates, marks, zero-width characters, the BOM, the line and paragraph separators).
_UNSAFE: Final = "\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
_UNSAFE_CHAR: Final = re.compile(f"[{_UNSAFE}]")
_UNSAFE_OR_NEWLINE: Final = re.compile(f"[{_UNSAFE}\n\t]")
#: A colour sequence (SGR): the one escape sequence the CLI writes itself.
_COLOUR: Final = re.compile(r"\x1b\[[0-9;]{0,32}m")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char) or (
        f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def printable(text: str, *, lines: bool = True) -> str:
    """``text`` with every control, escape and bidi character shown as an escape; ``lines``: keep line breaks
    and tabs (a cell or a name keeps none)."""
    return (_UNSAFE_CHAR if lines else _UNSAFE_OR_NEWLINE).sub(_escape, text)


def json_safe(text: str) -> str:
    """JSON text with the characters :func:`printable` escapes written as ``\\uXXXX`` (still the same JSON)."""
    return _UNSAFE_CHAR.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class SafeStream:
    """A text stream that writes :func:`printable` text to ``inner``, keeping colour sequences."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        parts = _COLOUR.split(text)
        colours = _COLOUR.findall(text)
        safe = "".join(printable(part.replace("\r\n", "\n")) + (colours[i] if i < len(colours) else "")
                       for i, part in enumerate(parts))
        self.inner.write(safe)
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, buffer...
        return getattr(self.inner, name)
