"""A skill's own files, served to the model: regular files inside the skill folder only, capped, text or described.

A path the model chooses is relative to the skill folder; ``..``, absolute paths, drive letters and symlinks
that lead out of the folder are refused, and what is served is never more than :data:`FILE_LIMIT` bytes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from ..errors import SkillError
from .document import read_regular

__all__ = ["FILE_LIMIT", "LINKED_GROUPS", "linked_files", "read_text_file", "resolve_inside"]

#: The most of one file (``SKILL.md`` included) a call returns; past it the text is cut and says so.
FILE_LIMIT = 128 * 1024
#: The folders the standard names, each a group of ``linked_files``; other files go under ``other``.
LINKED_GROUPS = ("references", "templates", "scripts", "assets")
MAX_LINKED = 500


def resolve_inside(folder: Path, relative: str) -> Path:
    """``folder / relative`` as a real path inside ``folder``; raises :class:`SkillError` for any way out."""
    text = (relative or "").strip()
    if not text:
        raise SkillError("file_path is empty")
    if "\x00" in text:
        raise SkillError("file_path holds a NUL character")
    posix, windows = PurePosixPath(text.replace("\\", "/")), PureWindowsPath(text)
    if posix.is_absolute() or windows.is_absolute() or windows.drive:
        raise SkillError(f"{relative!r} is an absolute path: give a path relative to the skill folder")
    if ".." in posix.parts:
        raise SkillError(f"{relative!r} leaves the skill folder ('..' is not allowed)")
    base = Path(os.path.realpath(folder))
    target = Path(os.path.realpath(base.joinpath(*posix.parts)))
    if target != base and base not in target.parents:
        raise SkillError(f"{relative!r} leads out of the skill folder (a symlink)")
    return target


def read_text_file(path: Path, limit: int = FILE_LIMIT) -> dict[str, Any]:
    """A file's text, cut at ``limit`` bytes with a marker; a binary file is described, not dumped."""
    capped = read_regular(path, limit)
    head = capped.data
    try:
        if b"\x00" in head[:8192]:
            raise UnicodeDecodeError("utf-8", head, 0, 1, "NUL byte")
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not (capped.truncated and exc.start >= len(head) - 3):  # a character cut by the limit is not binary
            return {"content": f"[Binary file: {path.name}, size: {capped.size} bytes]", "is_binary": True,
                    "size": capped.size}
        text = head.decode("utf-8", errors="ignore")
    if capped.truncated:
        text += f"\n\n[truncated: showed the first {len(head)} of {capped.size} bytes]"
    return {"content": text, "truncated": capped.truncated, "size": capped.size}


def linked_files(folder: Path, document: Path | None = None) -> dict[str, list[str]]:
    """The skill's other files, grouped by the standard's folders (``other`` for the rest); symlinks and
    anything but regular files are left out, as are hidden files."""
    grouped: dict[str, list[str]] = {}
    count = 0
    pending = [folder]
    while pending and count < MAX_LINKED:
        current = pending.pop()
        try:
            with os.scandir(current) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            path = Path(entry.path)
            if stat.S_ISDIR(mode):
                pending.append(path)
            elif stat.S_ISREG(mode) and path != document and count < MAX_LINKED:
                relative = path.relative_to(folder).as_posix()
                top = relative.split("/", 1)[0] if "/" in relative else ""
                grouped.setdefault(top if top in LINKED_GROUPS else "other", []).append(relative)
                count += 1
    return {group: sorted(grouped[group]) for group in (*LINKED_GROUPS, "other") if group in grouped}
