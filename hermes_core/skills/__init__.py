"""Skills (the Agent Skills standard): a folder with a ``SKILL.md`` an agent reads when it needs the know-how.

Owns the skill folders and their gating (``roots``, ``sources``), the catalogue of one runtime (``catalog``), safe reads
(``document``, ``files``), validation against the standard (``validation``), what the skills tools return
(``view``), the user's own skills (``manage``) and installing skills (``install``). It reads the home, the
project folder and the skills plugins registered; it imports no plugin code, and only ``config`` and ``errors``
of the core (plugins register their manifests' skills through ``plugins.declared_skills``).
"""

from __future__ import annotations

from .catalog import SkillCatalog, SkillEntry
from .roots import skill_roots

__all__ = ["SkillCatalog", "SkillEntry", "skill_roots"]
