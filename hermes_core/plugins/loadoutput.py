"""What a plugin says while it is imported and registered: WARNING+ log records, ``warnings.warn`` and writes to
``sys.stderr``, kept (bounded) for its record so that ``plugins list`` never shows a silent "loaded".

By default capture tees: log records still reach the handlers they would reach (Python's last-resort
handler included), warnings are still shown, and stderr writes still go to the terminal. The ``hermes`` command
turns that off unless it runs with ``-v`` (:func:`echo_load_output`): what plugins say while loading then goes to
their records only (as Hermes Agent prints none of it), besides the handlers a plugin installs itself. What is kept is
attributed through a context variable, so only the loading plugin's own thread (and the threads it runs
its code on) is captured, not other threads writing meanwhile.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any, TextIO

__all__ = ["MAX_ITEMS", "MAX_ITEM_CHARS", "LoadOutput", "capturing", "echo_load_output"]

#: Bounds on what one plugin's load keeps: items, and characters per item.
MAX_ITEMS = 20
MAX_ITEM_CHARS = 1000

_ACTIVE: contextvars.ContextVar[LoadOutput | None] = contextvars.ContextVar("hermes_load_output", default=None)
#: Whether what a loading plugin says also reaches the terminal (see :func:`echo_load_output`).
_echo = True
#: Set while captured text is being passed on to the terminal (so stderr does not capture it a second time).
_PASSING_ON: contextvars.ContextVar[bool] = contextvars.ContextVar("hermes_load_output_passing_on", default=False)


def echo_load_output(echo: bool) -> None:
    """Whether what plugins log, warn or write to stderr while loading is also shown (``True``, the default) or
    kept for their records only."""
    global _echo
    _echo = echo


class LoadOutput:
    """The output of one plugin's load, as warning texts (at most :data:`MAX_ITEMS`, each cut to
    :data:`MAX_ITEM_CHARS`)."""

    def __init__(self) -> None:
        self._items: list[str] = []
        self._dropped = 0
        self._stderr = ""
        self._lock = threading.Lock()

    def add(self, text: str) -> None:
        text = text.strip()
        if not text:
            return
        if len(text) > MAX_ITEM_CHARS:
            text = text[:MAX_ITEM_CHARS - 1] + "…"
        with self._lock:
            if len(self._items) < MAX_ITEMS:
                self._items.append(text)
            else:
                self._dropped += 1

    def stderr(self, text: str) -> None:
        """Stderr comes in pieces: whole lines are kept, one item per run of lines written together."""
        with self._lock:
            self._stderr += text
            if len(self._stderr) > MAX_ITEM_CHARS * 2:
                self._stderr = self._stderr[:MAX_ITEM_CHARS * 2]

    def items(self) -> list[str]:
        """What was kept, stderr last; a last item says how much more there was."""
        with self._lock:
            items, dropped, pending = list(self._items), self._dropped, self._stderr
        if pending.strip():
            text = " | ".join(line.strip() for line in pending.strip().splitlines() if line.strip())
            items.append(("wrote to stderr: " + text)[:MAX_ITEM_CHARS])
        if dropped:
            items.append(f"{dropped} more warnings not kept" + (" (the terminal showed them)" if _echo else ""))
        return items


class _StderrTee:
    """``sys.stderr`` while plugins load: everything goes to the real stream; a loading plugin's text is kept too."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        output = _ACTIVE.get()
        if output is not None and not _PASSING_ON.get() and isinstance(text, str):
            output.stderr(text)
            if not _echo:
                return len(text)
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class _LogCapture(logging.Handler):
    """On the root logger while plugins load: keeps the loading plugin's WARNING+ records."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        output = _ACTIVE.get()
        if output is None or record.name.split(".")[0] == _OWN:  # Hermes' own records say it on the record already
            return
        text = f"logged {record.levelname} ({record.name}): {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text += f" [{type(exc).__name__}: {exc}]"
        output.add(text)
        # This handler stops Python's last-resort handler from printing what nothing else handles: print it.
        last_resort = logging.lastResort
        if _echo and last_resort is not None and record.levelno >= last_resort.level and not _handled_elsewhere(record):
            token = _PASSING_ON.set(True)
            try:
                last_resort.handle(record)
            finally:
                _PASSING_ON.reset(token)


def _handled_elsewhere(record: logging.LogRecord) -> bool:
    """Whether a handler other than the capture's sees ``record`` (the walk ``Logger.callHandlers`` makes)."""
    logger: logging.Logger | None = logging.getLogger(record.name)
    while logger is not None:
        if any(handler is not _handler for handler in logger.handlers):
            return True
        if not logger.propagate:
            break
        logger = logger.parent
    return False


_OWN = __name__.split(".")[0]  # hermes_core
_handler = _LogCapture()
_lock = threading.Lock()
_users = 0
_original_showwarning: Any = None


def _showwarning(message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None,
                 line: str | None = None) -> None:
    output = _ACTIVE.get()
    if output is not None:
        output.add(f"warnings.warn {category.__name__}: {message} ({filename}:{lineno})")
        if not _echo:
            return
    token = _PASSING_ON.set(True)
    try:
        (_original_showwarning or warnings._showwarning_orig)(  # type: ignore[attr-defined]
            message, category, filename, lineno, file, line)
    finally:
        _PASSING_ON.reset(token)


def _install() -> None:
    global _users, _original_showwarning
    with _lock:
        _users += 1
        if _users > 1:
            return
        if not isinstance(sys.stderr, _StderrTee) and sys.stderr is not None:
            sys.stderr = _StderrTee(sys.stderr)
        logging.getLogger().addHandler(_handler)
        if warnings.showwarning is not _showwarning:
            _original_showwarning = warnings.showwarning
            warnings.showwarning = _showwarning


def _uninstall() -> None:
    global _users, _original_showwarning
    with _lock:
        _users -= 1
        if _users:
            return
        if isinstance(sys.stderr, _StderrTee):
            sys.stderr = sys.stderr.stream
        logging.getLogger().removeHandler(_handler)
        if warnings.showwarning is _showwarning:
            warnings.showwarning = _original_showwarning
        _original_showwarning = None


@contextlib.contextmanager
def capturing() -> Iterator[LoadOutput]:
    """While the block runs, what the current context's code logs, warns or writes to stderr is kept in the
    :class:`LoadOutput` it yields (and still reaches the terminal)."""
    output = LoadOutput()
    token = _ACTIVE.set(output)
    _install()
    try:
        yield output
    finally:
        _uninstall()
        _ACTIVE.reset(token)
