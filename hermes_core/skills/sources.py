"""Where skills come from: the user's and (when opted in) the project's skill folders, and installed plugins.

User and project skills are ``<root>/**/SKILL.md`` (folders between the root and the skill are its category);
a plugin's skills come from ``ctx.register_skill`` and its manifest's ``skills:`` list. Scanning a root reads
each ``SKILL.md``'s front matter only, and is kept in the home's cache beside the plugin discovery cache:
valid while every folder scanned and every ``SKILL.md`` keep their modification times.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..config.cachefile import code_key, write_json
from .document import SKILL_DOCUMENT, listed_description, read_front_matter

__all__ = ["FoundSkill", "SkillSource", "platform_matches", "scan_root"]

log = logging.getLogger(__name__)

SkillSource = Literal["user", "project", "plugin"]
#: How deep below a root a skill may sit (category folders), and how many folders one scan visits at most.
MAX_DEPTH = 6
MAX_FOLDERS = 5000
#: The code whose change makes a cached scan stale: the scan, and the reading of front matter.
_CODE = ("skills/sources.py", "skills/document.py")
#: ``platforms:`` names of Hermes Agent and the ``sys.platform`` prefix each stands for.
PLATFORMS = {"macos": "darwin", "linux": "linux", "windows": "win32"}


@dataclass(frozen=True)
class FoundSkill:
    """A ``SKILL.md`` found under a root, with the front matter fields listing needs."""

    folder: str
    category: str | None
    name: str | None
    description: str
    platforms: tuple[str, ...]
    problem: str | None = None
    #: False when the ``SKILL.md`` could not be read at all (not a regular file): never offered to the model.
    readable: bool = True


def platform_matches(platforms: tuple[str, ...] | list[str]) -> bool:
    """A skill's ``platforms:`` allows this system (none listed: every system)."""
    return not platforms or any(sys.platform.startswith(PLATFORMS.get(p.lower().strip(), p.lower().strip()))
                                for p in platforms)


def scan_root(root: Path, cache_dir: Path | None = None) -> list[FoundSkill]:
    """Every skill under ``root`` (front matter only), from ``cache_dir``'s cache when nothing changed.

    Symlinked folders are not entered and a ``SKILL.md`` that is not a regular file is not opened.
    """
    if cache_dir is None:
        return _scan(root)[0]
    key = json.dumps([code_key(*_CODE), str(root)])
    path = cache_dir / f"skills-{zlib.crc32(key.encode()):08x}.json"
    cached, known = _load(path, key)
    if cached is not None:
        return cached
    skills, watched = _scan(root, known)
    try:
        write_json(path, {"key": key, "watched": watched, "stamps": _stamps(watched),
                          "skills": [skill.__dict__ for skill in skills]})
    except OSError as exc:
        log.debug("skills cache not written: %s", exc)
    return skills


def _scan(root: Path, known: dict[str, tuple[Any, FoundSkill]] | None = None) -> tuple[list[FoundSkill], list[str]]:
    """The skills under ``root`` and every path whose change invalidates the result; ``known`` holds the last
    scan's skills by ``SKILL.md`` with its stamp: one that did not change is not read again."""
    known = known or {}
    found: list[FoundSkill] = []
    watched = [str(root)]
    pending: list[tuple[Path, int]] = [(root, 0)]
    visited = 0
    while pending and visited < MAX_FOLDERS:
        folder, depth = pending.pop()
        visited += 1
        try:
            with os.scandir(folder) as entries:
                children = sorted(entries, key=lambda entry: entry.name)
        except OSError:
            continue
        document = next((c for c in children if c.name == SKILL_DOCUMENT), None)
        if document is not None and folder != root:
            watched.append(document.path)
            previous = known.get(document.path)
            same = previous is not None and previous[0] == _stamps([document.path])[0]
            found.append(previous[1] if same and previous else _found(root, folder, Path(document.path)))
            continue  # a skill's own subfolders (references/, scripts/ ...) hold no skills
        if depth >= MAX_DEPTH:
            continue
        for child in reversed(children):
            if not child.name.startswith(".") and child.is_dir(follow_symlinks=False):
                watched.append(child.path)
                pending.append((Path(child.path), depth + 1))
    found.sort(key=lambda skill: skill.folder)
    return found, sorted(watched)


def _found(root: Path, folder: Path, document: Path) -> FoundSkill:
    relative = folder.relative_to(root).parent.as_posix()
    category = None if relative == "." else relative
    try:
        regular = stat.S_ISREG(os.lstat(document).st_mode)
    except OSError:
        regular = False
    if not regular:  # a symlink, a FIFO, a device: never opened
        return FoundSkill(str(folder), category, None, "", (), f"{document}: not a regular file", readable=False)
    front = read_front_matter(document)
    fields = front.fields
    name = fields.get("name")
    platforms = fields.get("platforms") or []
    return FoundSkill(str(folder), category, name if isinstance(name, str) else None,
                      listed_description(front),
                      tuple(str(p) for p in (platforms if isinstance(platforms, list) else [platforms])),
                      str(front.problems[0]) if front.problems else None)


def _stamps(paths: list[str]) -> list[list[int] | None]:
    stamps: list[list[int] | None] = []
    for path in paths:
        try:
            status = os.lstat(path)
            stamps.append([status.st_mtime_ns, status.st_size])
        except OSError:
            stamps.append(None)
    return stamps


def _load(path: Path, key: str) -> tuple[list[FoundSkill] | None, dict[str, tuple[Any, FoundSkill]]]:
    """The cached scan of ``key`` (None when missing, stale or not what this module writes), and the skills it
    holds by ``SKILL.md`` with their stamps (what a new scan need not read again)."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored["key"] != key:
            return None, {}
        skills = [FoundSkill(**{**data, "platforms": tuple(data["platforms"])}) for data in stored["skills"]]
        if stored["stamps"] == _stamps([str(p) for p in stored["watched"]]):
            return skills, {}
        stamps = dict(zip(stored["watched"], stored["stamps"], strict=True))
        documents = [os.path.join(skill.folder, SKILL_DOCUMENT) for skill in skills]
        return None, {doc: (stamps.get(doc), skill) for doc, skill in zip(documents, skills, strict=True)}
    except Exception as exc:  # unreadable or any shape but ours: scan again
        log.debug("skills cache %s ignored: %s: %s", path, type(exc).__name__, exc)
        return None, {}
