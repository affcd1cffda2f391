"""``SkillCatalog``: every skill one runtime offers, by the name the model uses, with what it shadows.

Names follow Hermes Agent: a plugin's skill is ``<plugin>:<skill>``; user and project skills go by their bare
``name``. The project's skill beats the user's of the same name; the loser is kept as shadowed, never dropped.
A bare name cannot hold ``:``, so it never clashes with a plugin's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from .document import SKILL_DOCUMENT
from .sources import FoundSkill, SkillSource, platform_matches, scan_root


class RegisteredSkill(Protocol):
    """A skill a plugin registered (``ctx.register_skill``): its qualified name, file or folder, and description."""

    @property
    def name(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def description(self) -> str: ...
    @property
    def plugin(self) -> str | None: ...
    @property
    def document(self) -> Path:
        """The Markdown file: the folder's ``SKILL.md``, or the file itself."""

__all__ = ["SkillCatalog", "SkillEntry"]

#: A name the model can call a user or project skill by: the standard's names, and what Hermes Agent's skills also
#: use (underscores, upper case), which validation flags.
_LENIENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class SkillEntry:
    """One skill: its name, where it is, and whether another skill of that name wins over it."""

    name: str
    description: str
    #: ``user``, ``project`` or ``plugin``.
    source: SkillSource
    #: The ``SKILL.md`` (or, for a plugin's single-file skill, the Markdown file).
    document: Path
    #: The folder whose files ``skill_view`` serves (None for a single-file skill).
    folder: Path | None
    category: str | None = None
    plugin: str | None = None
    platforms: tuple[str, ...] = ()
    #: The source of the skill that wins over this one (None: this one is offered).
    shadowed_by: str | None = None
    #: Why the front matter could not be read (the skill is listed, with this).
    problem: str | None = None
    #: False when its ``SKILL.md`` is no regular file: listed with its problem, never offered to the model.
    readable: bool = True

    @property
    def origin(self) -> str:
        """``user``, ``project`` or ``plugin:<id>``."""
        return f"plugin:{self.plugin}" if self.source == "plugin" else self.source

    @property
    def available(self) -> bool:
        """Its ``platforms:`` allow this system."""
        return platform_matches(self.platforms)


class SkillCatalog:
    """The skills of a runtime: plugin skills, then user and project skill roots in precedence order."""

    def __init__(self, plugin_skills: Iterable[RegisteredSkill], roots: Iterable[tuple[Path, SkillSource]],
                 cache_dir: Path | None = None) -> None:
        self.roots = list(roots)
        entries: dict[str, SkillEntry] = {}
        self.shadowed: list[SkillEntry] = []
        for skill in plugin_skills:
            # registered as its folder, or as the folder's SKILL.md (as published plugins do): its files are served
            folder = skill.path if skill.path.is_dir() else skill.path.parent if skill.path.name == SKILL_DOCUMENT \
                else None
            entries[skill.name] = SkillEntry(skill.name, " ".join(skill.description.split()), "plugin",
                                             skill.document, folder, plugin=skill.plugin)
        for root, source in self.roots:
            for found in scan_root(root, cache_dir):
                entry = _entry(found, source)
                previous = entries.get(entry.name)
                if previous is None:
                    entries[entry.name] = entry
                elif previous.source == source:  # the same name twice in one root: the first (by path) wins
                    self.shadowed.append(replace(entry, shadowed_by=previous.origin))
                else:
                    self.shadowed.append(replace(previous, shadowed_by=entry.origin))
                    entries[entry.name] = entry
        self.entries = dict(sorted(entries.items()))

    def offered(self) -> list[SkillEntry]:
        """The skills the model may use here: not shadowed, readable, and meant for this platform."""
        return [entry for entry in self.entries.values() if entry.available and entry.readable]

    def get(self, name: str) -> SkillEntry | None:
        """The skill ``name`` (a bare name, ``category/name`` as Hermes Agent also accepts, or ``plugin:skill``),
        offered or not."""
        name = name.strip()
        category, _, bare = name.rpartition("/")
        entry = self.entries.get(bare if category else name)
        return None if entry is None or (category and entry.category != category) else entry

    def root_of(self, source: SkillSource) -> Path | None:
        return next((root for root, s in self.roots if s == source), None)


def _entry(found: FoundSkill, source: SkillSource) -> SkillEntry:
    folder = Path(found.folder)
    # the name the front matter gives, when it is one a model can call; otherwise the folder's
    name = found.name if found.name and _LENIENT_NAME.match(found.name) else folder.name
    return SkillEntry(name, found.description, source, folder / SKILL_DOCUMENT, folder, found.category,
                      platforms=found.platforms, problem=found.problem, readable=found.readable)
