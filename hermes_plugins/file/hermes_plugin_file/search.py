"""search_files: a regex over file contents, or a glob over file names, under a workspace path.

The pattern is the model's, so it runs on RE2 (google-re2): matching takes time linear in the line's
length whatever the pattern (no catastrophic backtracking) and releases the GIL. The whole search also
has a deadline, the plugin setting ``search_timeout``; past it the matches found so far are returned.
"""

from __future__ import annotations

import fnmatch
import os
import stat
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

import re2

from hermes_core.plugin import tool_context

from .results import FileToolError, file_tool
from .textfile import hard_links_allowed, is_binary, max_file_bytes
from .workspace import resolve_path, workspace_root

DEFAULT_LIMIT: Final = 50
SKIPPED_DIRS: Final = frozenset({"node_modules", "__pycache__"})
MATCH_CONTEXT_CHARS: Final = 300
DEFAULT_SEARCH_TIMEOUT: Final = 30.0
#: A compiled RE2 pattern (google-re2 gives its pattern type no public name).
Regex = Any


class _Deadline:
    """The end of the search's time budget (plugin setting ``search_timeout``, in seconds)."""

    def __init__(self) -> None:
        self.seconds = float(tool_context().settings.get("search_timeout", DEFAULT_SEARCH_TIMEOUT))
        self._end = time.monotonic() + self.seconds
        self.reached = False

    def passed(self) -> bool:
        self.reached = self.reached or time.monotonic() >= self._end
        return self.reached


def _compile(pattern: str, ignore_case: bool) -> Regex:
    """``pattern`` compiled by RE2, or a :class:`FileToolError` that says what is wrong with it."""
    options = re2.Options()
    options.log_errors = False  # RE2 would print every bad pattern to stderr
    options.case_sensitive = not ignore_case
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else exc
        raise FileToolError(
            f"invalid regular expression {pattern!r}: {reason} (search_files uses RE2 syntax, as ripgrep "
            "does: no look-around and no back-references)"
        ) from None


def _files(start: Path, root: Path) -> Iterator[Path]:
    """Regular files under ``start``, sorted, never entering hidden or dependency directories.

    Symlinked directories are not followed, and a file whose real path leaves ``root`` is skipped.
    """
    if not start.is_dir():
        yield start
        return
    for dirpath, dirnames, filenames in os.walk(start):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIPPED_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath, name)
            if path.is_file() and Path(os.path.realpath(path)).is_relative_to(root):
                yield path


def _glob_matches(pattern: str, path: Path, base: Path) -> bool:
    """Match ``pattern`` against the file name, or against the path under ``base`` when it has a ``/``."""
    subject = path.relative_to(base).as_posix() if "/" in pattern else path.name
    return fnmatch.fnmatchcase(subject, pattern)


def _excerpt(text: str, match: Any) -> str:
    if len(text) <= MATCH_CONTEXT_CHARS:
        return text
    start = max(0, match.start() - MATCH_CONTEXT_CHARS // 3)
    end = start + MATCH_CONTEXT_CHARS
    return f"{'…' if start else ''}{text[start:end]}{'…' if end < len(text) else ''}"


def _find(files: Iterable[Path], pattern: str, base: Path, root: Path, limit: int,
          deadline: _Deadline) -> tuple[list[str], bool]:
    """Up to ``limit`` files whose name (or path under ``base``) matches the glob, and whether more exist."""
    names: list[str] = []
    for path in files:
        if deadline.passed():
            return names, True
        if _glob_matches(pattern, path, base):
            if len(names) == limit:
                return names, True
            names.append(path.relative_to(root).as_posix())
    return names, False


def _grep(
    files: Iterable[Path], regex: Regex, root: Path, limit: int, deadline: _Deadline
) -> tuple[list[dict[str, Any]], bool]:
    """Up to ``limit`` matching lines and whether more exist; skips binary, huge and unreadable files."""
    matches: list[dict[str, Any]] = []
    size_limit = max_file_bytes()
    hard_links = hard_links_allowed()  # a hard link's other name may be outside the workspace
    for path in files:
        try:
            if deadline.passed():
                return matches, True
            info = path.stat()
            if not stat.S_ISREG(info.st_mode) or info.st_size > size_limit or (info.st_nlink > 1 and not hard_links) \
                    or is_binary(path):
                continue
            with path.open(encoding="utf-8", errors="replace") as stream:
                for number, line in enumerate(stream, 1):
                    if deadline.passed():
                        return matches, True
                    line = line.removesuffix("\n")  # RE2's $ matches only at the very end
                    found = regex.search(line)
                    if not found:
                        continue
                    if len(matches) == limit:
                        return matches, True
                    shown = path.relative_to(root).as_posix()
                    matches.append({"path": shown, "line": number, "text": _excerpt(line, found)})
        except OSError:
            continue
    return matches, False


@file_tool
def search_files(args: dict[str, Any]) -> dict[str, Any]:
    """Search contents (target ``content``, a regex) or names (target ``files``, a glob) under ``path``."""
    pattern, target = args["pattern"], args.get("target", "content")
    limit, file_glob = args.get("limit", DEFAULT_LIMIT), args.get("file_glob")
    if limit < 1:
        raise FileToolError(f"limit ({limit}) must be at least 1")
    if target not in ("content", "files"):
        raise FileToolError(f"target must be 'content' or 'files', not {target!r}")
    root = workspace_root()
    start = resolve_path(args.get("path", "."), root)
    if not start.exists():
        raise FileToolError(f"path not found: {args.get('path', '.')!r}")
    base = start if start.is_dir() else start.parent
    files: Iterable[Path] = _files(start, root)
    if file_glob:
        files = (path for path in files if _glob_matches(file_glob, path, base))
    shown = start.relative_to(root).as_posix()
    result: dict[str, Any] = {"pattern": pattern, "target": target, "path": shown}
    deadline = _Deadline()

    if target == "files":
        names, truncated = _find(files, pattern, base, root, limit, deadline)
        result.update(files=names, count=len(names), truncated=truncated)
    else:
        regex = _compile(pattern, bool(args.get("ignore_case")))
        matches, truncated = _grep(files, regex, root, limit, deadline)
        result.update(matches=matches, count=len(matches), truncated=truncated)
    if deadline.reached:
        result["note"] = (f"the search stopped at its {deadline.seconds:g} s deadline (plugin setting "
                          "search_timeout); these are the results found until then: narrow path or file_glob")
    return result
