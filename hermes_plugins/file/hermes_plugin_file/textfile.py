"""Workspace files as text: regular files of one name only, binary sniffing, the size limit and atomic writes."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Final

from hermes_core.errors import FileLockTimeout, UnsafeFileError
from hermes_core.plugin import path_lock, tool_context

from .results import FileToolError

SNIFF_BYTES: Final = 8192
DEFAULT_MAX_FILE_BYTES: Final = 50 * 1024 * 1024


def max_file_bytes() -> int:
    """The largest file the tools load as text: setting ``max_file_bytes`` (default 50 MiB)."""
    return int(tool_context().settings.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES))


def is_binary(path: Path) -> bool:
    """True when the file's first bytes hold a NUL byte (as git and grep decide)."""
    with path.open("rb") as stream:
        return b"\0" in stream.read(SNIFF_BYTES)


def hard_links_allowed() -> bool:
    """Whether a file with another name (a hard link) may be read: setting ``allow_hard_links`` (default false)."""
    return bool(tool_context().settings.get("allow_hard_links", False))


@contextlib.contextmanager
def open_text_file(path: Path, shown: str) -> Iterator[BinaryIO]:
    """``path`` open for reading, once it is known to be a regular text file of one name within the size limit.

    It is opened without waiting (a FIFO swapped in is never waited on) and checked on the open file, so what is
    read is what was checked. A file with another name (``st_nlink > 1``) may be a hard link to a file outside the
    workspace, which the path cannot show: it is refused unless the setting ``allow_hard_links`` is true.
    """
    if not path.exists():
        raise FileToolError(f"file not found: {shown!r}")
    if path.is_dir():
        raise FileToolError(f"{shown!r} is a directory, not a file; use search_files to list its files")
    _check_kind(os.stat(path), shown)  # before opening: opening a FIFO or a device can block or act
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                 | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        _check_kind(info, shown)
        if info.st_nlink > 1 and not hard_links_allowed():
            raise FileToolError(
                f"{shown!r} has {info.st_nlink} names (hard links), and another may be outside the workspace; the "
                "file tools do not read such files unless the plugin setting allow_hard_links is true")
        limit = max_file_bytes()
        if info.st_size > limit:
            raise FileToolError(
                f"{shown!r} is {info.st_size} bytes, over the {limit}-byte limit for text files "
                "(plugin setting max_file_bytes); use search_files to find the lines you need"
            )
        if hasattr(os, "O_NONBLOCK"):
            os.set_blocking(fd, True)
        stream = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with stream:
        if b"\0" in stream.read(SNIFF_BYTES):
            raise FileToolError(f"{shown!r} is a binary file ({info.st_size} bytes); the file tools handle text only")
        stream.seek(0)
        yield stream


def _check_kind(info: os.stat_result, shown: str) -> None:
    if not stat.S_ISREG(info.st_mode):
        kind = ("a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device" if stat.S_ISCHR(info.st_mode)
                or stat.S_ISBLK(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode) else "not a regular file")
        raise FileToolError(f"{shown!r} is {kind}; the file tools read regular files only")


def read_utf8(path: Path, shown: str) -> tuple[str, os.stat_result]:
    """The text of a file an edit changes, opened and checked as :func:`open_text_file` does, and the file's
    status when it was read; a :class:`FileToolError` when it is not UTF-8."""
    with open_text_file(path, shown) as stream:
        before, data = os.fstat(stream.fileno()), stream.read()
    try:
        return data.decode("utf-8"), before
    except UnicodeDecodeError:
        raise FileToolError(f"{shown!r} is not valid UTF-8; patch edits UTF-8 text only") from None


#: How long an edit waits for another edit of the same file (plugin setting ``edit_lock_timeout``).
DEFAULT_EDIT_LOCK_TIMEOUT: Final = 30.0


@contextlib.contextmanager
def edit_lock(path: Path, shown: str) -> Iterator[None]:
    """Hold the lock of edits of ``path`` (across threads and processes) for the read-modify-write."""
    timeout = float(tool_context().settings.get("edit_lock_timeout", DEFAULT_EDIT_LOCK_TIMEOUT))
    try:
        with path_lock(path, timeout):
            yield
    except FileLockTimeout:
        raise FileToolError(f"{shown!r} is being edited by another call that has held it for over {timeout:g} s; "
                            "try again later") from None
    except UnsafeFileError as exc:
        raise FileToolError(f"{shown!r} cannot be locked for editing: {exc}") from None


def unchanged_since(path: Path, before: os.stat_result) -> bool:
    """``path`` is still the file ``before`` describes (same inode, size and modification time)."""
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    return (now.st_ino, now.st_size, now.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)


def write_text(path: Path, text: str) -> int:
    """Write ``text`` as UTF-8 and return the byte count.

    A new file is created exclusively (never through a symlink); an existing one is replaced
    atomically through a temporary file in the same directory, keeping its permissions.
    """
    data = text.encode("utf-8")
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        return len(data)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        shutil.copymode(path, temporary)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    return len(data)
