"""A background process's output as its terminal shows it: a VT100 screen (pyte) with scrollback.

The screen is fed from the process's kept output when it is read, so a process nobody reads costs nothing.
pyte is imported with the first screen.
"""

from __future__ import annotations

import threading
from typing import Any, Final

from hermes_core.backends import OutputBuffer
from hermes_core.backends.shell import PTY_SIZE

__all__ = ["TerminalScreen"]

#: Lines of scrollback kept above the visible screen.
SCROLLBACK_LINES: Final = 5000


class TerminalScreen:
    """The screen of one process's terminal, the size of the backends' pseudo-terminals."""

    def __init__(self) -> None:
        import pyte

        self.rows, self.columns = PTY_SIZE
        self._screen: Any = pyte.HistoryScreen(self.columns, self.rows, history=SCROLLBACK_LINES)
        # the pseudo-terminals pass "\n" as it is (no carriage return added), like a pipe: a line feed starts a line
        self._screen.set_mode(pyte.modes.LNM)
        self._stream = pyte.Stream(self._screen)
        self._position = 0
        self._lock = threading.Lock()

    def read(self, output: OutputBuffer) -> tuple[list[str], int]:
        """Every line (scrollback, then the visible screen) after what ``output`` has added, and the cursor's row
        on the visible screen."""
        with self._lock:
            total = output.total_chars
            self._stream.feed(output.since(self._position))
            self._position = total
            history = ["".join(line[x].data for x in range(self.columns)).rstrip()
                       for line in self._screen.history.top]
            return history + [line.rstrip() for line in self._screen.display], int(self._screen.cursor.y)
