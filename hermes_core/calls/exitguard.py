"""``os._exit`` from plugin code on Hermes' own worker threads raises instead of ending the process."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import NoReturn

__all__ = ["PluginExit", "refusing_exit"]

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
