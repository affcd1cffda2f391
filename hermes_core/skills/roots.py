"""Which skill folders a runtime reads: the user's always, the project's only when project plugins are enabled."""

from __future__ import annotations

from pathlib import Path

from .sources import SkillSource

__all__ = ["skill_roots"]


def skill_roots(home: Path, project: Path | None = None) -> list[tuple[Path, SkillSource]]:
    """The skill folders to scan, in precedence order (a later one beats an earlier one on a bare name):
    ``<home>/skills`` always, and ``<project>/.hermes/skills`` when ``project`` is given, which a caller does only
    when ``HERMES_ENABLE_PROJECT_PLUGINS`` is on (``Runtime.skill_roots()`` decides it so)."""
    roots: list[tuple[Path, SkillSource]] = [(home / "skills", "user")]
    if project is not None:
        roots.append((project / ".hermes" / "skills", "project"))
    return roots
