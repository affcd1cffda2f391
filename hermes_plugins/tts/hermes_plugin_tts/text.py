"""Long text in pieces an engine takes whole: cut between sentences, else between words, never inside one."""

from __future__ import annotations

import re

__all__ = ["chunks"]

_SENTENCE_END = re.compile(r"(?<=[.!?…。！？])\s+|\n\s*\n")


def chunks(text: str, limit: int) -> list[str]:
    """``text`` as pieces of at most ``limit`` characters, in order, that together say all of it."""
    text = text.strip()
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    current = ""
    for sentence in _split(text, limit):
        if current and len(current) + 1 + len(sentence) > limit:
            pieces.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        pieces.append(current)
    return pieces


def _split(text: str, limit: int) -> list[str]:
    """Sentences, each within ``limit`` (a longer one cut between words, a longer word cut where it must be)."""
    found: list[str] = []
    for sentence in (part.strip() for part in _SENTENCE_END.split(text)):
        while len(sentence) > limit:
            cut = sentence.rfind(" ", 0, limit + 1)
            cut = cut if cut > 0 else limit
            found.append(sentence[:cut].strip())
            sentence = sentence[cut:].strip()
        if sentence:
            found.append(sentence)
    return found
