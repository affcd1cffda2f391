"""A plugin's manifest ``skills:`` list: skill folders inside its package, registered without importing it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import SkillError
from ..skills.document import SKILL_DOCUMENT, read_front_matter
from ..skills.files import resolve_inside
from ..skills.validation import name_problems

if TYPE_CHECKING:
    from .context import PluginContext
    from .discovery import PluginCandidate

__all__ = ["register_declared_skills"]


def register_declared_skills(context: PluginContext, candidate: PluginCandidate) -> None:
    """Register each folder of the manifest's ``skills:`` as ``<plugin>:<name>`` (the front matter's ``name``, else
    the folder's). A folder that is missing, outside the package or without a regular ``SKILL.md`` is a warning
    of the plugin, not a load failure."""
    folders = (candidate.outline or {}).get("skills") or ()
    if not folders or candidate.path is None:
        return
    package = Path(os.path.realpath(candidate.path))
    for relative in folders:
        try:
            folder = resolve_inside(package, str(relative))
            front = read_front_matter(folder / SKILL_DOCUMENT)
            if front.problems and not front.fields:
                raise SkillError(str(front.problems[0]))
            name = front.fields.get("name")
            name = name if isinstance(name, str) and not name_problems(name) else folder.name
            description = front.fields.get("description")
            context.register_skill(name, folder, description if isinstance(description, str) else "")
        except (SkillError, ValueError, OSError) as exc:
            context.warnings.append(f"skill {relative!r} of plugin.yaml ignored: {exc}")
