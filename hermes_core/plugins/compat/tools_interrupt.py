"""Shim of Hermes Agent's ``tools.interrupt``: per-thread interrupt flags.

Hermes never interrupts a running handler itself, so ``is_interrupted()`` is true only for a thread that
plugin code flagged with ``set_interrupt(True, thread_id)``.
"""

from __future__ import annotations

import threading

__all__ = ["clear_current_thread_interrupt", "is_interrupted", "set_interrupt"]

_interrupted: set[int] = set()
_lock = threading.Lock()


def set_interrupt(active: bool, thread_id: int | None = None) -> None:
    """Flag (or clear) an interrupt for ``thread_id`` (default: the current thread)."""
    tid = threading.get_ident() if thread_id is None else thread_id
    with _lock:
        if active:
            _interrupted.add(tid)
        else:
            _interrupted.discard(tid)


def is_interrupted() -> bool:
    """Whether an interrupt was flagged for the current thread."""
    with _lock:
        return threading.get_ident() in _interrupted


def clear_current_thread_interrupt() -> None:
    """Clear the current thread's flag."""
    set_interrupt(False)
