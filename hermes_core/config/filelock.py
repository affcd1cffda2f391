"""Exclusive locks that hold across threads and processes, with a bounded wait.

Each lock is a lock file, locked with ``fcntl.flock`` (Unix) or ``msvcrt.locking`` (Windows), imported where
used; within one process a lock per path serialises the threads first (an OS lock is not a thread lock on
every platform). :func:`path_lock` serialises edits of any file, wherever it is, through a lock file in a
private per-user folder, since the file itself is replaced (not rewritten) by an atomic edit.

A lock file is opened without following a symbolic link and created only where nothing is (``O_NOFOLLOW``,
``O_CREAT | O_EXCL``), so a planted link never makes Hermes create or open its target; it must be a regular file.
Its folder must belong to this user (or root) and not be writable by everyone (on Unix). Each refusal is an
:class:`UnsafeFileError` that says why, apart from :class:`FileLockTimeout` (another edit holds the lock).
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

from ..errors import FileLockTimeout, UnsafeFileError

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
        _check_folder(lock_file.parent)
        fd = _open_lock_file(lock_file)
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
    if stat.S_ISLNK(os.lstat(folder).st_mode):
        raise UnsafeFileError(f"{folder}: the folder of Hermes' edit locks is a symbolic link, which this user's "
                              "own folder never is; remove it so edits can be locked")
    return folder


def _check_folder(folder: Path) -> None:
    """Refuse a lock folder another user owns (root aside) or everyone may write: they could swap its lock files."""
    if not hasattr(os, "getuid"):
        return  # Windows: the folder's ACL decides, not a mode
    try:
        info = os.stat(folder)
    except FileNotFoundError:
        raise UnsafeFileError(f"{folder}: the folder of the lock file does not exist") from None
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeFileError(f"{folder}: the folder of the lock file is not a folder")
    if info.st_uid not in (os.getuid(), 0):
        raise UnsafeFileError(f"{folder}: the folder of the lock file belongs to {_owner(info.st_uid)}, not to this "
                              f"user ({_owner(os.getuid())}), who may replace its files; use a folder of your own")
    if info.st_mode & stat.S_IWOTH:
        raise UnsafeFileError(f"{folder}: the folder of the lock file is writable by every user (mode "
                              f"{stat.S_IMODE(info.st_mode):o}), who may plant its files; remove that permission "
                              "(chmod o-w)")


def _open_lock_file(lock_file: Path) -> int:
    """Open ``lock_file``, creating it only where nothing is; never through a symbolic link, only a regular file."""
    flags = os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        try:
            fd = os.open(lock_file, flags)
        except FileNotFoundError:
            try:
                fd = os.open(lock_file, flags | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:  # created meanwhile, or a dangling symlink (which the next open refuses)
                fd = os.open(lock_file, flags)
    except PermissionError:
        raise UnsafeFileError(f"{lock_file}: the lock file belongs to {_owner(_uid_of(lock_file))} and this user "
                              f"({_owner(_uid())}) cannot open it: another user's Hermes edits here, or left it "
                              "behind (remove it when no edit runs)") from None
    except OSError:
        if os.path.islink(lock_file):
            raise UnsafeFileError(f"{lock_file}: the lock file is a symbolic link, which Hermes never makes; remove "
                                  "it") from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UnsafeFileError(f"{lock_file}: the lock file is not a regular file; remove it")
    return fd


def _uid() -> int | None:
    return os.getuid() if hasattr(os, "getuid") else None


def _uid_of(path: Path) -> int | None:
    try:
        return os.lstat(path).st_uid
    except OSError:
        return None


def _owner(uid: int | None) -> str:
    """A user's name and id (``alice (uid 1000)``), as far as they are known."""
    if uid is None:
        return "another user"
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _acquire(fd: int, lock_file: Path, deadline: float, timeout: float) -> None:
    pause = _POLL
    while not _try_lock(fd):
        if time.monotonic() >= deadline:
            owner = os.fstat(fd).st_uid
            holder = f" (the lock file belongs to {_owner(owner)})" if owner != _uid() and _uid() is not None else ""
            raise FileLockTimeout(f"{lock_file}: still locked by another process after {timeout:g} s{holder}")
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
