"""Run a coroutine to completion from synchronous code, whether or not an event loop is running.

With no running loop in the calling thread, a persistent loop of that thread runs it (so clients
cached by async tools stay bound to one loop); inside a running loop, a worker thread does.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")

_local = threading.local()
_workers = ThreadPoolExecutor(max_workers=4, thread_name_prefix="hermes-async")


def _thread_loop() -> asyncio.AbstractEventLoop:
    loop = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = _local.loop = asyncio.new_event_loop()
    return loop


async def _await(awaitable: Awaitable[T]) -> T:
    return await awaitable


def run_sync(awaitable: Awaitable[T]) -> T:
    """The result of ``awaitable``, computed without blocking a running event loop's own thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _thread_loop().run_until_complete(_await(awaitable))
    return _workers.submit(lambda: _thread_loop().run_until_complete(_await(awaitable))).result()


