"""The files of a home's caches (discovery, config, MCP listings): JSON replaced atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["write_json", "write_text"]


def write_json(path: Path, data: Any) -> None:
    """Replace ``path`` with ``data`` as JSON, atomically: a reader sees the old file or the new one, whole.
    Raises ``OSError``."""
    write_text(path, json.dumps(data))


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8), atomically. Raises ``OSError``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
