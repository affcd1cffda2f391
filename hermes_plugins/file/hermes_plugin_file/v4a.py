"""The multi-file patch format of Hermes Agent's ``patch(mode="patch")`` (V4A, as Codex writes it), parsed.

::

    *** Begin Patch
    *** Update File: src/app.py
    @@ def main():
     context line
    -removed line
    +added line
    *** Add File: docs/new.md
    +a line of the new file
    *** Delete File: old.txt
    *** Move File: a.txt -> b.txt
    *** End Patch

An update may also be renamed by a ``*** Move to: new/path`` line right after its header (Codex's spelling).
Inside an update, a line that has no prefix is a context line (an empty one is a blank line of the file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = ["FileChange", "Hunk", "PatchSyntaxError", "parse_patch"]

_HEADER: Final = re.compile(r"\*\*\*\s*(Update|Add|Delete|Move)\s+File:\s*(.*)$")
_MOVE_TO: Final = re.compile(r"\*\*\*\s*Move\s+to:\s*(.*)$")
_HINT: Final = re.compile(r"@@\s*(.*?)\s*(?:@@)?\s*$")
_BEGIN: Final = re.compile(r"\*\*\*\s*Begin Patch\s*$")
_END: Final = re.compile(r"\*\*\*\s*End Patch\s*$")
_END_OF_FILE: Final = re.compile(r"\*\*\*\s*End of File\s*$")

Kind = Literal["update", "add", "delete", "move"]


class PatchSyntaxError(ValueError):
    """The patch text does not follow the format; the message names the line."""


@dataclass
class Hunk:
    """One change inside a file: lines to find (context and removed) and what replaces them."""

    #: The text after ``@@``: a line near the change (e.g. the function it is in), or ``None``.
    hint: str | None = None
    #: ``(prefix, text)`` in order; prefix ``" "`` (context), ``"-"`` (removed) or ``"+"`` (added).
    lines: list[tuple[str, str]] = field(default_factory=list)
    #: How many lines at the end are context only because the patch had an empty line there.
    _implicit_blank_tail: int = 0

    @property
    def old(self) -> list[str]:
        return [text for prefix, text in self.lines if prefix != "+"]

    @property
    def new(self) -> list[str]:
        return [text for prefix, text in self.lines if prefix != "-"]

    @property
    def changes(self) -> bool:
        return any(prefix != " " for prefix, _ in self.lines)

    def add(self, prefix: str, text: str, *, implicit: bool = False) -> None:
        self.lines.append((prefix, text))
        self._implicit_blank_tail = self._implicit_blank_tail + 1 if implicit else 0

    def trimmed(self) -> Hunk:
        """This hunk without the blank context lines that only separated it from the next header."""
        end = len(self.lines) - self._implicit_blank_tail
        return Hunk(self.hint, self.lines[:end])


@dataclass
class FileChange:
    """What the patch does to one file."""

    kind: Kind
    path: str
    #: Where the file goes (``move``, or an ``update`` with ``*** Move to:``).
    new_path: str | None = None
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def content(self) -> str:
        """An added file's text: each ``+`` line a line of the file."""
        return "".join(f"{line}\n" for hunk in self.hunks for line in hunk.new)


def parse_patch(text: str) -> list[FileChange]:
    """The file changes ``text`` describes, in order; raises :class:`PatchSyntaxError` naming what is wrong."""
    lines = text.replace("\r\n", "\n").split("\n")
    begin = next((i for i, line in enumerate(lines) if _BEGIN.match(line.strip())), -1)
    changes: list[FileChange] = []
    current: FileChange | None = None
    hunk: Hunk | None = None

    def close_hunk() -> None:
        nonlocal hunk
        if current is not None and hunk is not None and hunk.lines:
            current.hunks.append(hunk.trimmed())
        hunk = None

    for number, line in enumerate(lines[begin + 1:], begin + 2):
        stripped = line.strip()
        if _END.match(stripped):
            break
        if header := _HEADER.match(stripped):
            close_hunk()
            current = _change(header.group(1).lower(), header.group(2).strip(), number)
            changes.append(current)
            if current.kind in ("delete", "move"):
                current = None  # nothing may follow their header
            continue
        if (move_to := _MOVE_TO.match(stripped)) and current is not None and current.kind == "update":
            current.new_path = move_to.group(1).strip()
            if not current.new_path:
                raise PatchSyntaxError(f"line {number}: '*** Move to:' names no path")
            continue
        if _END_OF_FILE.match(stripped) or line.startswith("\\"):  # "\ No newline at end of file"
            continue
        if current is None:
            if stripped:
                raise PatchSyntaxError(f"line {number}: {line[:80]!r} is outside any '*** Update File:', "
                                       "'*** Add File:', '*** Delete File:' or '*** Move File:' section")
            continue
        if line.startswith("@@"):
            close_hunk()
            hint = _HINT.match(line)
            hunk = Hunk(hint.group(1) or None if hint else None)
            continue
        if hunk is None:
            hunk = Hunk()
        if current.kind == "add":
            if not line.startswith("+") and line:
                raise PatchSyntaxError(f"line {number}: every line of an added file starts with '+', "
                                       f"not {line[:80]!r}")
            if line:
                hunk.add("+", line[1:])
            continue
        if line[:1] in ("+", "-", " "):
            hunk.add(line[0], line[1:])
        else:
            hunk.add(" ", line, implicit=not line)
    close_hunk()
    for change in changes:
        if change.kind == "update" and not any(h.changes for h in change.hunks) and not change.new_path:
            raise PatchSyntaxError(f"'*** Update File: {change.path}' changes nothing: give lines starting "
                                   "with '-' or '+'")
    return changes


def _change(kind: str, rest: str, number: int) -> FileChange:
    if kind == "move":
        source, arrow, target = rest.partition("->")
        if not arrow or not source.strip() or not target.strip():
            raise PatchSyntaxError(f"line {number}: '*** Move File:' needs 'old/path -> new/path'")
        return FileChange("move", source.strip(), target.strip())
    if not rest:
        raise PatchSyntaxError(f"line {number}: '*** {kind.title()} File:' names no path")
    return FileChange("update" if kind == "update" else "add" if kind == "add" else "delete", rest)
