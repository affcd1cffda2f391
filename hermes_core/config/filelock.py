"""Exclusive locks that hold across threads and processes, with a bounded wait.

Each lock is a lock file, locked with ``fcntl.flock`` (Unix) or ``msvcrt.locking`` (Windows), imported where
used; within one process a lock per path serialises the threads first (an OS lock is not a thread lock on
every platform). :func:`path_lock` serialises edits of any file, wherever it is, through a lock file in a
private per-user folder, since the file itself is replaced (not rewritten) by an atomic edit.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from ..errors import FileLockTimeout

__all__ = ["DEFAULT_TIMEOUT", "exclusive_lock", "path_lock"]

#: How long an edit waits for another one of the same file before it gives up.
DEFAULT_TIMEOUT: Final = 30.0
_POLL: Final = 0.005
_MAX_POLL: Final = 0.1

_guard = threading.Lock()
_thread_locks: dict[str, threading.Lock] = {}


def _thread_lock(key: str) -> threading.Lock:
    with _guard:
        return _thread_locks.setdefault(key, threading.Lock())


@contextlib.contextmanager
def exclusive_lock(lock_file: Path, timeout: float = DEFAULT_TIMEOUT) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_file`` (created if missing) for the block; :class:`FileLockTimeout`
    when another thread or process holds it for more than ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    local = _thread_lock(os.path.abspath(lock_file))
    if not local.acquire(timeout=max(timeout, 0)):
        raise FileLockTimeout(f"{lock_file}: still locked by another edit after {timeout:g} s")
    try:
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            _acquire(fd, lock_file, deadline, timeout)
            try:
                yield
            finally:
                _release(fd)
        finally:
            os.close(fd)
    finally:
        local.release()


def path_lock(path: Path, timeout: float = DEFAULT_TIMEOUT) -> contextlib.AbstractContextManager[None]:
    """The lock of edits of the file ``path`` (its real path), whoever runs them."""
    key = hashlib.sha256(os.path.realpath(path).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return exclusive_lock(_lock_folder() / f"{key}.lock", timeout)


def _lock_folder() -> Path:
    """A folder only this user can write (made once; refused when someone else planted it)."""
    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    folder = Path(tempfile.gettempdir()) / f"hermes-locks-{user}"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        raise FileLockTimeout(f"{folder}: is not a folder of this user's; remove it so edits can be locked")
    return folder


def _acquire(fd: int, lock_file: Path, deadline: float, timeout: float) -> None:
    pause = _POLL
    while not _try_lock(fd):
        if time.monotonic() >= deadline:
            raise FileLockTimeout(f"{lock_file}: still locked by another process after {timeout:g} s")
        time.sleep(pause)
        pause = min(pause * 2, _MAX_POLL)


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)  # msvcrt locks bytes from the current position
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _release(fd: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)
