"""Reading files Hermes did not write (manifests, caches, skills, config, an index) without hanging or
exhausting the process: only regular files, no symlink where none is expected, and a size cap."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..errors import UnsafeFileError

__all__ = ["MANIFEST_LIMIT", "TEXT_LIMIT", "read_untrusted_bytes", "read_untrusted_text"]

#: A ``plugin.yaml`` or a skill's front matter is a few kilobytes; a megabyte is generous.
MANIFEST_LIMIT = 1 << 20
#: A config file, a cache or an index.
TEXT_LIMIT = 16 << 20

# O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def read_untrusted_bytes(path: Path | str, limit: int = MANIFEST_LIMIT, *, follow_symlinks: bool = False) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes; :class:`UnsafeFileError` otherwise.

    A symlink is refused unless ``follow_symlinks`` (a user's own config may be one; a manifest has no reason
    to be), and then its target must be a regular file too.
    """
    flags = _FLAGS
    if not follow_symlinks:
        nofollow = getattr(os, "O_NOFOLLOW", 0)
        if not nofollow and os.path.islink(path):  # Windows has no O_NOFOLLOW
            raise UnsafeFileError(errno.ELOOP, "a symlink, which is not followed here", os.fspath(path))
        flags |= nofollow
    try:
        fd = os.open(path, flags)
    except OSError:
        if not follow_symlinks and os.path.islink(path):  # ELOOP (Linux) or EMLINK (FreeBSD)
            raise UnsafeFileError(errno.ELOOP, "a symlink, which is not followed here", os.fspath(path)) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFileError(errno.EINVAL, "not a regular file", os.fspath(path))
        if info.st_size > limit:
            raise UnsafeFileError(errno.EFBIG, f"larger than {limit} bytes ({info.st_size})", os.fspath(path))
        chunks: list[bytes] = []
        size = 0
        while size <= limit:  # the file may grow after fstat
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise UnsafeFileError(errno.EFBIG, f"larger than {limit} bytes", os.fspath(path))
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_untrusted_text(path: Path | str, limit: int = MANIFEST_LIMIT, *, follow_symlinks: bool = False) -> str:
    """:func:`read_untrusted_bytes` decoded as UTF-8 (``UnicodeDecodeError`` when it is not)."""
    return read_untrusted_bytes(path, limit, follow_symlinks=follow_symlinks).decode("utf-8")
