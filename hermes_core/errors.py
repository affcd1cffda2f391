"""The one base class of the errors a user can fix (the CLI prints them as one line, no traceback)."""

from __future__ import annotations

__all__ = ["ConfigError", "FileLockTimeout", "HermesError", "UnsafeFileError"]


class HermesError(Exception):
    """A problem with the user's configuration, input or environment; its message says what to change."""


class ConfigError(HermesError):
    """config.yaml cannot be read, parsed, validated or written."""


class UnsafeFileError(HermesError, OSError):
    """A file Hermes did not write is not one it will read: not a regular file, a symlink, or too large."""


class FileLockTimeout(HermesError, TimeoutError):
    """Another edit of the same file held its lock for longer than the wait allowed."""
