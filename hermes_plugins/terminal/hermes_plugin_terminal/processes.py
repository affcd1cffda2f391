"""The background processes started by ``terminal(background=true)``, per task."""

from __future__ import annotations

import atexit
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from hermes_core.backends import Process

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
    """Thread-safe table of background processes; whatever still runs is killed when Python exits."""

    def __init__(self) -> None:
        self._entries: dict[str, BackgroundProcess] = {}
        self._lock = threading.Lock()
        atexit.register(self.kill_all)

    def add(self, command: str, cwd: str, task_id: str, process: Process, *, backend: str = "local",
            pty: bool = False) -> BackgroundProcess:
        entry = BackgroundProcess(f"proc_{uuid.uuid4().hex[:12]}", command, cwd, task_id, process, backend, pty)
        with self._lock:
            self._entries[entry.id] = entry
            finished = [e for e in self._entries.values() if e.process.poll() is not None]
            for old in finished[:max(0, len(self._entries) - MAX_TRACKED)]:
                del self._entries[old.id]
        return entry

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
