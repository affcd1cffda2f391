"""The input of ``hermes mcp serve`` over stdio: JSON-RPC lines, each capped while it is read.

A line longer than the cap is never held whole: past the cap its bytes are read and dropped up to the newline,
so memory stays within the cap whatever the client sends. The line is then answered, when its start names a
request id, with an error for that id (:attr:`CappedLines.refuse`), and the next line is read as usual.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable
from typing import BinaryIO, Final

import anyio.to_thread

__all__ = ["MAX_LINE_BYTES", "CappedLines", "claim_stdin"]

#: The longest JSON-RPC message the server reads (a tool call's arguments included).
MAX_LINE_BYTES: Final = 16 * 1024 * 1024
_CHUNK: Final = 64 * 1024
#: How much of an oversized line is kept to find its request id.
_PREFIX: Final = 4096
#: The request id of a JSON-RPC message, when it comes before its ``params`` (as SDKs write it).
_ID: Final = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,256}")')


class CappedLines:
    """An async iterator of the text lines read from ``stream`` (binary), each at most ``limit`` bytes.

    ``refuse`` (set by the server once it can answer) is awaited with the request id of each line over the cap,
    when its first bytes name one (``None`` otherwise)."""

    def __init__(self, stream: BinaryIO, limit: int = MAX_LINE_BYTES) -> None:
        self._stream = stream
        self._limit = limit
        self._buffer = bytearray()
        self._eof = False
        self.refuse: Callable[[int | str | None], Awaitable[None]] | None = None

    def __aiter__(self) -> CappedLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line, oversized = await anyio.to_thread.run_sync(self._next_line, abandon_on_cancel=True)
            if line is None:
                raise StopAsyncIteration
            if not oversized:
                return line.decode("utf-8", errors="replace")
            if self.refuse is not None:
                await self.refuse(_request_id(line))

    def _next_line(self) -> tuple[bytes | None, bool]:
        """The next line and whether it was over the cap (then only its start); ``(None, False)`` at the end."""
        oversized = False
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[:end + 1]
                return (line[:_PREFIX] if oversized else line), oversized
            if len(self._buffer) > self._limit:  # keep the start (for its id), drop the rest as it comes
                oversized = True
                del self._buffer[_PREFIX:]
            if self._eof:
                if not self._buffer:
                    return None, False
                line = bytes(self._buffer)
                self._buffer.clear()
                return line, oversized
            chunk = self._stream.read(_CHUNK)
            if not chunk:
                self._eof = True
            elif oversized and b"\n" not in chunk:
                continue
            else:
                self._buffer += chunk


def _request_id(start: bytes) -> int | str | None:
    """The id of the request that starts with ``start``, if it names one before its parameters."""
    params = start.find(b'"params"')
    found = _ID.search(start, 0, params if params >= 0 else len(start))
    if found is None:
        return None
    value = found.group(1)
    return int(value) if value[:1] != b'"' else value[1:-1].decode("utf-8", errors="replace")


def claim_stdin(limit: int = MAX_LINE_BYTES) -> CappedLines:
    """Read the protocol from the real standard input, capped; anything else reading stdin from now on (a plugin,
    a child process) reads nothing."""
    wire = os.dup(0)
    empty = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(empty, 0)
    finally:
        os.close(empty)
    return CappedLines(os.fdopen(wire, "rb", buffering=0), limit)
