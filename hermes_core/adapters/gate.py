"""``parallel_safe`` for frameworks that run a turn's tool calls at once and have no per-tool way to say otherwise
(the Agents SDK, LangGraph's ``ToolNode``): as in Hermes' own batches, a tool that is not ``parallel_safe`` runs
alone, after the calls already running and before the ones that come after it; parallel-safe ones run together."""

from __future__ import annotations

import asyncio
import threading

__all__ = ["CallGate"]


class CallGate:
    """A shared/exclusive gate for the calls of one adapter's tools, for threads and event loops alike (a list
    of tools may be used from several loops, or from a loop and threads: no asyncio primitive is shared).

    ``enter``/``aenter`` and ``leave`` are plain calls, not context managers: the gate is on every call's path.
    """

    __slots__ = ("_alone", "_lock", "_running", "_waiting", "_wakeup")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wakeup = threading.Condition(self._lock)
        self._running = 0
        self._alone = False
        #: Calls waiting; parallel-safe calls that arrive while an exclusive one waits queue behind it.
        self._waiting: list[bool] = []

    def _try_enter(self, alone: bool) -> bool:
        """Enter when nothing is in the way (called holding the lock)."""
        if self._alone or (self._running if alone else True in self._waiting):
            return False
        if alone:
            self._alone = True
        else:
            self._running += 1
        return True

    def enter(self, parallel_safe: bool) -> None:
        """Wait, blocking this thread, until the call may run."""
        alone = not parallel_safe
        with self._lock:
            if self._try_enter(alone):
                return
            self._waiting.append(alone)
            try:
                while True:
                    self._waiting.remove(alone)  # a waiter does not stand in its own way
                    entered = self._try_enter(alone)
                    self._waiting.append(alone)
                    if entered:
                        return
                    self._wakeup.wait()
            finally:
                self._waiting.remove(alone)

    async def aenter(self, parallel_safe: bool) -> None:
        """Wait until the call may run without blocking the loop: at once when nothing is in the way (the usual
        case, no thread hop), else on a worker thread."""
        with self._lock:
            if self._try_enter(not parallel_safe):
                return
        waiting = asyncio.get_running_loop().run_in_executor(None, self.enter, parallel_safe)
        try:
            await asyncio.shield(waiting)
        except asyncio.CancelledError:  # the wait goes on in its thread: leave as soon as it has entered
            def leave(done: asyncio.Future[None]) -> None:
                if not done.cancelled() and done.exception() is None:
                    self.leave(parallel_safe)

            waiting.add_done_callback(leave)
            raise

    def leave(self, parallel_safe: bool) -> None:
        """The call has ended."""
        with self._lock:
            if parallel_safe:
                self._running -= 1
            else:
                self._alone = False
            if self._waiting:
                self._wakeup.notify_all()
