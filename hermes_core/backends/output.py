"""Bounded capture of a command's output: the head and the tail are kept, the middle is counted (backends use it)."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["OutputBuffer"]


class OutputBuffer:
    """Thread-safe text sink keeping at most ``head_chars`` + ``tail_chars`` characters of a stream.

    Positions are absolute character offsets in the whole stream, so readers can ask for what came
    after the last thing they saw even when older text has been dropped.
    """

    def __init__(self, head_chars: int, tail_chars: int, listener: Callable[[str], object] | None = None) -> None:
        self._head_limit, self._tail_limit = head_chars, tail_chars
        self._head = self._tail = ""
        self._total = 0
        self._lock = threading.Lock()
        #: Hears each chunk as it is written, kept or not (a progress report; it must not raise).
        self._listener = listener

    def write(self, text: str) -> None:
        if self._listener is not None and text:
            self._listener(text)
        with self._lock:
            self._total += len(text)
            room = self._head_limit - len(self._head)
            if room > 0:
                self._head += text[:room]
                text = text[room:]
            if text and self._tail_limit:
                self._tail = (self._tail + text)[-self._tail_limit:]

    @property
    def total_chars(self) -> int:
        """Characters written so far, kept or not."""
        return self._total

    def text(self) -> str:
        """Everything kept, with a marker where characters were dropped."""
        return self.since(0)

    def since(self, position: int) -> str:
        """What was written from absolute ``position`` on, as far as it is still kept."""
        with self._lock:
            head, tail, total = self._head, self._tail, self._total
        tail_start = total - len(tail)
        parts = [head[position:]] if position < len(head) else []
        dropped = tail_start - max(position, len(head))
        if dropped > 0:
            parts.append(f"\n[... {dropped} characters omitted ...]\n")
        parts.append(tail[max(0, position - tail_start):])
        return "".join(parts)
