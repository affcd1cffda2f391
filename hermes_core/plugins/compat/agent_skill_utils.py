"""Shim of Hermes Agent's ``agent.skill_utils``: where the skills of the runtime running the plugin live."""

from __future__ import annotations

from pathlib import Path

from . import host_runtime

__all__ = ["get_all_skills_dirs", "get_skill_search_roots", "get_skills_dir"]


def skill_roots() -> list[tuple[str, Path]]:
    """``(tier, folder)`` in precedence order: the runtime's skill folders (the home's ``skills/``, Hermes Agent's
    ``local`` tier, and the project's only when project plugins are enabled), then the folder of each skill a
    plugin registered (a skill folder, or the folder holding a skill file)."""
    runtime = host_runtime()
    roots = [("local" if source == "user" else source, folder) for folder, source in runtime.skill_roots()]
    for skill in runtime.skills.values():
        folder = skill.path if skill.path.is_dir() else skill.path.parent
        if all(folder != root for _tier, root in roots):
            roots.append(("plugin", folder))
    return roots


def get_skills_dir() -> Path:
    return skill_roots()[0][1]


def get_all_skills_dirs() -> list[Path]:
    return [root for _tier, root in skill_roots()]


def get_skill_search_roots() -> list[tuple[str, Path]]:
    return skill_roots()
