"""Progress of a long tool call: what a handler reports (``tool_context().progress(...)``) and who hears it.

The caller's progress callback hears it (``hermes mcp serve`` turns it into MCP progress notifications, ``hermes
tools call`` into a spinner or a bar), else the runtime's (``Runtime.set_progress_callback``); with neither,
reporting costs a handler one look-up. A callback that raises or is slow never fails the call: errors are logged.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["Progress", "ProgressCallback", "ProgressReporter"]

log = logging.getLogger(__name__)

#: Longest message a progress report carries (a line of output can be anything).
MESSAGE_CHARS: Final = 200
#: Reports closer together than this are dropped (a command printing thousands of lines).
MIN_INTERVAL: Final = 0.1


@dataclass(frozen=True)
class Progress:
    """How far one tool call got."""

    #: Units done so far (lines of output, pages, steps...); never decreases within one call.
    done: float
    #: Units in all, when known.
    total: float | None = None
    #: What is happening now, one line.
    message: str | None = None
    tool_name: str | None = None
    #: The id of the call (the model's tool call id, or ``mcp-<request>`` under ``hermes mcp serve``).
    tool_call_id: str | None = None
    session_id: str | None = None


#: Hears progress; its return value is ignored.
ProgressCallback = Callable[[Progress], Any]


class ProgressReporter:
    """Reports the progress of one tool call to its listener, from any thread (falsy when nobody listens).

    A report less than :data:`MIN_INTERVAL` after the last one sent is dropped, unless it reaches ``total``; so is
    one that goes backwards."""

    def __init__(self, listener: ProgressCallback | None, tool_name: str | None = None,
                 tool_call_id: str | None = None, session_id: str | None = None) -> None:
        self._listener = listener
        self._tool_name, self._tool_call_id, self._session_id = tool_name, tool_call_id, session_id
        self._lock = threading.Lock()
        self._sent = float("-inf")
        self._done = 0.0
        self._lines = 0
        self._partial = ""

    def __bool__(self) -> bool:
        return self._listener is not None

    def __call__(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Report ``done`` of ``total`` units, with what is happening now."""
        listener = self._listener
        if listener is None:
            return
        now = time.monotonic()
        with self._lock:
            if done < self._done or (now - self._sent < MIN_INTERVAL and (total is None or done < total)):
                return
            self._done, self._sent = done, now
        shown = None if message is None else " ".join(str(message).split())[:MESSAGE_CHARS]
        try:
            listener(Progress(done, total, shown, self._tool_name, self._tool_call_id, self._session_id))
        except Exception:
            log.exception("the progress callback of tool %r failed; ignored", self._tool_name)

    def output(self, text: str) -> None:
        """Count the lines of a command's output as it arrives (``text`` is the next chunk): progress in lines,
        with the last complete line as the message."""
        if self._listener is None:
            return
        with self._lock:
            lines = (self._partial + text).split("\n")
            self._partial = lines.pop()[-MESSAGE_CHARS:]
            self._lines += len(lines)
            count = self._lines
        last = next((line for line in reversed(lines) if line.strip()), None)
        if lines:
            self(count, None, last)
