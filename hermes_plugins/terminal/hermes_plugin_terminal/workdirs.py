"""Per-task working directories: a ``cd`` in one command carries over to the same task's next command."""

from __future__ import annotations

import threading

__all__ = ["WorkingDirectories"]


class WorkingDirectories:
    """Thread-safe map of task id to the directory its last foreground command ended in."""

    def __init__(self) -> None:
        self._dirs: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, task_id: str) -> str | None:
        with self._lock:
            return self._dirs.get(task_id)

    def set(self, task_id: str, path: str) -> None:
        with self._lock:
            self._dirs[task_id] = path

    def forget(self, task_id: str) -> None:
        with self._lock:
            self._dirs.pop(task_id, None)
