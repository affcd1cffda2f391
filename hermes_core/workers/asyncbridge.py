"""Bridges between synchronous and asynchronous code, in both directions.

- :func:`run_sync` runs a coroutine to completion from synchronous code, whether or not an event loop is
  running: with no running loop in the calling thread, a persistent loop of that thread runs it (so clients
  cached by async tools stay bound to one loop); inside a running loop, a worker thread does.
- :func:`in_worker` awaits synchronous work from a coroutine without blocking its loop.
- :class:`CallerLoop` lets synchronous code on a worker thread run a coroutine on the loop that is waiting for
  it, and cancels what it started there when that wait is cancelled.

Worker threads are daemon threads: synchronous work whose caller was cancelled cannot be interrupted, so it
is abandoned, and an abandoned call never holds up the interpreter's exit or ``asyncio.run``'s shutdown.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import queue
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from ..errors import ToolCallCancelled

__all__ = ["CALLER_LOOP", "CallerLoop", "ToolCallCancelled", "WorkerThreads", "awaited", "in_worker", "run_sync"]

T = TypeVar("T")


class WorkerThreads(concurrent.futures.Executor):
    """Daemon threads started on demand (at most ``max_threads``), each leaving after ``idle`` seconds unused."""

    def __init__(self, name: str, max_threads: int = 64, idle: float = 60.0) -> None:
        self.name, self.max_threads, self.idle = name, max_threads, idle
        self._work: queue.SimpleQueue[tuple[concurrent.futures.Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._waiting = 0  # threads free to take new work (those not already promised an item)
        self._backlog = 0  # queued items no thread was promised
        self._count = 0

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._work.put((future, lambda: fn(*args, **kwargs)))
        with self._lock:
            if self._waiting:
                self._waiting -= 1
            elif self._threads < self.max_threads:
                self._threads += 1
                self._count += 1
                threading.Thread(target=self._run, name=f"{self.name}-{self._count}", daemon=True).start()
            else:
                self._backlog += 1
        return future

    def _run(self) -> None:
        while True:
            try:
                future, work = self._work.get(timeout=self.idle)
            except queue.Empty:
                with self._lock:
                    if self._waiting:  # no item is promised to this thread: leave
                        self._waiting -= 1
                        self._threads -= 1
                        return
                continue
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(work())
                except BaseException as exc:
                    future.set_exception(exc)
            del future, work
            with self._lock:
                if self._backlog:
                    self._backlog -= 1
                else:
                    self._waiting += 1


#: Where synchronous tool work started from async code runs (hooks, middleware, sync handlers, bridged loops).
WORKERS = WorkerThreads("hermes-async")


async def in_worker(fn: Callable[..., T], /, *args: Any) -> T:
    """``fn(*args)`` on a worker thread, in a copy of the current context; cancelling the await abandons it."""
    context = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(WORKERS, context.run, fn, *args)


class CallerLoop:
    """The event loop of a coroutine that is waiting for a worker thread, seen from that thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._lock = threading.Lock()
        self._cancelled = False
        self._running: set[concurrent.futures.Future[Any]] = set()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the caller's loop and wait for it (from a worker thread, never from the loop)."""
        with self._lock:
            if self._cancelled:
                coroutine.close()
                raise ToolCallCancelled("the task awaiting this tool call was cancelled")
            future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
            self._running.add(future)
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            raise ToolCallCancelled("the task awaiting this tool call was cancelled") from None
        finally:
            with self._lock:
                self._running.discard(future)

    def cancel(self) -> None:
        """Cancel what runs on the caller's loop for this call, and refuse to start anything more."""
        with self._lock:
            self._cancelled = True
            running = list(self._running)
        for future in running:
            future.cancel()


_local = threading.local()


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
    return WORKERS.submit(lambda: _thread_loop().run_until_complete(_await(awaitable))).result()


#: The loop of the coroutine a tool call's synchronous steps run for, if any (set on the worker running them).
CALLER_LOOP: contextvars.ContextVar[CallerLoop | None] = contextvars.ContextVar("hermes_caller_loop", default=None)


def awaited(awaitable: Awaitable[T]) -> T:
    """The result of ``awaitable`` (a hook's or a handler's), from synchronous code: on the caller's loop when the
    call came from the async API, else as :func:`run_sync` gives it."""
    loop = CALLER_LOOP.get()
    if loop is not None:
        return loop.run(_await(awaitable))
    return run_sync(awaitable)
