"""Calls with a deadline on persistent worker threads, so a hung plugin never wedges its caller.

A :class:`Deadlines` pool hands a batch of calls to one worker in a single hand-off and waits for all of
them; each call has its own deadline. A call that misses it is abandoned with its worker: the caller gets
on at once, the worker is never used again and ends when the call returns, and later batches get a fresh
worker. Until an abandoned call returns, the same function is not started again (it is reported as late
at once), so a function that hangs for good holds one thread, not one per call.

A batch can also be *posted* (:meth:`Deadlines.post`): handed over without waiting, its outcome given to a
``report`` callback. The thread that posted it queues its next batch behind it on the same worker, so one
thread's batches always run in the order it gave them; that next batch's wait (or :meth:`Deadlines.flush`)
is what notices a posted call that misses its deadline, reports it, and moves what was queued behind it to
a fresh worker.

Without a deadline (``timeout`` None or 0) the calls run inline, in the caller's thread.

The hand-off goes through a pipe in each direction: the waking write happens while the writer has
released the GIL, which makes a round trip about twice as fast as a pair of locks.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import itertools
import logging
import os
import select
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Final

from ..errors import DeadlineExceeded

__all__ = ["Batch", "DeadlineExceeded", "Deadlines", "Report", "call_with_deadline", "run_inline"]

#: Idle workers a pool keeps; more are started when more callers wait at once, and retire when they return.
MAX_IDLE: Final = 8
#: Seconds between two looks at the posted batches while :meth:`Deadlines.flush` waits for them.
FLUSH_POLL: Final = 0.002
#: Seconds a worker waits, after a batch its caller waited for, before it sleeps until woken: a batch the caller
#: posts meanwhile runs at the latest then, and wakes nothing (see ``_Worker._next``).
LINGER: Final = 0.002
_GO = b"g"

log = logging.getLogger(__name__)


class Batch:
    """What running a batch of steps did."""

    __slots__ = ("end", "missed", "outcomes", "skipped", "still_late", "stopped")

    def __init__(self, start: int) -> None:
        #: ``(index, True, value)`` or ``(index, False, exception)`` for each step that returned or raised.
        self.outcomes: list[tuple[int, bool, Any]] = []
        #: The index of the step that missed its deadline (or was still running late), else None.
        self.missed: int | None = None
        #: True when ``missed`` was not started: an earlier call of its function is still running late.
        self.still_late = False
        #: In a posted batch: the steps not started because an earlier call of theirs still runs late.
        self.skipped: list[int] = []
        #: The index after the last step run (``after`` may end a batch early).
        self.end = start
        #: ``after`` ended the batch.
        self.stopped = False


#: ``report(batch, timeout)``: what a posted batch (or one part of it) did, given where it ended.
Report = Callable[[Batch, float], None]


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


class _Work(Batch):
    """A batch queued on a worker, and what it did (it is its own :class:`Batch`); the worker's lock guards its
    end (``finished``)."""

    __slots__ = ("after", "argument", "context", "failure", "finished", "functions", "index", "report", "reported",
                 "started", "timeout")

    def __init__(self, functions: Sequence[Callable[[Any], Any]], argument: Any, start: int, timeout: float,
                 after: Callable[[int, Any], bool] | None = None, report: Report | None = None,
                 context: contextvars.Context | None = None) -> None:
        Batch.__init__(self, start)
        self.functions = functions
        self.argument = argument
        self.timeout = timeout
        self.after = after
        #: None for a batch its caller waits for; the callback of a posted one.
        self.report = report
        self.context = contextvars.copy_context() if context is None else context
        self.index = start
        #: When the running step began; None between steps (no deadline runs then).
        self.started: float | None = None
        self.finished = False
        #: A posted batch's report was given (by its worker, or by whoever found it late).
        self.reported = False
        self.failure: BaseException | None = None

    def rest(self) -> _Work | None:
        """What is left of this posted batch after the step that missed its deadline, as a new batch."""
        missed = self.missed
        if missed is None or missed + 1 >= len(self.functions):
            return None
        return _Work(self.functions, self.argument, missed + 1, self.timeout, report=self.report,
                     context=self.context.copy())  # (the abandoned thread is still in the original)


class _Worker:
    """One thread, its queue and its two pipes; the caller side owns ``go_w`` and ``done_r``, the thread the others."""

    def __init__(self, name: str, lateness: _Lateness) -> None:
        self.lateness = lateness
        self.go_r, self.go_w = os.pipe()
        self.done_r, self.done_w = os.pipe()
        self.poller = select.poll()
        self.poller.register(self.done_r, select.POLLIN)
        self.go_poller = select.poll()
        self.go_poller.register(self.go_r, select.POLLIN)
        #: The thread waits to be woken (it lingers, or works, otherwise: a posted batch then needs no wake-up).
        self.asleep = False
        self.lock = threading.Lock()
        #: Batches handed over and not yet started, in order (a byte on the ``go`` pipe wakes the thread for them).
        self.queue: deque[_Work] = deque()
        #: The batch running, or the last one run.
        self.current: _Work | None = None
        #: The last batch posted here (every earlier one has ended once it has).
        self.last_posted: _Work | None = None
        self.abandoned = False
        #: No more batches are taken; ``released``: the caller's ends of the pipes are closed, too.
        self.closed = self.released = False
        self.thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self.thread.start()

    # -- the worker's thread -------------------------------------------------------------------

    def _serve(self) -> None:
        try:
            linger = False
            while (work := self._next(linger)) is not None:
                self.current = work
                try:
                    work.context.run(self._run, work)
                except BaseException as exc:  # KeyboardInterrupt, SystemExit: the caller re-raises them
                    work.failure = exc
                with self.lock:  # a caller that finds a step late decides under this lock, seeing the batch unfinished
                    if self.abandoned:
                        return
                    work.finished = True
                linger = work.report is None
                if linger:
                    os.write(self.done_w, _GO)
                else:
                    _report(work)
        except OSError:  # the caller side closed its ends: nothing waits for this worker any more
            pass
        finally:
            _close(self.go_r, self.done_w)

    def _next(self, linger: bool) -> _Work | None:
        """The next batch queued here, waiting for one (None: this worker was closed). Right after a batch its
        caller waited for, it waits ``LINGER`` seconds without being woken: that caller's posted batch usually
        follows, queued without a wake-up (so this thread does not take the GIL from a caller still running),
        and runs then, or with the caller's next batch if that comes first.

        No lock: ``asleep`` is announced before the queue is looked at again, and a caller appends before it
        looks at ``asleep``, so a batch is never left unseen (at worst a wake-up finds the queue empty)."""
        queue = self.queue
        while True:
            if queue:
                return queue.popleft()
            if self.closed:
                return None
            if linger:
                linger = False
                if not self.go_poller.poll(LINGER * 1000):
                    continue
            else:
                self.asleep = True
                if queue:
                    self.asleep = False
                    continue
            if not os.read(self.go_r, 64):
                return None
            self.asleep = False

    def _run(self, work: _Work) -> None:
        """Run the steps. No lock is taken while nothing goes wrong: the progress (``index``, ``started``) is
        published before each step and the worker looks whether it was abandoned after each publication, so
        a caller that gives up (under the lock, setting ``abandoned`` before it reads the progress) and this
        thread always agree on which function, if any, is running late."""
        functions, argument, batch, late = work.functions, work.argument, work, self.lateness.running
        outcomes, after, monotonic, posted = batch.outcomes, work.after, time.monotonic, work.report is not None
        for index in range(work.index, len(functions)):
            function = functions[index]
            if late and function in late:
                if posted:  # nobody waits to resume a posted batch: skip the step and go on
                    batch.skipped.append(index)
                    continue
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
            if outcome[1] and after is not None and after(index, outcome[2]):
                batch.stopped = True
                return

    def _returned(self, function: Callable[[Any], Any]) -> None:
        with self.lock:  # the caller that abandoned this worker has recorded what it saw running
            self.lateness.returned(function, self.thread)

    # -- the caller's side ---------------------------------------------------------------------

    def hand_over(self, work: _Work) -> bool:
        """Queue ``work`` (only the thread this worker runs batches for does); False when it was closed or abandoned
        (nothing was queued). A batch its caller waits for wakes the thread; a posted one only a sleeping thread."""
        if self.closed or self.abandoned:
            self.close()
            return False
        self.queue.append(work)
        if work.report is None:
            os.write(self.go_w, _GO)
        else:
            self.last_posted = work
            if self.asleep:
                self.asleep = False
                os.write(self.go_w, _GO)
        return True

    def wait(self, work: _Work) -> list[_Work] | None:
        """Wait for ``work``, queued here. None when it ended; else a step (of ``work`` or of a posted batch queued
        before it) missed its deadline and this worker is abandoned: the batches it had not finished, in order,
        the late one first (its ``missed`` set)."""
        wait = work.timeout
        try:
            while not self.poller.poll(wait * 1000):
                stranded, wait = self.strand_if_late(work)
                if stranded is not None:
                    return stranded
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
        if work.failure is not None:
            raise work.failure
        return None

    def overdue(self) -> bool:
        """Whether the step running here looks past its deadline (a glance, without the lock)."""
        current = self.current
        started = None if current is None else current.started
        return started is not None and current is not None and started + current.timeout < time.monotonic()

    def strand_if_late(self, waiting: _Work | None = None) -> tuple[list[_Work] | None, float]:
        """If the step running here is past its deadline (and ``waiting`` has not ended), abandon this worker and
        return the batches it had not finished, the late one first; else None, and the seconds to wait before
        looking again."""
        with self.lock:
            late, left = self._late(waiting)
            if late is None:
                return None, left
            self._abandon(late)
            stranded = [late, *self.queue]
            self.queue.clear()
        self.close()
        return stranded, 0.0

    def late_step(self) -> tuple[_Work, int] | None:
        """The posted batch running here past its step's deadline, and that step, if there is one."""
        with self.lock:
            late, _ = self._late()
            return (late, late.index) if late is not None and late.report is not None else None

    def _late(self, waiting: _Work | None = None) -> tuple[_Work | None, float]:
        """(The lock held.) The batch whose running step is past its deadline, unless ``waiting`` has ended; else
        None, and the seconds until that step's deadline (``waiting``'s timeout, or 0, between steps)."""
        idle = waiting.timeout if waiting is not None else 0.0
        current = self.current
        if (waiting is not None and waiting.finished) or current is None or current.finished:
            return None, idle  # (a finished batch's byte is on the way)
        started = current.started
        if started is None:
            return None, idle
        left = started + current.timeout - time.monotonic()
        return (current, 0.0) if left <= 0 else (None, left)

    def _abandon(self, work: _Work) -> None:
        """Give up on this worker (its lock held; close it then): the function running now, if any, is late until it
        returns."""
        self.abandoned = True  # first: the worker looks at it after publishing its progress
        index = work.index
        work.missed = work.end = index
        if work.started is not None:
            self.lateness.add(work.functions[index], self.thread)

    def close(self) -> None:
        """End the caller's side: an idle thread reads end-of-file and ends; a busy one ends when its call returns.
        Only the thread the worker runs batches for (or nobody, any more) closes it."""
        with self.lock:
            if self.released:
                return
            self.released = self.closed = True
        _close(self.go_w, self.done_r)

    def retire(self) -> None:
        """From any thread: the worker ends once its queue is empty; its caller's next batch goes to another one."""
        with self.lock:
            if not self.released:
                self.closed = True
                os.write(self.go_w, _GO)


class _Lane(threading.local):
    """Per thread: the cell of the worker bound to this thread once it posts (its batches queue there, in order),
    and the anchor whose end, with the thread's, gives that worker back."""

    cell: list[_Worker | None] | None = None
    anchor: _Anchor | None = None


class _Anchor:
    """Lives as long as its thread's lane: a finalizer on it gives the thread's bound worker back."""

    __slots__ = ("__weakref__",)


class Deadlines:
    """A small pool of persistent workers that run batches of calls, each call with a deadline.

    ``run`` and ``post`` are safe to call from any number of threads at once. A thread that posts is bound to a
    worker from then on (its batches, posted or waited for, run there in order) until the thread ends; other
    calls take an idle worker (one is started when none is idle) and give it back. ``close`` ends the workers
    once what was posted has ended; a pool is closed when it is garbage collected, too.
    """

    def __init__(self, name: str = "hermes-deadline") -> None:
        self.name = name
        self._numbers = itertools.count(1)
        self._idle: list[_Worker] = []
        self._lane = _Lane()
        #: The workers bound to a thread (not idle).
        self._bound: set[_Worker] = set()
        self.lateness = _Lateness()
        _pools.add(self)
        weakref.finalize(self, _close_workers, self._idle)

    def run(self, functions: Sequence[Callable[[Any], Any]], argument: Any, timeout: float | None, *,
            start: int = 0, after: Callable[[int, Any], bool] | None = None) -> Batch:
        """Call ``function(argument)`` for each of ``functions[start:]`` in order, each within ``timeout``
        seconds (None or 0: no deadline, in the caller's thread), after what this thread posted.

        A call that raises is recorded and the next one runs. ``after(index, value)`` runs after each
        call that returned (on the thread that ran it) and ends the batch by returning True. A call that
        misses its deadline ends the batch; resume with ``start=batch.missed + 1`` to run the rest.
        """
        cell = self._lane.cell
        if not timeout:
            if cell is not None and cell[0] is not None:
                self._wait_for_posted(cell[0])
            return run_inline(functions, argument, start, after)
        work = _Work(functions, argument, start, min(timeout, threading.TIMEOUT_MAX), after)
        worker = cell[0] if cell is not None else None
        if worker is None or not worker.hand_over(work):
            worker = self._hand_over(work, cell)
        while True:
            stranded = worker.wait(work)
            if stranded is None:
                if cell is None:
                    self._give_back(worker)
                return work
            if stranded[0] is work:
                return work
            worker = self._rescue(stranded, cell)

    def post(self, functions: Sequence[Callable[[Any], Any]], argument: Any, timeout: float, report: Report) -> None:
        """Call ``function(argument)`` for each of ``functions`` in order, each within ``timeout`` seconds, without
        waiting; ``report(batch, timeout)`` is given what they did (a call still running late from an
        earlier deadline is skipped, in ``batch.skipped``). This thread's later batches run after them."""
        work = _Work(functions, argument, 0, min(timeout, threading.TIMEOUT_MAX), report=report)
        lane = self._lane
        cell = lane.cell
        if cell is None:
            cell = lane.cell = [None]
            lane.anchor = _Anchor()
            weakref.finalize(lane.anchor, _release, weakref.ref(self), cell).atexit = False
        worker = cell[0]
        if worker is not None and worker.overdue():  # nobody may wait for this thread's worker: look now
            worker = self._rescue_if_late(worker, cell) or worker
        if worker is None or not worker.hand_over(work):
            self._hand_over(work, cell)

    def flush(self) -> tuple[int, list[tuple[Callable[[Any], Any], float]]]:
        """Wait until every batch posted so far (by any thread) has ended, each call within its deadline. This
        thread's own late calls are abandoned, reported and counted (what was behind them runs); another
        thread's are returned, with their deadline, and not waited for further (that thread reports them)."""
        rescued, late = 0, []
        cell = self._lane.cell
        own = cell[0] if cell is not None else None
        while own is not None and self._wait_for_posted(own) is not None:
            if (successor := self._rescue_if_late(own, cell)) is not None:
                rescued += 1
                own = successor
        for worker in list(self._bound):
            if worker is not own and (found := self._wait_for_posted(worker)) is not None:
                work, index = found
                late.append((work.functions[index], work.timeout))
        return rescued, late

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

    def close(self) -> tuple[int, list[tuple[Callable[[Any], Any], float]]]:
        """Wait for what was posted (each call within its deadline), then end the workers (a later ``run`` or
        ``post`` starts new ones). Returns what :meth:`flush` returns."""
        late = self.flush()
        for worker in list(self._bound):
            self._bound.discard(worker)
            worker.retire()  # (its thread's next batch finds it closed and takes another)
        _close_workers(self._idle)
        return late

    def _wait_for_posted(self, worker: _Worker) -> tuple[_Work, int] | None:
        """Wait until the last batch posted on ``worker`` has ended, or one of its calls is past its deadline
        (returned, with the step)."""
        last = worker.last_posted
        while last is not None and not last.reported and not worker.abandoned:
            found = worker.late_step()
            if found is not None:
                return found
            time.sleep(FLUSH_POLL)
        return None

    def _rescue_if_late(self, worker: _Worker, cell: list[_Worker | None] | None) -> _Worker | None:
        """The fresh worker that took over ``worker``'s batches, if its running step was past its deadline."""
        stranded, _ = worker.strand_if_late()
        return None if stranded is None else self._rescue(stranded, cell)

    def _rescue(self, stranded: list[_Work], cell: list[_Worker | None] | None) -> _Worker:
        """A posted batch (``stranded[0]``) missed a deadline on a worker now abandoned: report it, and queue the
        rest of it and the batches that were behind it, in order, on a fresh worker (returned; bound in ``cell``
        when given)."""
        late, *behind = stranded
        _report(late)
        worker = self._new()
        rest = late.rest()
        for work in ([rest] if rest is not None else []) + behind:
            worker.hand_over(work)
        if cell is not None:
            self._bind(worker, cell)
        return worker

    def _hand_over(self, work: _Work, cell: list[_Worker | None] | None) -> _Worker:
        """Queue ``work`` on an idle (or new) worker, bound to this thread when ``cell`` is given."""
        while True:
            worker = self._take()
            if worker.hand_over(work):
                if cell is not None:
                    self._bind(worker, cell)
                return worker

    def _bind(self, worker: _Worker, cell: list[_Worker | None]) -> None:
        previous = cell[0]
        if previous is not None:
            self._bound.discard(previous)
        cell[0] = worker
        self._bound.add(worker)

    def _take(self) -> _Worker:
        try:
            return self._idle.pop()  # (a list's pop and append are atomic: no lock needed)
        except IndexError:
            return self._new()

    def _new(self) -> _Worker:
        return _Worker(f"{self.name}-{next(self._numbers)}", self.lateness)

    def _give_back(self, worker: _Worker) -> None:
        if len(self._idle) < MAX_IDLE and not worker.closed:
            self._idle.append(worker)
        else:
            worker.close()


def _release(pool_ref: weakref.ref[Deadlines], cell: list[_Worker | None]) -> None:
    """A thread bound to a worker ended: the worker (with whatever it still runs for the thread) is idle again."""
    worker, cell[0] = cell[0], None
    pool = pool_ref()
    if worker is None:
        return
    if pool is not None and worker in pool._bound:
        pool._bound.discard(worker)
        pool._give_back(worker)
    else:
        worker.close()


def _report(work: _Work) -> None:
    """Give a posted batch's report; one that raises is logged, never the end of its worker."""
    assert work.report is not None
    try:
        if work.failure is not None:
            log.error("a posted batch of calls raised", exc_info=work.failure)
        work.report(work, work.timeout)
    except BaseException:
        log.exception("reporting what a posted batch of calls did failed")
    finally:
        work.reported = True


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
               after: Callable[[int, Any], bool] | None = None) -> Batch:
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
        if after is not None and after(index, value):
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
        for worker in [*pool._idle, *pool._bound]:
            worker.closed = worker.released = True
            _close(worker.go_r, worker.go_w, worker.done_r, worker.done_w)
        pool._idle.clear()
        pool._bound.clear()
        pool._lane = _Lane()
        pool.lateness.reset()


def _flush_at_exit() -> None:
    """What was posted runs to its end (each call within its deadline) before the interpreter goes."""
    for pool in list(_pools):
        pool.flush()


os.register_at_fork(after_in_child=_forget_workers_after_fork)
atexit.register(_flush_at_exit)

_shared = Deadlines()


def call_with_deadline(fn: Callable[..., Any], timeout: float | None, /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` on the process's shared workers: its value, its exception, or
    :class:`DeadlineExceeded` (also at once while the same call, ``fn`` with the same argument objects, is
    still running past an earlier deadline)."""
    return _shared.call(fn, timeout, *args, **kwargs)
