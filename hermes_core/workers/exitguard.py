"""Plugin code may not end or interrupt its caller: ``os._exit`` on Hermes' own worker threads raises instead of
ending the process, and a ``KeyboardInterrupt`` the plugin raised itself is told apart from the user's Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any, NoReturn

__all__ = ["PluginExit", "refusing_exit", "sigints", "user_interrupted", "watch_sigint"]

_local = threading.local()
_lock = threading.Lock()
_real_exit = os._exit
_process = os.getpid()


class PluginExit(SystemExit):
    """Plugin code called ``os._exit`` where Hermes runs it (a plugin's load, a tool's check)."""


def _guarded_exit(status: int) -> NoReturn:
    if getattr(_local, "refusing", False) and os.getpid() == _process:
        raise PluginExit(f"the plugin called os._exit({status})")
    _real_exit(status)


@contextlib.contextmanager
def refusing_exit() -> Iterator[None]:
    """On this thread, for the block, ``os._exit`` raises :class:`PluginExit`; every other thread (and a
    forked child) keeps the real one."""
    with _lock:
        if os._exit is not _guarded_exit:
            os._exit = _guarded_exit
    _local.refusing = True
    try:
        yield
    finally:
        _local.refusing = False


# -- Ctrl-C: the user's, or a plugin's own KeyboardInterrupt ----------------------------------------------------

_sigints = 0  # SIGINTs delivered to this process since the watch began (only the main thread writes it)
_watching: Callable[[int, FrameType | None], Any] | None = None


def _counting(handler: Callable[[int, FrameType | None], Any]) -> Callable[[int, FrameType | None], Any]:
    def on_sigint(signum: int, frame: FrameType | None) -> Any:
        global _sigints
        _sigints += 1
        return handler(signum, frame)

    return on_sigint


def watch_sigint() -> None:
    """Count the SIGINTs delivered from now on, wrapping the handler in force (which still runs). Only the main
    thread may install a handler; elsewhere, or when SIGINT is ignored or left to the system, nothing changes."""
    global _watching
    if threading.current_thread() is not threading.main_thread():
        return
    handler = signal.getsignal(signal.SIGINT)
    if handler is _watching or not callable(handler):
        return
    _watching = _counting(handler)
    signal.signal(signal.SIGINT, _watching)


def sigints() -> int:
    """The count to give :func:`user_interrupted` later (read before running plugin code)."""
    return _sigints


def user_interrupted(exc: BaseException, since: int) -> bool:
    """Whether ``exc``, caught around plugin code, is the user's Ctrl-C, which must stop the caller.

    A ``KeyboardInterrupt`` is the user's when it reaches the main thread and a SIGINT was delivered since
    ``since``; also when Hermes cannot count them there (the handler was replaced after :func:`watch_sigint`),
    so a real Ctrl-C is never lost. Raised on any other thread, with no SIGINT delivered, or while SIGINT is
    ignored or left to the system, it is the plugin's own.
    """
    if not isinstance(exc, KeyboardInterrupt) or threading.current_thread() is not threading.main_thread():
        return False
    handler = signal.getsignal(signal.SIGINT)
    return _sigints != since if handler is _watching else callable(handler)

