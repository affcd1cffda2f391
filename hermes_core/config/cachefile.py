"""Files replaced atomically: the home's caches (discovery, config, MCP listings) as JSON, and any text file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["write_atomically", "write_json"]


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
