"""Workspace files as text: binary sniffing, the size limit and atomic writes."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from hermes_core.errors import FileLockTimeout
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


def check_text_file(path: Path, shown: str) -> None:
    """Refuse a missing, directory, over-large or binary file, naming it as ``shown``."""
    if not path.exists():
        raise FileToolError(f"file not found: {shown!r}")
    if path.is_dir():
        raise FileToolError(f"{shown!r} is a directory, not a file; use search_files to list its files")
    size, limit = path.stat().st_size, max_file_bytes()
    if size > limit:
        raise FileToolError(
            f"{shown!r} is {size} bytes, over the {limit}-byte limit for text files "
            "(plugin setting max_file_bytes); use search_files to find the lines you need"
        )
    if is_binary(path):
        raise FileToolError(f"{shown!r} is a binary file ({size} bytes); the file tools handle text only")


def read_utf8(path: Path, shown: str) -> str:
    """The text of a file an edit changes; a :class:`FileToolError` when it is not UTF-8."""
    try:
        return path.read_bytes().decode("utf-8")
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
