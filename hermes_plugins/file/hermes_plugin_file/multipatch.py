"""``patch(mode="patch")``: a multi-file patch (:mod:`.v4a`) applied all or nothing.

Every change is worked out in memory first, against the files as they are, under the edit locks of every file
it names; only when all of them apply is anything written. A hunk's lines are found exactly, else ignoring
trailing whitespace, else ignoring the indentation too; they must match one place after the previous hunk of
the same file (after its ``@@`` line when it has one).
"""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .results import FileToolError
from .textfile import edit_lock, read_utf8, unchanged_since, write_text
from .v4a import FileChange, Hunk, PatchSyntaxError, parse_patch
from .workspace import resolve_path, workspace_root

__all__ = ["apply_patch"]


@dataclass
class _File:
    """One file as the patch leaves it: its text (``None`` when absent) and how it was found."""

    path: Path
    shown: str
    original: str | None
    text: str | None
    stat: os.stat_result | None
    #: Permission bits a moved file keeps.
    mode: int | None = None


def apply_patch(patch_text: str) -> dict[str, Any]:
    """Apply every change of ``patch_text`` or none; the files it touched and the unified diff."""
    try:
        changes = parse_patch(patch_text)
    except PatchSyntaxError as exc:
        raise FileToolError(f"invalid patch: {exc}") from None
    if not changes:
        raise FileToolError("the patch has no '*** Update File:', '*** Add File:', '*** Delete File:' or "
                            "'*** Move File:' section")
    root = workspace_root()
    paths = {path: resolve_path(path, root) for change in changes for path in (change.path, change.new_path) if path}
    with contextlib.ExitStack() as locks:
        for real in sorted(set(paths.values())):  # one order for every caller: no deadlock between two patches
            locks.enter_context(edit_lock(real, real.relative_to(root).as_posix()))
        files: dict[Path, _File] = {}
        problems: list[str] = []
        for change in changes:
            try:
                _apply(change, paths, root, files)
            except FileToolError as exc:
                problems.append(str(exc))
        if problems:
            raise FileToolError("the patch was not applied (no file was changed):\n" +
                                "\n".join(f"- {problem}" for problem in problems))
        changed = [f for f in files.values() if f.text != f.original]
        for file in changed:
            if file.stat is not None and not unchanged_since(file.path, file.stat):
                raise FileToolError(f"{file.shown!r} changed while the patch was worked out; nothing was "
                                    "written: read it again and retry")
        _write(changed)
    return _report(changed)


def _state(path: Path, root: Path, files: dict[Path, _File]) -> _File:
    """``path`` as earlier changes of this patch left it (read from disk the first time)."""
    if path not in files:
        shown = path.relative_to(root).as_posix()
        text: str | None = None
        info = None
        if path.exists():
            text, info = read_utf8(path, shown)
        files[path] = _File(path, shown, text, text, info)
    return files[path]


def _apply(change: FileChange, paths: dict[str, Path], root: Path, files: dict[Path, _File]) -> None:
    file = _state(paths[change.path], root, files)
    if change.kind == "add":
        if file.path.is_dir():
            raise FileToolError(f"{file.shown}: is a directory; the patch cannot add a file there")
        file.text = change.content
        return
    if file.text is None:
        raise FileToolError(f"{file.shown}: no such file to {change.kind}")
    if change.kind == "delete":
        file.text = None
        return
    text = _updated(file, change.hunks) if change.kind == "update" else file.text
    if not change.new_path:
        file.text = text
        return
    target = _state(paths[change.new_path], root, files)
    if target.path != file.path:
        if target.text is not None or target.path.is_dir():
            raise FileToolError(f"{target.shown}: already exists; the patch does not move a file over another")
        file.text, target.text = None, text
        target.mode = stat.S_IMODE(file.stat.st_mode) if file.stat is not None else None


def _updated(file: _File, hunks: list[Hunk]) -> str:
    """``file``'s text with ``hunks`` applied in order."""
    assert file.text is not None
    newline = "\r\n" if "\r\n" in file.text else "\n"
    ends_with_newline = file.text.endswith("\n")
    lines = file.text.split(newline)
    if ends_with_newline:
        lines.pop()
    cursor = 0
    for number, hunk in enumerate(hunks, 1):
        if not hunk.changes:
            continue
        hinted = [i for i in range(cursor, len(lines)) if hunk.hint in lines[i]] if hunk.hint else []
        if not hunk.old:  # only added lines: after the @@ line, else at the end of the file
            if hunk.hint and len(hinted) != 1:
                where = "is on no line" if not hinted else f"is on {len(hinted)} lines"
                raise FileToolError(f"{file.shown}: hunk {number}: its @@ line {hunk.hint!r} {where} after line "
                                    f"{cursor}; it must name one place to add lines after")
            at = hinted[0] + 1 if hunk.hint else len(lines)
            lines[at:at] = hunk.new
            cursor = at + len(hunk.new)
            continue
        # the @@ line narrows the search when it names one place; otherwise the lines themselves must
        at = _find(lines, hunk.old, hinted[0] if len(hinted) == 1 else cursor, file.shown, number)
        replacement = _replacement(hunk, lines[at:at + len(hunk.old)])
        lines[at:at + len(hunk.old)] = replacement
        cursor = at + len(replacement)
    return newline.join(lines) + (newline if ends_with_newline or not lines else "")


def _replacement(hunk: Hunk, found: list[str]) -> list[str]:
    """The lines that replace ``found``: its context lines as the file has them (a looser match may differ in
    whitespace), the hunk's added lines in place of its removed ones."""
    old = iter(found)
    lines: list[str] = []
    for prefix, text in hunk.lines:
        if prefix == "+":
            lines.append(text)
        elif prefix == " ":
            lines.append(next(old))
        else:
            next(old)
    return lines


def _find(lines: list[str], wanted: list[str], start: int, shown: str, number: int) -> int:
    """Where ``wanted`` is in ``lines`` from ``start``: the one place, at the strictest level that finds any."""
    for level in (lambda s: s, str.rstrip, str.strip):
        target = [level(line) for line in wanted]
        leveled = [level(line) for line in lines]
        # only the places whose first line matches are compared whole: linear in the file, not file x hunk
        places = [i for i in range(start, len(lines) - len(wanted) + 1)
                  if leveled[i] == target[0] and leveled[i:i + len(wanted)] == target]
        if len(places) == 1:
            return places[0]
        if places:
            raise FileToolError(f"{shown}: hunk {number} matches {len(places)} places (lines "
                                f"{', '.join(str(p + 1) for p in places[:5])}); add context lines or an @@ line "
                                "naming the place")
    first = wanted[0] if wanted else ""
    raise FileToolError(f"{shown}: hunk {number}: its context and removed lines (from {first[:60]!r}) are not in "
                        f"the file after line {start}; read_file shows the current text")


def _write(changed: list[_File]) -> None:
    for file in changed:
        if file.text is None:
            file.path.unlink()
            continue
        file.path.parent.mkdir(parents=True, exist_ok=True)
        write_text(file.path, file.text)
        if file.mode is not None:
            os.chmod(file.path, file.mode)


def _report(changed: list[_File]) -> dict[str, Any]:
    diff = "".join(
        line for file in changed for line in difflib.unified_diff(
            (file.original or "").splitlines(keepends=True), (file.text or "").splitlines(keepends=True),
            "/dev/null" if file.original is None else f"a/{file.shown}",
            "/dev/null" if file.text is None else f"b/{file.shown}"))
    return {
        "mode": "patch",
        "files_modified": [f.shown for f in changed if f.original is not None and f.text is not None],
        "files_created": [f.shown for f in changed if f.original is None],
        "files_deleted": [f.shown for f in changed if f.text is None],
        "diff": diff,
    }
