"""Files replaced atomically: the home's caches (discovery, config, skills, MCP listings) as JSON, keyed on the code
that wrote them, and any text file."""

from __future__ import annotations

import functools
import json
import os
import zlib
from pathlib import Path
from typing import Any

from .._version import __version__

__all__ = ["code_key", "write_atomically", "write_json"]

_PACKAGE = Path(__file__).resolve().parent.parent


@functools.cache
def code_key(*modules: str) -> str:
    """What every cache file is keyed on besides its own content: the package version and a checksum of the source of
    ``modules`` (paths under ``hermes_core/``), the code that decides what the cache stores and how it is read. A
    file another release or another edit of that code wrote is never read as this code's, so no format number has
    to be changed by hand when what a cache holds changes (a new config key, a new manifest field). Read once per
    process; where the source is not installed (compiled files only) the version alone tells them apart."""
    checksum = 0
    for module in modules:
        try:
            checksum = zlib.crc32((_PACKAGE / module).read_bytes(), checksum)
        except OSError:
            checksum = zlib.crc32(module.encode(), checksum)
    return f"{__version__}-{checksum:08x}"


def write_json(path: Path, data: Any) -> None:
    """Replace ``path`` with ``data`` as JSON, atomically: a reader sees the old file or the new one, whole.
    Raises ``OSError``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text``: a reader sees the old file or the new one, whole."""
    import tempfile  # it imports shutil: off the start-up path, which writes only JSON caches

    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
