"""Response bytes as text."""

from __future__ import annotations


def decode(body: bytes, charset: str | None) -> str:
    """``body`` in its declared charset (UTF-8 when none is declared or it is unknown)."""
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")
