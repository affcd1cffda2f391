"""write_file: create or overwrite a text file, making its parent directories."""

from __future__ import annotations

from typing import Any

from .results import FileToolError, file_tool
from .textfile import edit_lock, write_text
from .workspace import resolve_path, workspace_root


@file_tool
def write_file(args: dict[str, Any]) -> dict[str, Any]:
    """Write ``content`` to ``path`` as UTF-8, replacing any existing file."""
    root = workspace_root()
    path = resolve_path(args["path"], root)
    shown = path.relative_to(root).as_posix()
    if path.is_dir():
        raise FileToolError(f"{shown!r} is a directory; give the path of a file to write")
    path.parent.mkdir(parents=True, exist_ok=True)
    with edit_lock(path, shown):  # serialised with patch and other writes of this file
        created = not path.exists()
        written = write_text(path, args["content"])
    return {"path": shown, "bytes_written": written, "created": created}
