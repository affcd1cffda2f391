"""Reading files Hermes did not write (manifests, caches, skills, config, an index) without hanging or
exhausting the process: only regular files, no symlink where none is expected, and a size cap."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from ..errors import UnsafeFileError

__all__ = ["MANIFEST_LIMIT", "TEXT_LIMIT", "read_untrusted_bytes", "read_untrusted_head", "read_untrusted_text"]

#: A ``plugin.yaml`` or a skill's front matter is a few kilobytes; a megabyte is generous.
MANIFEST_LIMIT = 1 << 20
#: A config file, a cache or an index.
TEXT_LIMIT = 16 << 20

# O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_CHUNK = 1 << 20


@contextlib.contextmanager
def _regular_file(path: Path | str, follow_symlinks: bool) -> Iterator[tuple[int, os.stat_result]]:
    """An open descriptor of ``path`` and its ``fstat``, only when it is a regular file (and, without
    ``follow_symlinks``, not a symlink): looked at before it is opened, so a FIFO or a device is never opened
    (a writer waiting at a FIFO sees nothing), and again after, so one swapped in between is refused too."""
    name = os.fspath(path)
    if not stat.S_ISREG(os.stat(name, follow_symlinks=follow_symlinks).st_mode):
        why = "a symlink, which is not followed here" if os.path.islink(name) and not follow_symlinks else None
        raise UnsafeFileError(errno.ELOOP if why else errno.EINVAL,
                              f"not a regular file ({why})" if why else "not a regular file", name)
    flags = _FLAGS if follow_symlinks else _FLAGS | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(name, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFileError(errno.EINVAL, "not a regular file", name)
        yield fd, info
    finally:
        os.close(fd)


def _read(fd: int, limit: int) -> bytes:
    """At most ``limit`` bytes from ``fd`` (the file may have grown since it was looked at)."""
    chunks: list[bytes] = []
    size = 0
    while size < limit and (chunk := os.read(fd, min(_CHUNK, limit - size))):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read_untrusted_bytes(path: Path | str, limit: int = MANIFEST_LIMIT, *, follow_symlinks: bool = False) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes; :class:`UnsafeFileError` otherwise.

    A symlink is refused unless ``follow_symlinks`` (a user's own config may be one; a manifest has no reason
    to be), and then its target must be a regular file too.
    """
    with _regular_file(path, follow_symlinks) as (fd, info):
        data = b"" if info.st_size > limit else _read(fd, limit + 1)
        if info.st_size > limit or len(data) > limit:
            raise UnsafeFileError(errno.EFBIG, f"larger than {limit} bytes ({max(info.st_size, len(data))})",
                                  os.fspath(path))
        return data


def read_untrusted_head(path: Path | str, limit: int, *, follow_symlinks: bool = False) -> tuple[bytes, int]:
    """At most the first ``limit`` bytes of the regular file ``path`` (a preview, a front matter), and its whole
    size; :class:`UnsafeFileError` as :func:`read_untrusted_bytes` raises it, but never for the size."""
    with _regular_file(path, follow_symlinks) as (fd, info):
        data = _read(fd, limit)
        return data, max(info.st_size, len(data))


def read_untrusted_text(path: Path | str, limit: int = MANIFEST_LIMIT, *, follow_symlinks: bool = False) -> str:
    """:func:`read_untrusted_bytes` decoded as UTF-8 (``UnicodeDecodeError`` when it is not)."""
    return read_untrusted_bytes(path, limit, follow_symlinks=follow_symlinks).decode("utf-8")
