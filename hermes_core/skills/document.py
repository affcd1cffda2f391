"""Reading skill files safely, and a ``SKILL.md``'s YAML front matter with the line of every problem.

Skill folders come from plugins, downloads and project checkouts, so a read never trusts the path: only a
regular file is opened (a FIFO or a device would block or never end), without following a symlink unless the
caller expects one, non-blocking, and never past a byte limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..config.untrusted import read_untrusted_head
from ..errors import SkillError, UnsafeFileError

__all__ = ["FRONT_MATTER_LIMIT", "MAX_DESCRIPTION", "SKILL_DOCUMENT", "Capped", "FrontMatter", "Problem",
           "listed_description", "parse_front_matter", "read_front_matter", "read_regular"]

#: The file that makes a folder a skill.
SKILL_DOCUMENT = "SKILL.md"

#: Listing reads at most this much of a ``SKILL.md``: the front matter must end within it.
FRONT_MATTER_LIMIT = 64 * 1024
#: The standard's limit on a description's length.
MAX_DESCRIPTION = 1024
_FIRST_READ = 4096
_CLOSING = re.compile(rb"\n---[ \t]*\r?\n")


class Problem(NamedTuple):
    """One thing wrong with a skill, where it is."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Capped:
    """The first bytes of a file: ``data`` holds at most the limit, ``size`` is the whole file's."""

    data: bytes
    size: int

    @property
    def truncated(self) -> bool:
        return len(self.data) < self.size


def read_regular(path: Path, limit: int, *, follow_symlinks: bool = False) -> Capped:
    """At most ``limit`` bytes of the regular file ``path`` (a FIFO, a device or, without ``follow_symlinks``, a
    symlink is refused before it is opened); raises :class:`SkillError` for anything else."""
    try:
        data, size = read_untrusted_head(path, limit, follow_symlinks=follow_symlinks)
    except UnsafeFileError as exc:
        raise SkillError(f"{path}: {exc.strerror}") from None
    except OSError as exc:
        raise SkillError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return Capped(data, size)


@dataclass(frozen=True)
class FrontMatter:
    """A ``SKILL.md`` split in two: its front matter fields and its Markdown body."""

    fields: dict[str, Any]
    #: The body (from :func:`read_front_matter`, only the part of it read with the front matter).
    body: str = ""
    #: The line the body starts on (1-based).
    body_line: int = 1
    #: The line of each top-level field (for problems that name a line).
    lines: dict[str, int] = field(default_factory=dict)
    problems: tuple[Problem, ...] = ()


def parse_front_matter(text: str, path: Path | str = "SKILL.md", *, complete: bool = True) -> FrontMatter:
    """Split ``text`` into front matter and body; what is wrong with the front matter comes back as problems.

    ``complete=False``: ``text`` may be only the start of the file (a closing ``---`` not found is then
    reported as past the listing limit).
    """
    import yaml

    from ..config.yamlmodel import load_untrusted_yaml

    where = str(path)
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != "---":
        return FrontMatter({}, text, 1, problems=(Problem(where, 1, "no YAML front matter: the file must start "
                                                                    "with a line '---'"),))
    closing = next((index for index, line in enumerate(lines[1:], start=1) if line.rstrip("\r\n").rstrip() == "---"),
                   None)
    if closing is None:
        message = "the front matter is not closed by a line '---'" if complete else \
            f"the front matter does not end within the first {FRONT_MATTER_LIMIT // 1024} KiB"
        return FrontMatter({}, "", 1, problems=(Problem(where, 1, message),))
    document = "".join(lines[1:closing])
    body = "".join(lines[closing + 1:])
    try:
        data = load_untrusted_yaml(document)
    except yaml.YAMLError as exc:
        alias_line = getattr(exc, "line", None)  # load_untrusted_yaml's refusal of aliases says where
        if isinstance(alias_line, int):
            return FrontMatter({}, body, closing + 2, problems=(
                Problem(where, alias_line + 1, "YAML aliases (*name) are not allowed in a skill's front matter"),))
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        return FrontMatter({}, body, closing + 2, problems=(
            Problem(where, line, f"invalid YAML front matter: {getattr(exc, 'problem', None) or exc}"),))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return FrontMatter({}, body, closing + 2,
                           problems=(Problem(where, 2, f"the front matter must be a mapping, not "
                                                       f"{type(data).__name__}"),))
    return FrontMatter({str(key): value for key, value in data.items()}, body, closing + 2,
                       _field_lines(lines[1:closing]))


def _field_lines(lines: list[str]) -> dict[str, int]:
    """The line of each top-level key of the front matter (the file's line 1 is the opening ``---``)."""
    found: dict[str, int] = {}
    for number, line in enumerate(lines, start=2):
        if line[:1] not in (" ", "\t", "#", "-", "") and ":" in line:
            found.setdefault(line.split(":", 1)[0].strip().strip("'\""), number)
    return found


def listed_description(front: FrontMatter) -> str:
    """The description a listing shows: the front matter's, else, as Hermes Agent does, the body's first line that
    is neither blank nor a heading (cut at :data:`MAX_DESCRIPTION`); whitespace collapsed either way. Validation
    still reports the missing field."""
    description = front.fields.get("description")
    if isinstance(description, str) and description.strip():
        return " ".join(description.split())
    line = next((line for line in (line.strip() for line in front.body.splitlines())
                 if line and not line.startswith("#")), "")
    line = " ".join(line.split())
    return line if len(line) <= MAX_DESCRIPTION else line[:MAX_DESCRIPTION - 3] + "..."


def read_front_matter(document: Path, *, follow_symlinks: bool = False) -> FrontMatter:
    """The front matter of ``document`` and as much of the body as came with it (the first 4 KiB, as Hermes Agent
    reads for its listing): at most :data:`FRONT_MATTER_LIMIT` bytes are read."""
    try:
        # most front matter fits the first few KiB: the rest of the body is not read
        capped = read_regular(document, _FIRST_READ, follow_symlinks=follow_symlinks)
        if capped.truncated and not _CLOSING.search(capped.data, 3):
            capped = read_regular(document, FRONT_MATTER_LIMIT, follow_symlinks=follow_symlinks)
    except SkillError as exc:
        return FrontMatter({}, problems=(Problem(str(document), 1, str(exc).removeprefix(f"{document}: ")),))
    text = capped.data.decode("utf-8", errors="replace")
    return parse_front_matter(text, document, complete=not capped.truncated)
