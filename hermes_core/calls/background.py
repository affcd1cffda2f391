"""Background sub-agents: ``delegate_task`` with ``background: true`` and ``spawn_agent``, as Hermes Agent 0.19's
``tools/async_delegation.py`` keeps them.

A run returns its id at once and works on a daemon worker. Its record lives in the home's ``state.db`` (Hermes
Agent's ``async_delegations`` table): ``running`` while it works, then its status and results with the delivery
``pending``. The completion is delivered exactly once, claimed atomically in the database, to whichever asks
first: the host's callback (``Runtime.set_subagent_callback``) as soon as it finishes, else the session's next
``answer_tool_calls`` (appended to the last result) or a ``subagent_status`` call. A run whose process died is
found on the next start (the first look at the records) and marked ``failed``, its delivery pending: never lost.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from ..errors import DelegationError

__all__ = ["BackgroundRuns", "CompletionCallback", "completion_text"]

log = logging.getLogger(__name__)

#: ``callback(completion)`` hears a finished background run (its record, as ``subagent_status`` shows it).
CompletionCallback = Callable[[dict[str, Any]], Any]
#: Finished records kept (the oldest delivered ones go first).
MAX_KEPT: Final = 200
#: What a run whose process ended says.
ABANDONED: Final = "the process that ran this sub-agent exited before it finished (pid {pid}); its outcome is lost"
_TERMINAL_SQL = "state NOT IN ('running', 'finalizing')"
_SCHEMA = """CREATE TABLE IF NOT EXISTS async_delegations (
    delegation_id TEXT PRIMARY KEY, origin_session TEXT NOT NULL, origin_ui_session_id TEXT NOT NULL DEFAULT '',
    parent_session_id TEXT, state TEXT NOT NULL, dispatched_at REAL NOT NULL, completed_at REAL,
    updated_at REAL NOT NULL, event_json TEXT, result_json TEXT, delivery_state TEXT NOT NULL DEFAULT 'pending',
    delivery_attempts INTEGER NOT NULL DEFAULT 0, delivered_at REAL, owner_pid INTEGER, owner_started_at INTEGER,
    task_json TEXT, delivery_claim TEXT, delivery_claimed_at REAL)"""
#: The runs this process is working on (across runtimes): a ``running`` record of this pid not here is abandoned.
_ACTIVE: set[str] = set()
_ACTIVE_LOCK = threading.Lock()


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        try:
            kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        finally:
            kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class BackgroundRuns:
    """The background sub-agent runs of one home: starting them, their durable records, delivering completions."""

    def __init__(self, database: Path, max_running: Callable[[], int]) -> None:
        self.database = database
        self._max_running = max_running
        self._lock = threading.Lock()
        self.callback: CompletionCallback | None = None
        self._recovered = False
        #: Sessions with a completion waiting (``None`` until the records were first read).
        self._waiting: set[str] | None = None

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        self.database.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            connection = sqlite3.connect(self.database, timeout=10)
            try:
                with connection:
                    connection.execute(_SCHEMA)
                    yield connection
            finally:
                connection.close()

    # -- starting ------------------------------------------------------------------------------------

    def start(self, work: Callable[[], list[dict[str, Any]]], task: dict[str, Any], session_id: str | None) -> str:
        """Record a run of ``work`` (it returns each task's result) for ``session_id`` and start it; its id.

        ``task`` (goal(s), context, toolsets, role) is kept with the record for the completion. Raises
        :class:`~hermes_core.errors.DelegationError` when ``delegation.max_concurrent_children`` runs are going.
        """
        self.recover()
        limit = self._max_running()
        with _ACTIVE_LOCK:
            if len(_ACTIVE) >= limit:
                raise DelegationError(f"{len(_ACTIVE)} background sub-agent runs are going and "
                                      f"delegation.max_concurrent_children is {limit}: wait for one to finish "
                                      "(subagent_status), or run this one in the foreground.")
            run_id = f"deleg_{uuid.uuid4().hex[:12]}"
            _ACTIVE.add(run_id)
        now = time.time()
        try:
            with self._db() as db:
                db.execute("INSERT INTO async_delegations (delegation_id, origin_session, parent_session_id, state, "
                           "dispatched_at, updated_at, owner_pid, task_json) VALUES (?, ?, ?, 'running', ?, ?, ?, ?)",
                           (run_id, session_id or "", session_id, now, now, os.getpid(), json.dumps(task)))
        except BaseException:
            with _ACTIVE_LOCK:
                _ACTIVE.discard(run_id)
            raise
        threading.Thread(target=self._run, args=(run_id, work, task, session_id, now), daemon=True,
                         name=f"hermes-background-{run_id}").start()
        return run_id

    def _run(self, run_id: str, work: Callable[[], list[dict[str, Any]]], task: dict[str, Any],
             session_id: str | None, dispatched_at: float) -> None:
        try:
            results = work()
            statuses = {result.get("status") for result in results}
            status = "completed" if statuses == {"completed"} else "failed" if "completed" not in statuses \
                else "partial"
            error = None
        except Exception as exc:  # the run failed as a whole: that is its outcome
            log.exception("background run %s failed", run_id)
            results, status, error = [], "error", f"{type(exc).__name__}: {exc}"
        completion = {"type": "async_delegation", "delegation_id": run_id, "session_id": session_id,
                      "status": status, **task, "results": results, "error": error,
                      "dispatched_at": dispatched_at, "completed_at": time.time()}
        try:
            self._finish(run_id, completion)
        finally:
            with _ACTIVE_LOCK:
                _ACTIVE.discard(run_id)
        self._offer_to_callback(run_id)

    def _finish(self, run_id: str, completion: dict[str, Any]) -> None:
        now = time.time()
        with self._db() as db:
            db.execute("UPDATE async_delegations SET state=?, completed_at=?, updated_at=?, event_json=?, "
                       "result_json=?, delivery_state='pending' WHERE delegation_id=?",
                       (completion["status"], now, now, json.dumps(completion, default=str),
                        json.dumps(completion["results"], default=str), run_id))
            self._prune(db)
        if self._waiting is not None and completion.get("session_id"):
            self._waiting.add(completion["session_id"])

    def _prune(self, db: sqlite3.Connection) -> None:
        excess = db.execute(f"SELECT COUNT(*) FROM async_delegations WHERE {_TERMINAL_SQL}").fetchone()[0] - MAX_KEPT
        if excess > 0:
            db.execute(f"DELETE FROM async_delegations WHERE delegation_id IN (SELECT delegation_id FROM "
                       f"async_delegations WHERE {_TERMINAL_SQL} ORDER BY delivery_state='delivered' DESC, "
                       "updated_at LIMIT ?)", (excess,))

    # -- recovery ------------------------------------------------------------------------------------

    def recover(self) -> int:
        """Mark the ``running`` records whose process is gone ``failed`` (once per object); how many."""
        if self._recovered:
            return 0
        self._recovered = True
        if not self.database.exists():
            self._waiting = set()
            return 0
        now, recovered = time.time(), 0
        with self._db() as db:
            rows = db.execute("SELECT delegation_id, origin_session, dispatched_at, owner_pid, task_json FROM "
                              "async_delegations WHERE state IN ('running', 'finalizing')").fetchall()
            for run_id, session, dispatched_at, pid, task_json in rows:
                with _ACTIVE_LOCK:
                    mine = run_id in _ACTIVE
                if mine or (pid and pid != os.getpid() and pid_alive(int(pid))):
                    continue
                completion = {"type": "async_delegation", "delegation_id": run_id, "session_id": session or None,
                              "status": "failed", **json.loads(task_json or "{}"), "results": [],
                              "error": ABANDONED.format(pid=pid), "dispatched_at": dispatched_at,
                              "completed_at": now}
                db.execute("UPDATE async_delegations SET state='failed', completed_at=?, updated_at=?, "
                           "event_json=?, result_json='[]', delivery_state='pending' WHERE delegation_id=?",
                           (now, now, json.dumps(completion), run_id))
                recovered += 1
            self._waiting = {row[0] for row in db.execute(
                f"SELECT DISTINCT origin_session FROM async_delegations WHERE {_TERMINAL_SQL} AND "
                "delivery_state='pending' AND origin_session != ''")}
        if recovered:
            log.warning("%d background sub-agent run(s) of an exited process marked failed", recovered)
        return recovered

    # -- reading -------------------------------------------------------------------------------------

    def status(self, run_id: str, *, deliver: bool = True) -> dict[str, Any] | None:
        """Run ``run_id`` as ``subagent_status`` shows it (``None`` when unknown); a finished run's completion is
        delivered here unless it already was elsewhere (``delivered_now`` says which)."""
        self.recover()
        with self._db() as db:
            row = db.execute("SELECT state, dispatched_at, event_json, delivery_state, task_json, origin_session "
                             "FROM async_delegations WHERE delegation_id=?", (run_id,)).fetchone()
        if row is None:
            return None
        state, dispatched_at, event_json, delivery, task_json, session = row
        record: dict[str, Any] = json.loads(event_json) if event_json else {
            "delegation_id": run_id, "session_id": session or None, "status": state, **json.loads(task_json or "{}"),
            "dispatched_at": dispatched_at}
        record["status"] = state
        record["delivered_now"] = bool(deliver and event_json and delivery == "pending" and self._claim(run_id))
        record["delivery"] = "delivered" if record["delivered_now"] else delivery
        return record

    def runs(self, session_id: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """The newest runs (of ``session_id`` when given): id, status, goal(s), times, delivery."""
        self.recover()
        where, params = ("WHERE origin_session=?", (session_id,)) if session_id else ("", ())
        with self._db() as db:
            rows = db.execute(f"SELECT delegation_id, state, dispatched_at, completed_at, delivery_state, task_json "
                              f"FROM async_delegations {where} ORDER BY dispatched_at DESC LIMIT ?",
                              (*params, limit)).fetchall()
        return [{"delegation_id": run_id, "status": state, **json.loads(task_json or "{}"),
                 "dispatched_at": dispatched_at, "completed_at": completed_at, "delivery": delivery}
                for run_id, state, dispatched_at, completed_at, delivery, task_json in rows]

    # -- delivery ------------------------------------------------------------------------------------

    def _claim(self, run_id: str) -> bool:
        """Mark ``run_id``'s completion delivered, if nobody did: whether this caller delivers it."""
        now = time.time()
        with self._db() as db:
            claimed = db.execute("UPDATE async_delegations SET delivery_state='delivered', delivered_at=?, "
                                 "updated_at=?, delivery_attempts=delivery_attempts+1 WHERE delegation_id=? AND "
                                 "delivery_state='pending' AND event_json IS NOT NULL",
                                 (now, now, run_id)).rowcount == 1
        return claimed

    def _unclaim(self, run_id: str) -> None:
        with self._db() as db:
            db.execute("UPDATE async_delegations SET delivery_state='pending', delivered_at=NULL WHERE "
                       "delegation_id=?", (run_id,))

    def _offer_to_callback(self, run_id: str) -> None:
        callback = self.callback
        if callback is None or not self._claim(run_id):
            return
        record = self.status(run_id, deliver=False)
        try:
            callback(record or {})
        except Exception:  # the host did not take it: the session or subagent_status will
            log.exception("the subagent callback failed on %s; its completion stays pending", run_id)
            self._unclaim(run_id)

    def take_completions(self, session_id: str) -> list[dict[str, Any]]:
        """The finished runs of ``session_id`` not delivered yet, claimed for this caller (oldest first)."""
        if self._waiting is None:
            self.recover()
        if self._waiting is None or session_id not in self._waiting:
            return []
        self._waiting.discard(session_id)
        with self._db() as db:
            ids = [row[0] for row in db.execute(
                f"SELECT delegation_id FROM async_delegations WHERE origin_session=? AND {_TERMINAL_SQL} AND "
                "delivery_state='pending' ORDER BY completed_at", (session_id,))]
        taken = []
        for run_id in ids:
            if self._claim(run_id):
                record = self.status(run_id, deliver=False)
                if record is not None:
                    taken.append(record)
        return taken

    def deliver_into(self, session_id: str | None, results: list[str]) -> list[str]:
        """``results`` of a batch of ``answer_tool_calls``, the last one followed by the session's finished runs
        (only at the top level: a sub-agent's own calls never take its parent's completions)."""
        from .subagents import DEPTH

        if not session_id or not results or DEPTH.get():
            return results
        try:
            completions = self.take_completions(session_id)
        except sqlite3.Error as exc:  # a broken state.db fails the background tools, never the calls
            log.warning("finished background runs not delivered: %s: %s", self.database, exc)
            return results
        if not completions:
            return results
        notes = "\n\n".join(completion_text(completion) for completion in completions)
        return [*results[:-1], f"{results[-1]}\n\n{notes}"]


def completion_text(completion: dict[str, Any]) -> str:
    """A finished run as the model reads it: what it was for, and what came of it."""
    goals: Sequence[str] = completion.get("goals") or [str(completion.get("goal") or "")]
    lines = [f"[Background sub-agent run {completion.get('delegation_id')} finished: {completion.get('status')}]"]
    lines += [f"Goal: {goal}" for goal in goals]
    if completion.get("error"):
        lines.append(f"Error: {completion['error']}")
    for result in completion.get("results") or []:
        summary = result.get("summary") or result.get("error") or "(no summary)"
        prefix = f"Result {result.get('task_index', 0) + 1}" if len(goals) > 1 else "Result"
        lines.append(f"{prefix} ({result.get('status')}): {summary}")
    return "\n".join(lines)
