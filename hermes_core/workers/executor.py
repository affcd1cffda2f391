"""Calls with a deadline on daemon worker threads, so a hung plugin never wedges its caller.

A :class:`Job` (steps handed to one worker in one hand-off, under one deadline) that misses its deadline is
abandoned with its worker: the caller goes on at once, the step running then finishes on its own (nothing runs
after it there) and the next job gets an idle or fresh worker. Standard library only; portable.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from ..errors import DeadlineExceeded
from .exitguard import refusing_exit

__all__ = ["Batch", "DeadlineExceeded", "Job", "Workers", "call_with_deadline", "run_inline"]

#: Idle workers a pool keeps; more start when more callers wait at once, and leave when they are done.
MAX_IDLE: Final = 8


class Batch:
    """What running steps did."""

    def __init__(self, start: int) -> None:
        #: ``(index, True, value)`` or ``(index, False, exception)`` for each step that returned or raised.
        self.outcomes: list[tuple[int, bool, Any]] = []
        #: The step running (or next to run); where the steps ended once they have.
        self.index = self.end = start
        #: The step that was running when the deadline passed (the job ended there), else None.
        self.missed: int | None = None
        #: ``after`` ended the steps (or one raised what is not an ``Exception``).
        self.stopped = False


class Job(Batch):
    """``step(argument)`` for each of ``steps[start:]`` in order, and what they did.

    ``after(index, value)`` runs after each step that returned, where it ran, and ends the job by returning True.
    ``on_abandon(job)`` runs when a waiter gives up on it and ``on_late_return(job)`` when the step running then
    returns at last (both under the job's lock: in that order). ``report(job)``: on the worker, once it ended.
    """

    def __init__(self, steps: Sequence[Callable[[Any], Any]], argument: Any, timeout: float, start: int = 0,
                 after: Callable[[int, Any], bool] | None = None, *,
                 on_abandon: Callable[[Job], None] | None = None,
                 on_late_return: Callable[[Job], None] | None = None,
                 report: Callable[[Job], None] | None = None) -> None:
        super().__init__(start)
        self.steps, self.argument, self.timeout, self.after = steps, argument, timeout, after
        self.on_abandon, self.on_late_return, self.report = on_abandon, on_late_return, report
        self.deadline = float("inf")
        self.context: contextvars.Context | None = None
        self._done: threading.Lock | None = None  # held from the start until the job ends
        self._lock = threading.Lock()  # the worker finishing and a waiter giving up decide under it
        self._finished = self._abandoned = False
        self._rest: Job | None = None

    def rest(self) -> Job | None:
        """The steps after the missed one, as a new job, the same one each time (None when there are none)."""
        with self._lock:
            if self._rest is None and self.missed is not None and self.missed + 1 < len(self.steps):
                self._rest = Job(self.steps, self.argument, self.timeout, self.missed + 1, self.after,
                                 on_abandon=self.on_abandon, on_late_return=self.on_late_return, report=self.report)
            return self._rest

    def _run(self) -> None:
        steps, argument, outcomes = self.steps, self.argument, self.outcomes
        for index in range(self.index, len(steps)):
            outcome = (index, False, None) if self._abandoned else _call(steps[index], argument, index)
            with self._lock:  # (a waiter that gives up blames ``index``: the step running, or the next one)
                if self._abandoned:  # the step blamed returned at last (or, given up between two, never ran)
                    if self.on_late_return is not None:
                        self.on_late_return(self)
                    return
                outcomes.append(outcome)
                self.end = index + 1
                if (self.after is not None or not outcome[1]) and _ends(outcome, self.after, outcomes):
                    self.stopped, self.index = True, len(steps)
                    return
                self.index = index + 1

    def _finish(self) -> bool:
        """(On the worker.) Mark the job done unless it was abandoned; whether it was done."""
        with self._lock:
            if self._abandoned:
                return False
            self._finished = True
        assert self._done is not None
        self._done.release()
        if self.report is not None:
            with contextlib.suppress(Exception):  # (a report only logs; its failure must not end the worker)
                self.report(self)
        return True

    def wait(self) -> bool:
        """Wait until the job ends or its deadline passes: True when it ended; False when it was abandoned
        (``missed`` is the step that was running). Any number of threads may wait."""
        while True:
            with self._lock:
                done, deadline = self._done, self.deadline
            if done is None:  # not started yet: look again soon
                time.sleep(0.001)
                continue
            if done.acquire(timeout=max(0.0, min(deadline - time.monotonic(), threading.TIMEOUT_MAX))):
                done.release()  # (for the other waiters)
                return True
            with self._lock:
                if self._finished or self.index >= len(self.steps):  # (every step ran: it is ending now)
                    return True
                if time.monotonic() >= deadline:
                    if not self._abandoned:
                        self._abandoned = True
                        self.missed = self.end = self.index
                        if self.on_abandon is not None:
                            self.on_abandon(self)
                    return False


class _Worker:
    """A daemon thread that runs the jobs put in its inbox; ``None`` ends it."""

    def __init__(self, pool: Workers, name: str) -> None:
        self.pool = pool
        self.inbox: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name=name, daemon=True).start()

    def _serve(self) -> None:
        with refusing_exit():  # os._exit in a plugin raises here instead of ending the process
            while (job := self.inbox.get()) is not None:
                assert job.context is not None
                job.context.run(job._run)
                if not job._finish() or not self.pool._give_back(self):
                    return


class Workers:
    """A pool of worker threads for jobs with deadlines; safe to use from any number of threads (and from a
    forked child, which starts its own)."""

    def __init__(self, name: str) -> None:
        self.name, self._lock, self._count, self._pid = name, threading.Lock(), 0, os.getpid()
        self._idle: list[_Worker] = []

    def start(self, job: Job) -> Job:
        """Hand ``job`` to a worker; its deadline starts now."""
        with self._lock:
            if self._pid != os.getpid():  # a forked child has none of its parent's threads
                self._idle, self._pid = [], os.getpid()
            worker = self._idle.pop() if self._idle else None
            self._count += 1
        worker = worker or _Worker(self, f"{self.name}-{self._count}")
        job.context = contextvars.copy_context()
        done = threading.Lock()
        done.acquire()
        with job._lock:
            job._done, job.deadline = done, time.monotonic() + min(job.timeout, threading.TIMEOUT_MAX)
        worker.inbox.put(job)
        return job

    def run(self, job: Job) -> Job:
        """Start ``job`` and wait for it (see :meth:`Job.wait`)."""
        self.start(job).wait()
        return job

    def _give_back(self, worker: _Worker) -> bool:
        with self._lock:
            if len(self._idle) >= MAX_IDLE or self._pid != os.getpid():
                return False
            self._idle.append(worker)
            return True

    def close(self) -> None:
        """End the idle workers (a later job starts new ones)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.inbox.put(None)


def run_inline(steps: Sequence[Callable[[Any], Any]], argument: Any, start: int = 0,
               after: Callable[[int, Any], bool] | None = None) -> Batch:
    """The steps run in the caller's thread, without a deadline."""
    batch = Batch(start)
    outcomes = batch.outcomes
    for index in range(start, len(steps)):
        outcome = _call(steps[index], argument, index)  # (a KeyboardInterrupt too: the caller tells whose it is)
        outcomes.append(outcome)
        batch.index = batch.end = index + 1
        if (after is not None or not outcome[1]) and _ends(outcome, after, outcomes):
            batch.stopped = True
            break
    return batch


def _call(step: Callable[[Any], Any], argument: Any, index: int) -> tuple[int, bool, Any]:
    """A step's outcome; a value that is awaitable (an ``async def`` step's coroutine) is awaited first, on the
    caller's loop when the async API started the work (see ``asyncbridge.awaited``)."""
    try:
        value = step(argument)
        if value is not None and type(value) is not dict and hasattr(value, "__await__"):
            from .asyncbridge import awaited

            value = awaited(value)
        return index, True, value
    except BaseException as exc:  # on a worker even a KeyboardInterrupt is the plugin's own
        return index, False, exc


def _ends(outcome: tuple[int, bool, Any], after: Callable[[int, Any], bool] | None,
          outcomes: list[tuple[int, bool, Any]]) -> bool:
    """Whether a job ends after ``outcome``: ``after`` says so (an ``after`` that raises ends it, its exception the
    step's outcome), or the step raised something that is not an ``Exception`` (``SystemExit``...)."""
    index, ok, value = outcome
    if not ok:
        return not isinstance(value, Exception)
    try:
        return after is not None and after(index, value)
    except Exception as exc:
        outcomes[-1] = (index, False, exc)
        return True


_shared = Workers("hermes-deadline")
_late_lock = threading.Lock()
#: The calls of :func:`call_with_deadline` abandoned at their deadline and still running.
_late_calls: set[tuple[Any, ...]] = set()


def _late(key: tuple[Any, ...], late: bool) -> None:
    with _late_lock:
        (_late_calls.add if late else _late_calls.discard)(key)


def call_with_deadline(fn: Callable[..., Any], timeout: float | None, /, *args: Any) -> Any:
    """``fn(*args)`` within ``timeout`` seconds on a worker (None or 0: in the caller's thread): its value, its
    exception, or :class:`DeadlineExceeded`, at once while the same call (``fn`` with the same argument objects)
    still runs past an earlier deadline, so a call that hangs for good holds one thread, not one per try."""
    if not timeout:
        return fn(*args)
    key = (id(fn), *map(id, args))
    with _late_lock:
        if key in _late_calls:
            raise DeadlineExceeded(f"has not returned from an earlier call that missed its {timeout:g} s deadline")
    job = _shared.run(Job([lambda _: fn(*args)], None, timeout, on_abandon=lambda _: _late(key, True),
                          on_late_return=lambda _: _late(key, False)))
    if job.missed is not None:
        raise DeadlineExceeded(f"did not finish within {timeout:g} s")
    _, ok, value = job.outcomes[0]
    if ok:
        return value
    raise value
