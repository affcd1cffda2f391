"""Calls with a deadline on persistent worker threads, so a hung plugin never wedges its caller.

A :class:`Deadlines` pool hands a batch of calls to one idle worker in a single hand-off and waits for
all of them; each call has its own deadline. A call that misses it is abandoned with its worker: the
caller gets on at once, the worker is never used again and ends when the call returns, and later batches
get a fresh worker. Until an abandoned call returns, the same function is not started again (it is
reported as late at once), so a function that hangs for good holds one thread, not one per call.

Without a deadline (``timeout`` None or 0) the calls run inline, in the caller's thread.

The hand-off goes through a pipe in each direction: the waking write happens while the writer has
released the GIL, which makes a round trip about twice as fast as a pair of locks.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import os
import select
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Final

__all__ = ["Batch", "DeadlineExceeded", "Deadlines", "call_with_deadline", "run_inline"]

#: Idle workers a pool keeps; more are started when more callers wait at once, and retire when they return.
MAX_IDLE: Final = 8
_GO, _QUIT = b"g", b"q"


class DeadlineExceeded(TimeoutError):
    """A call did not finish in time; it goes on, abandoned, on its worker thread."""


class Batch:
    """What running a batch of steps did."""

    __slots__ = ("end", "missed", "outcomes", "still_late", "stopped")

    def __init__(self, start: int) -> None:
        #: ``(index, True, value)`` or ``(index, False, exception)`` for each step that returned or raised.
        self.outcomes: list[tuple[int, bool, Any]] = []
        #: The index of the step that missed its deadline (or was still running late), else None.
        self.missed: int | None = None
        #: True when ``missed`` was not started: an earlier call of its function is still running late.
        self.still_late = False
        #: The index after the last step run (``after`` may end a batch early).
        self.end = start
        #: ``after`` ended the batch.
        self.stopped = False


class _Lateness:
    """The functions whose abandoned calls are still running, and the threads running them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.running: dict[Callable[[Any], Any], set[threading.Thread]] = {}

    def add(self, function: Callable[[Any], Any], thread: threading.Thread) -> None:
        with self._lock:
            self.running.setdefault(function, set()).add(thread)

    def returned(self, function: Callable[[Any], Any], thread: threading.Thread) -> None:
        with self._lock:
            threads = self.running.get(function)
            if threads is not None:
                threads.discard(thread)
                if not threads:
                    del self.running[function]

    def reset(self) -> None:
        self._lock = threading.Lock()
        self.running.clear()


class _Work:
    """A batch in progress on a worker; the worker's lock guards its progress."""

    __slots__ = ("after", "argument", "batch", "context", "failure", "finished", "functions", "index", "started")

    def __init__(self, functions: Sequence[Callable[[Any], Any]], argument: Any, start: int,
                 after: Callable[[Any, Any], bool] | None) -> None:
        self.functions = functions
        self.argument = argument
        self.after = after
        self.batch = Batch(start)
        self.context = contextvars.copy_context()
        self.index = start
        #: When the running step began; None between steps (no deadline runs then).
        self.started: float | None = time.monotonic()
        self.finished = False
        self.failure: BaseException | None = None


class _Worker:
    """One thread and its two pipes; the caller side owns ``go_w`` and ``done_r``, the thread the others."""

    def __init__(self, name: str, lateness: _Lateness) -> None:
        self.lateness = lateness
        self.go_r, self.go_w = os.pipe()
        self.done_r, self.done_w = os.pipe()
        self.poller = select.poll()
        self.poller.register(self.done_r, select.POLLIN)
        self.lock = threading.Lock()
        self.work: _Work | None = None
        self.abandoned = False
        self.thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self.thread.start()

    # -- the worker's thread -------------------------------------------------------------------

    def _serve(self) -> None:
        try:
            while os.read(self.go_r, 1) == _GO:
                work = self.work
                assert work is not None
                try:
                    work.context.run(self._run, work)
                except BaseException as exc:  # KeyboardInterrupt, SystemExit: the caller re-raises them
                    work.failure = exc
                work.finished = True
                if self.abandoned:
                    return
                os.write(self.done_w, _GO)
        except OSError:  # the caller side closed its ends: nothing waits for this worker any more
            pass
        finally:
            _close(self.go_r, self.done_w)

    def _run(self, work: _Work) -> None:
        """Run the steps. No lock is taken while nothing goes wrong: the progress (``index``, ``started``) is
        published before each step and the worker looks whether it was abandoned after each publication, so
        a caller that gives up (under the lock, setting ``abandoned`` before it reads the progress) and this
        thread always agree on which function, if any, is running late."""
        functions, argument, batch, late = work.functions, work.argument, work.batch, self.lateness.running
        outcomes, after, monotonic = batch.outcomes, work.after, time.monotonic
        for index in range(work.index, len(functions)):
            function = functions[index]
            if function in late:
                batch.missed, batch.still_late, batch.end = index, True, index
                return
            work.index = index
            work.started = monotonic()
            if self.abandoned:
                return self._returned(function)
            try:
                outcome = (index, True, function(argument))
            except Exception as exc:
                outcome = (index, False, exc)
            work.started = None
            if self.abandoned:  # this was the late step (if the caller saw it running): it may run again
                return self._returned(function)
            outcomes.append(outcome)
            batch.end = index + 1
            if outcome[1] and after is not None and after(function, outcome[2]):
                batch.stopped = True
                return

    def _returned(self, function: Callable[[Any], Any]) -> None:
        with self.lock:  # the caller that abandoned this worker has recorded what it saw running
            self.lateness.returned(function, self.thread)

    # -- the caller's side ---------------------------------------------------------------------

    def run(self, work: _Work, timeout: float) -> bool:
        """Hand ``work`` over and wait for it; False when a step missed its deadline (the worker is abandoned)."""
        self.work = work
        os.write(self.go_w, _GO)
        wait = timeout
        try:
            while not self.poller.poll(wait * 1000):
                with self.lock:
                    if work.finished:
                        continue  # its byte is on the way
                    started = work.started
                    wait = timeout if started is None else started + timeout - time.monotonic()
                    if wait <= 0:
                        self._abandon(work)
                        return False
        except BaseException:  # interrupted while waiting: the batch goes on, unobserved
            with self.lock:
                finished = work.finished
                if not finished:
                    self._abandon(work)
            if finished:
                os.read(self.done_r, 1)
                self.close()
            raise
        os.read(self.done_r, 1)
        self.work = None
        if work.failure is not None:
            raise work.failure
        return True

    def _abandon(self, work: _Work) -> None:
        """Give up on this worker (its lock held): the function running now, if any, is late until it returns."""
        self.abandoned = True  # first: the worker looks at it after publishing its progress
        index = work.index
        work.batch.missed = work.batch.end = index
        if work.started is not None:
            self.lateness.add(work.functions[index], self.thread)
        self.close()

    def close(self) -> None:
        """End the caller's side: an idle thread reads end-of-file and ends; a busy one ends when its call returns."""
        _close(self.go_w, self.done_r)


class Deadlines:
    """A small pool of persistent workers that run batches of calls, each call with a deadline.

    ``run`` is safe to call from any number of threads at once: each caller takes its own idle worker
    (one is started when none is idle). ``close`` ends the idle workers; a pool is closed when it is
    garbage collected, too.
    """

    def __init__(self, name: str = "hermes-deadline") -> None:
        self.name = name
        self._numbers = itertools.count(1)
        self._idle: list[_Worker] = []
        self.lateness = _Lateness()
        _pools.add(self)
        weakref.finalize(self, _close_workers, self._idle)

    def run(self, functions: Sequence[Callable[[Any], Any]], argument: Any, timeout: float | None, *,
            start: int = 0, after: Callable[[Any, Any], bool] | None = None) -> Batch:
        """Call ``function(argument)`` for each of ``functions[start:]`` in order, each within ``timeout``
        seconds (None or 0: no deadline, in the caller's thread).

        A call that raises is recorded and the next one runs. ``after(function, value)`` runs after each
        call that returned (on the thread that ran it) and ends the batch by returning True. A call that
        misses its deadline ends the batch; resume with ``start=batch.missed + 1`` to run the rest.
        """
        if not timeout:
            return run_inline(functions, argument, start, after)
        timeout = min(timeout, threading.TIMEOUT_MAX)
        work = _Work(functions, argument, start, after)
        worker = self._take()
        if worker.run(work, timeout):
            self._give_back(worker)
        return work.batch

    def call(self, function: Callable[..., Any], timeout: float | None, /, *args: Any, **kwargs: Any) -> Any:
        """``function(*args, **kwargs)`` within ``timeout``: its value, its exception, or :class:`DeadlineExceeded`."""
        batch = self.run([_Call(function, args, kwargs)], None, timeout)
        if batch.missed is not None:
            raise DeadlineExceeded(
                f"has not returned from an earlier call that missed its {timeout:g} s deadline" if batch.still_late
                else f"did not finish within {timeout:g} s")
        _, ok, value = batch.outcomes[0]
        if ok:
            return value
        raise value

    def late(self) -> int:
        """How many abandoned calls are still running (each holds one thread until it returns)."""
        return sum(len(threads) for threads in list(self.lateness.running.values()))

    def close(self) -> None:
        """End the idle workers; a later ``run`` starts new ones."""
        _close_workers(self._idle)

    def _take(self) -> _Worker:
        try:
            return self._idle.pop()  # (a list's pop and append are atomic: no lock needed)
        except IndexError:
            return _Worker(f"{self.name}-{next(self._numbers)}", self.lateness)

    def _give_back(self, worker: _Worker) -> None:
        if len(self._idle) < MAX_IDLE:
            self._idle.append(worker)
        else:
            worker.close()


class _Call:
    """``function(*args, **kwargs)`` as one step; equal to every other call of the same function with the same
    arguments (the same objects), so that call is not started again while an abandoned one still runs, and
    a call of the same function with other arguments (another tool's check, another request) is."""

    __slots__ = ("args", "function", "key", "kwargs")

    def __init__(self, function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.function, self.args, self.kwargs = function, args, kwargs
        self.key = (id(function), *map(id, args), *((name, id(value)) for name, value in sorted(kwargs.items())))

    def __call__(self, _: Any) -> Any:
        return self.function(*self.args, **self.kwargs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Call) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)


def run_inline(functions: Sequence[Callable[[Any], Any]], argument: Any, start: int = 0,
               after: Callable[[Any, Any], bool] | None = None) -> Batch:
    """:meth:`Deadlines.run` without a deadline: in the caller's thread."""
    batch = Batch(start)
    outcomes = batch.outcomes
    for index in range(start, len(functions)):
        function = functions[index]
        try:
            value = function(argument)
        except Exception as exc:
            outcomes.append((index, False, exc))
            continue
        outcomes.append((index, True, value))
        if after is not None and after(function, value):
            batch.end, batch.stopped = index + 1, True
            return batch
    batch.end = len(functions)
    return batch


def _close(*fds: int) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):  # already closed
            os.close(fd)


def _close_workers(idle: list[_Worker]) -> None:
    while True:
        try:
            worker = idle.pop()  # one at a time: a worker another thread takes meanwhile is not closed under it
        except IndexError:
            return
        worker.close()


_pools: weakref.WeakSet[Deadlines] = weakref.WeakSet()


def _forget_workers_after_fork() -> None:
    """A forked child has none of its parent's threads: its pools start afresh."""
    for pool in list(_pools):
        for worker in pool._idle:
            _close(worker.go_r, worker.go_w, worker.done_r, worker.done_w)
        pool._idle.clear()
        pool.lateness.reset()


os.register_at_fork(after_in_child=_forget_workers_after_fork)

_shared = Deadlines()


def call_with_deadline(fn: Callable[..., Any], timeout: float | None, /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` on the process's shared workers: its value, its exception, or
    :class:`DeadlineExceeded` (also at once while the same call, ``fn`` with the same argument objects, is
    still running past an earlier deadline)."""
    return _shared.call(fn, timeout, *args, **kwargs)
