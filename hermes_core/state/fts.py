"""Model-chosen search text made safe for an FTS5 ``MATCH`` with Hermes Agent's rules: balanced quoted phrases,
``OR``/``NOT``/``AND`` and ``prefix*`` are kept; other FTS5 syntax (parentheses, ``:`` column filters, ``^``, stray
quotes) is dropped; hyphenated and dotted words (``chat-send``, ``P2.2``) become phrases."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_QUERY_CHARS", "count_cjk", "fts_query", "has_cjk"]

MAX_QUERY_CHARS: Final = 2048
_SPECIAL = re.compile(r'[+{}():"^]')
_OPERATORS: Final = frozenset({"AND", "OR", "NOT"})


def fts_query(query: str) -> str:
    """``query`` as an FTS5 expression that cannot raise a syntax error (empty when nothing is left)."""
    query = query[:MAX_QUERY_CHARS]
    phrases: list[str] = []
    pieces: list[str] = []
    index = 0
    while index < len(query):  # one linear scan: quoted phrases set aside, an unmatched quote becomes a space
        if query[index] != '"':
            pieces.append(query[index])
            index += 1
            continue
        end = query.find('"', index + 1)
        if end == -1:
            pieces.append(" ")
            index += 1
            continue
        phrases.append(query[index:end + 1])
        pieces.append(f"\x00{len(phrases) - 1}\x00")
        index = end + 1
    text = _SPECIAL.sub(" ", "".join(pieces))
    text = re.sub(r"\*+", "*", text)
    text = re.sub(r"(^|\s)\*", r"\1", text)
    text = re.sub(r"(?i)^(AND|OR|NOT)\b\s*", "", text.strip())
    text = re.sub(r"(?i)\s+(AND|OR|NOT)\s*$", "", text.strip())
    text = re.sub(r"\b(\w+(?:[._-]\w+)+)\b", r'"\1"', text)
    for number, phrase in enumerate(phrases):
        text = text.replace(f"\x00{number}\x00", phrase)
    return text.strip()


def _cjk(codepoint: int) -> bool:
    return (0x4E00 <= codepoint <= 0x9FFF or 0x3400 <= codepoint <= 0x4DBF or 0x20000 <= codepoint <= 0x2A6DF
            or 0x3000 <= codepoint <= 0x30FF or 0xAC00 <= codepoint <= 0xD7AF)


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds Chinese, Japanese or Korean characters (the word tokenizer splits those apart)."""
    return any(_cjk(ord(ch)) for ch in text)


def count_cjk(text: str) -> int:
    return sum(1 for ch in text if _cjk(ord(ch)))


def cjk_terms(query: str) -> list[str]:
    """The terms of a CJK query, its operators left out."""
    return [term for term in query.strip('"').split() if term.upper() not in _OPERATORS] or [query.strip('"')]
