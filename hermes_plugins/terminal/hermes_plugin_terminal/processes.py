"""The background processes started by ``terminal(background=true)``, per task."""

from __future__ import annotations

import atexit
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from hermes_core.backends import Process

from .notifications import Notifier, Watch
from .screens import TerminalScreen

__all__ = ["BackgroundProcess", "ProcessTable"]

#: Finished processes beyond this many are forgotten, oldest first.
MAX_TRACKED: Final = 64


@dataclass
class BackgroundProcess:
    """One background command and what its owner has already read of its output."""

    id: str
    command: str
    cwd: str
    task_id: str
    process: Process
    backend: str = "local"
    pty: bool = False
    started_at: float = field(default_factory=time.time)
    killed: bool = False
    read_position: int = 0
    #: What it reports by itself (``notify_on_complete``, ``watch_patterns``), if anything.
    watch: Watch | None = None
    #: The caller has seen it exit (poll, wait, kill): its end is not reported again.
    exit_seen: bool = False
    #: Its terminal as ``read_terminal`` last showed it, and whether ``close_terminal`` closed that view.
    screen: TerminalScreen | None = None
    terminal_closed: bool = False
    #: What was written to its input since the last newline (the line being typed, checked whole).
    pending_input: str = ""

    @property
    def status(self) -> str:
        if self.process.poll() is None:
            return "running"
        return "killed" if self.killed else "exited"

    def unread_output(self) -> str:
        """Output since the last call (as far as it is still kept), and mark it read."""
        total = self.process.output.total_chars
        text = self.process.output.since(self.read_position)
        self.read_position = total
        return text

    def kill(self) -> int:
        self.killed = self.process.poll() is None
        return self.process.kill()

    def describe(self) -> dict[str, Any]:
        status = self.status
        return {
            "session_id": self.id,
            "command": self.command,
            "pid": self.process.pid,
            "cwd": self.cwd,
            "backend": self.backend,
            "pty": self.pty,
            "status": status,
            "exit_code": None if status == "running" else self.process.poll(),
            "started_at": datetime.fromtimestamp(self.started_at, UTC).isoformat(timespec="seconds"),
            "output_chars": self.process.output.total_chars,
        }


class ProcessTable:
    """Thread-safe table of background processes; whatever still runs is killed when Python exits.

    ``inject`` hands a process's own report (its end, a watched line) to the session's agent loop; when it
    cannot (False), the report waits here for the task's next result (:meth:`take_reports`).
    """

    def __init__(self, inject: Callable[[str, str], bool] = lambda content, role: False) -> None:
        self._entries: dict[str, BackgroundProcess] = {}
        self._lock = threading.Lock()
        self._inject = inject
        self._reports: dict[str, list[str]] = {}
        self._notifier = Notifier(self._deliver)
        atexit.register(self.kill_all)

    def add(self, command: str, cwd: str, task_id: str, process: Process, *, backend: str = "local",
            pty: bool = False, watch: Watch | None = None) -> BackgroundProcess:
        entry = BackgroundProcess(f"proc_{uuid.uuid4().hex[:12]}", command, cwd, task_id, process, backend, pty,
                                  watch=watch)
        with self._lock:
            self._entries[entry.id] = entry
            finished = [e for e in self._entries.values() if e.process.poll() is not None]
            for old in finished[:max(0, len(self._entries) - MAX_TRACKED)]:
                del self._entries[old.id]
        if watch is not None:
            self._notifier.watch(entry)
        return entry

    def _deliver(self, entry: BackgroundProcess, report: str) -> None:
        if entry.watch is not None:
            entry.watch.report_progress(report)
        try:
            delivered = self._inject(report, "user")
        except Exception:  # the host's sink failed: the report still reaches the model with the next result
            delivered = False
        if not delivered:
            with self._lock:
                self._reports.setdefault(entry.task_id, []).append(report)

    def take_reports(self, task_id: str) -> list[str]:
        """The reports of ``task_id``'s processes that no agent loop took, oldest first; they are handed over once."""
        with self._lock:
            return self._reports.pop(task_id, [])

    def close(self) -> None:
        """Stop the watcher (the runtime is closing)."""
        self._notifier.close()

    def running(self) -> int:
        with self._lock:
            return sum(entry.process.poll() is None for entry in self._entries.values())

    def for_task(self, task_id: str) -> list[BackgroundProcess]:
        with self._lock:
            return [entry for entry in self._entries.values() if entry.task_id == task_id]

    def get(self, process_id: str, task_id: str) -> BackgroundProcess | None:
        """The process ``process_id`` if ``task_id`` started it (tasks cannot touch each other's)."""
        with self._lock:
            entry = self._entries.get(process_id)
        return entry if entry is not None and entry.task_id == task_id else None

    def kill_all(self) -> None:
        with self._lock:
            entries = list(self._entries.values())
        for entry in entries:
            if entry.process.poll() is None:
                entry.kill()
