"""patch: replace an exact string in a text file, which must match once unless ``replace_all`` is set."""

from __future__ import annotations

import difflib
from typing import Any

from .multipatch import apply_patch
from .results import FileToolError, file_tool
from .textfile import edit_lock, read_utf8, unchanged_since, write_text
from .workspace import resolve_path, workspace_root


@file_tool
def patch(args: dict[str, Any]) -> dict[str, Any]:
    """Replace ``old_string`` with ``new_string`` in ``path`` (mode ``replace``), or apply a multi-file patch
    (mode ``patch``); returns the unified diff."""
    mode = args.get("mode", "replace")
    if mode == "patch":
        if not args.get("patch"):
            raise FileToolError("mode 'patch' needs `patch`: the patch text, from '*** Begin Patch' to "
                                "'*** End Patch'")
        return apply_patch(args["patch"])
    if mode != "replace":
        raise FileToolError(f"mode must be 'replace' or 'patch', not {mode!r}")
    missing = [name for name in ("path", "old_string", "new_string") if args.get(name) is None]
    if missing:
        raise FileToolError(f"mode 'replace' needs {', '.join(missing)} (or use mode 'patch' with `patch`)")
    old, new, replace_all = args["old_string"], args["new_string"], args.get("replace_all", False)
    if not old:
        raise FileToolError("old_string is empty; give the exact text to replace (write_file creates files)")
    if old == new:
        raise FileToolError("old_string and new_string are identical; there is nothing to change")
    root = workspace_root()
    path = resolve_path(args["path"], root)
    shown = path.relative_to(root).as_posix()
    with edit_lock(path, shown):  # another patch or write_file of this file waits, in any thread or process
        text, before = read_utf8(path, shown)
        count = text.count(old)
        if count == 0:
            raise FileToolError(
                f"old_string was not found in {shown!r}; it must match the file exactly, "
                "whitespace and indentation included (read_file shows the current text)"
            )
        if count > 1 and not replace_all:
            raise FileToolError(
                f"old_string occurs {count} times in {shown!r}; include more surrounding text to make "
                "it unique, or set replace_all to true to replace every occurrence"
            )
        updated = text.replace(old, new)
        if not unchanged_since(path, before):  # a program that does not take the lock wrote meanwhile
            raise FileToolError(f"{shown!r}: the file changed since it was read; read it again and retry")
        write_text(path, updated)
    diff = difflib.unified_diff(
        text.splitlines(keepends=True), updated.splitlines(keepends=True), f"a/{shown}", f"b/{shown}"
    )
    return {"path": shown, "replacements": count, "diff": "".join(diff)}
