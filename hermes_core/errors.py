"""The one base class of the errors a user can fix (the CLI prints them as one line, no traceback)."""

from __future__ import annotations

__all__ = ["ConfigError", "HermesError", "SkillError"]


class HermesError(Exception):
    """A problem with the user's configuration, input or environment; its message says what to change."""


class ConfigError(HermesError):
    """config.yaml cannot be read, parsed, validated or written."""


class SkillError(HermesError):
    """A skill cannot be found, read, written or installed: a bad name or path, an invalid ``SKILL.md``."""
