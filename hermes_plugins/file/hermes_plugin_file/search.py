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
MAX_LIMIT: Final = 1000
MAX_CONTEXT: Final = 20
OUTPUT_MODES: Final = ("content", "files_only", "count")
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


class _Window:
    """Which results a call returns: ``limit`` of them after skipping ``offset``; counts what it saw."""

    def __init__(self, offset: int, limit: int) -> None:
        self.offset, self.limit, self.seen = offset, limit, 0

    def take(self) -> bool | None:
        """Whether the next result is kept (True), skipped (False) or one past the window (None)."""
        self.seen += 1
        if self.seen <= self.offset:
            return False
        return None if self.seen > self.offset + self.limit else True


def _find(files: Iterable[Path], pattern: str, base: Path, root: Path, window: _Window,
          deadline: _Deadline) -> tuple[list[str], bool]:
    """The files of the window whose name (or path under ``base``) matches the glob, and whether more exist."""
    names: list[str] = []
    for path in files:
        if deadline.passed():
            return names, True
        if _glob_matches(pattern, path, base):
            taken = window.take()
            if taken is None:
                return names, True
            if taken:
                names.append(path.relative_to(root).as_posix())
    return names, False


class _OutOfTime(Exception):
    """The search's deadline passed inside a file."""


def _matching_lines(path: Path, regex: Regex, deadline: _Deadline) -> Iterator[tuple[int, str, Any]]:
    """``(line number, line, match)`` of each matching line of a text file (binary, huge and special files have
    none, nor have hard-linked ones, whose other name may be outside the workspace, unless they are allowed)."""
    info = path.stat()
    if not stat.S_ISREG(info.st_mode) or info.st_size > max_file_bytes() or is_binary(path) \
            or (info.st_nlink > 1 and not hard_links_allowed()):
        return
    with path.open(encoding="utf-8", errors="replace") as stream:
        for number, line in enumerate(stream, 1):
            if deadline.passed():
                raise _OutOfTime
            line = line.removesuffix("\n")  # RE2's $ matches only at the very end
            if found := regex.search(line):
                yield number, line, found


def _grep(files: Iterable[Path], regex: Regex, root: Path, window: _Window, deadline: _Deadline, mode: str,
          context: int) -> tuple[dict[str, Any], bool]:
    """The window's results in ``mode`` (``content``: matching lines with ``context`` lines around them;
    ``files_only``: the files that match; ``count``: matching lines per file), and whether more exist."""
    matches: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    for path in files:
        shown = path.relative_to(root).as_posix()
        try:
            if mode == "content":
                kept: list[dict[str, Any]] = []
                for number, line, found in _matching_lines(path, regex, deadline):
                    taken = window.take()
                    if taken is None:
                        matches += _with_context(path, shown, kept, context)
                        return {"matches": matches}, True
                    if taken:
                        kept.append({"path": shown, "line": number, "text": _excerpt(line, found)})
                matches += _with_context(path, shown, kept, context)
                continue
            hits = sum(1 for _ in _matching_lines(path, regex, deadline))
        except _OutOfTime:
            return ({"matches": matches} if mode == "content" else _per_file(mode, counts)), True
        except OSError:
            continue
        if hits:
            taken = window.take()
            if taken is None:
                return _per_file(mode, counts), True
            if taken:
                counts[shown] = hits
    return ({"matches": matches} if mode == "content" else _per_file(mode, counts)), False


def _per_file(mode: str, counts: dict[str, int]) -> dict[str, Any]:
    if mode == "files_only":
        return {"files": list(counts)}
    return {"counts": counts, "total_count": sum(counts.values())}


def _with_context(path: Path, shown: str, kept: list[dict[str, Any]], context: int) -> list[dict[str, Any]]:
    """``kept`` matches of one file, each preceded and followed by up to ``context`` lines marked ``context``."""
    if not context or not kept:
        return kept
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return kept
    wanted = {entry["line"]: entry for entry in kept}
    numbers = sorted({n for entry in kept
                      for n in range(max(1, entry["line"] - context), min(len(lines), entry["line"] + context) + 1)})
    return [wanted.get(n) or {"path": shown, "line": n, "text": _clip(lines[n - 1]), "context": True}
            for n in numbers]


def _clip(text: str) -> str:
    return text if len(text) <= MATCH_CONTEXT_CHARS else f"{text[:MATCH_CONTEXT_CHARS]}…"


@file_tool
def search_files(args: dict[str, Any]) -> dict[str, Any]:
    """Search contents (target ``content``, a regex) or names (target ``files``, a glob) under ``path``."""
    pattern, file_glob = args["pattern"], args.get("file_glob")
    target = args.get("target", "content")
    mode = args.get("output_mode", "content")
    # out-of-range numbers are brought into range, as Hermes Agent does
    limit = max(1, min(int(args.get("limit", DEFAULT_LIMIT)), MAX_LIMIT))
    offset, context = max(0, int(args.get("offset", 0))), max(0, min(int(args.get("context", 0)), MAX_CONTEXT))
    if target not in ("content", "files"):
        raise FileToolError(f"target must be 'content' or 'files', not {target!r}")
    if mode not in OUTPUT_MODES:
        raise FileToolError(f"output_mode must be one of {', '.join(OUTPUT_MODES)}, not {mode!r}")
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
    deadline, window = _Deadline(), _Window(offset, limit)

    if target == "files":
        names, truncated = _find(files, pattern, base, root, window, deadline)
        result.update(files=names, count=len(names), truncated=truncated)
    else:
        regex = _compile(pattern, bool(args.get("ignore_case")))
        found, truncated = _grep(files, regex, root, window, deadline, mode, context)
        count = (sum(not m.get("context") for m in found["matches"]) if mode == "content"
                 else len(found["files" if mode == "files_only" else "counts"]))
        result.update(output_mode=mode, **found, count=count, truncated=truncated)
    if offset:
        result["offset"] = offset
    if truncated and not deadline.reached:
        result["next_offset"] = offset + limit
    if deadline.reached:
        result["note"] = (f"the search stopped at its {deadline.seconds:g} s deadline (plugin setting "
                          "search_timeout); these are the results found until then: narrow path or file_glob")
    return result
