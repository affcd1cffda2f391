"""What ``skills_list`` and ``skill_view`` return, in Hermes Agent's shapes (progressive disclosure).

``skills_list`` gives each skill's name, a description cut short and its source: a catalogue that stays near
100 tokens a skill even at the standard's description limit. ``skill_view`` gives one skill's body and its
other files, or one of those files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ..errors import SkillError
from .catalog import SkillCatalog, SkillEntry
from .document import parse_front_matter
from .files import FILE_LIMIT, linked_files, read_text_file, resolve_inside

__all__ = ["LIST_DESCRIPTION", "list_skills", "required_environment", "view_skill"]

#: The characters of a description ``skills_list`` shows (the whole one is in ``skill_view``).
LIST_DESCRIPTION = 300
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _short(description: str) -> str:
    return description if len(description) <= LIST_DESCRIPTION else description[:LIST_DESCRIPTION - 1] + "…"


def list_skills(catalog: SkillCatalog, category: str | None = None) -> dict[str, Any]:
    """The catalogue: ``{"success", "skills": [{name, description, source, category?}], "categories", "count"}``;
    shadowed skills are listed apart, with the source that wins."""
    offered = [entry for entry in catalog.offered() if not category or entry.category == category]
    skills = [{"name": entry.name, "description": _short(entry.description), "source": entry.origin,
               **({"category": entry.category} if entry.category else {})} for entry in offered]
    result: dict[str, Any] = {
        "success": True, "skills": skills,
        "categories": sorted({entry.category for entry in offered if entry.category}), "count": len(skills),
        "hint": "Use skill_view(name) to read a skill, and skill_view(name, file_path) for one of its files",
    }
    shadowed = [{"name": entry.name, "source": entry.origin, "shadowed_by": entry.shadowed_by}
                for entry in catalog.shadowed]
    if shadowed:
        result["shadowed"] = shadowed
    return result


def required_environment(fields: Mapping[str, Any]) -> list[str]:
    """The environment variables a skill's front matter says it needs (Hermes Agent's three ways of saying it)."""
    names: list[Any] = []
    required = fields.get("required_environment_variables")
    for item in required if isinstance(required, list) else [required] if required else []:
        names.append(item.get("name") or item.get("env_var") if isinstance(item, dict) else item)
    prerequisites = fields.get("prerequisites")
    if isinstance(prerequisites, dict):
        env_vars = prerequisites.get("env_vars")
        names += env_vars if isinstance(env_vars, list) else [env_vars] if env_vars else []
    setup = fields.get("setup")
    secrets = setup.get("collect_secrets") if isinstance(setup, dict) else None
    for item in secrets if isinstance(secrets, list) else [secrets] if isinstance(secrets, dict) else []:
        if isinstance(item, dict):
            names.append(item.get("env_var"))
    return list(dict.fromkeys(str(n).strip() for n in names if n and _ENV_NAME.match(str(n).strip())))


def view_skill(catalog: SkillCatalog, name: str, file_path: str | None = None,
               environ: Mapping[str, str] | None = None, listing: str = "skills_list") -> dict[str, Any]:
    """``skill_view``: the skill's body and ``linked_files``, or with ``file_path`` that file. Raises
    :class:`SkillError` for an unknown skill (naming ``listing``, what lists them all: the model's tool, or a
    command), a path out of its folder, or a file that cannot be read."""
    entry = catalog.get(name or "")
    if entry is None:
        known = ", ".join(e.name for e in catalog.offered()[:20]) or "none"
        raise SkillError(f"no skill {name!r}; skills here: {known} ({listing} lists them all)")
    if not entry.available:
        raise SkillError(f"skill {entry.name!r} is for {', '.join(entry.platforms)}, not this system")
    if file_path:
        return _view_file(entry, file_path)
    document = _read_document(entry)
    if document.get("is_binary"):
        raise SkillError(f"skill {entry.name!r}: {entry.document.name} is not text")
    front = parse_front_matter(document["content"], entry.document)
    fields = front.fields
    environ = os.environ if environ is None else environ
    required = required_environment(fields)
    linked = linked_files(entry.folder, entry.document) if entry.folder else {}
    result: dict[str, Any] = {
        "success": True, "name": entry.name, "description": entry.description or fields.get("description", ""),
        "source": entry.origin, "content": front.body if fields else document["content"],
        "linked_files": linked or None,
        "usage_hint": "To read a linked file, call skill_view(name, file_path) with file_path e.g. "
                      f"{next(iter(next(iter(linked.values()))))!r}" if linked else None,
        "required_environment_variables": required,
        "missing_required_environment_variables": [n for n in required if not environ.get(n)],
    }
    for key in ("license", "compatibility", "allowed-tools", "metadata"):
        if key in fields:
            result[key] = fields[key]
    if document["truncated"]:
        result["truncated"] = True
    if entry.shadowed_by is None and entry.problem:
        result["problem"] = entry.problem
    return result


def _read_document(entry: SkillEntry) -> dict[str, Any]:
    """The skill's ``SKILL.md``: a plugin's may be reached through a symlink inside its folder (its package's
    business); a user's or project's never is, and neither is a plugin's single-file skill."""
    if entry.source == "plugin" and entry.folder is not None:
        return read_text_file(resolve_inside(entry.folder, entry.document.name), FILE_LIMIT)
    return read_text_file(entry.document, FILE_LIMIT)


def _view_file(entry: SkillEntry, file_path: str) -> dict[str, Any]:
    if entry.folder is None:
        raise SkillError(f"skill {entry.name!r} is a single file: it has no other files")
    target = resolve_inside(entry.folder, file_path)
    if not target.exists():
        available = linked_files(entry.folder, entry.document)
        raise SkillError(f"no file {file_path!r} in skill {entry.name!r}; its files: "
                         f"{', '.join(p for group in available.values() for p in group) or 'none'}")
    served = read_text_file(target)
    return {"success": True, "name": entry.name, "file": file_path, **served,
            **({"file_type": target.suffix} if not served.get("is_binary") else {})}
