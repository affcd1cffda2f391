"""Which skill folders a runtime reads: the user's always, the project's only when project plugins are enabled."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..selection import truthy
from .sources import SkillSource

__all__ = ["skill_roots"]


def skill_roots(home: Path, cwd: Path | None = None,
                environ: Mapping[str, str] | None = None) -> list[tuple[Path, SkillSource]]:
    """The skill folders to scan, in precedence order (a later one beats an earlier one on a bare name):
    ``<home>/skills`` always, ``<cwd>/.hermes/skills`` only when ``HERMES_ENABLE_PROJECT_PLUGINS`` is on.

    ``home`` is the Hermes home folder (``$HERMES_HOME``); ``cwd`` defaults to the working directory and
    ``environ`` to ``os.environ``. The Hermes Agent compatibility layer builds ``agent.skill_utils`` on this.
    """
    environ = os.environ if environ is None else environ
    roots: list[tuple[Path, SkillSource]] = [(home / "skills", "user")]
    if truthy(environ.get("HERMES_ENABLE_PROJECT_PLUGINS")):
        roots.append(((cwd or Path.cwd()) / ".hermes" / "skills", "project"))
    return roots
