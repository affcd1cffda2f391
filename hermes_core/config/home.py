"""``HermesHome``: the folder a runtime reads and writes — config, plugins, cache, results and logs."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import HermesConfig

__all__ = ["HermesHome", "hermes_home"]


def hermes_home() -> Path:
    """``$HERMES_HOME``, or ``~/.hermes`` when it is unset or empty (read only where a runtime is created)."""
    return Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()


@dataclass(frozen=True)
class HermesHome:
    """One home folder; everything below the runtime gets its paths and its config from here."""

    #: The folder itself (it need not exist yet: it is created on the first write).
    root: Path

    @classmethod
    def from_env(cls) -> HermesHome:
        """The home named by ``HERMES_HOME`` (default ``~/.hermes``)."""
        return cls(hermes_home())

    @property
    def config_file(self) -> Path:
        return self.root / "config.yaml"

    @property
    def plugins_dir(self) -> Path:
        return self.root / "plugins"

    @property
    def skills_dir(self) -> Path:
        """The user's own skills (``<name>/SKILL.md``, in category folders or not)."""
        return self.root / "skills"

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

    @property
    def results_dir(self) -> Path:
        return self.root / "results"

    @property
    def checkpoints_dir(self) -> Path:
        return self.root / "checkpoints"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def mcp_tokens_dir(self) -> Path:
        """OAuth tokens of MCP servers (Hermes Agent's layout; files 0600, never in config.yaml)."""
        return self.root / "mcp-tokens"

    def config(self) -> HermesConfig:
        """``config.yaml`` validated (defaults when it is missing; re-read when it changes)."""
        from .model import load_config

        return load_config(self.config_file)

    def config_data(self) -> dict[str, Any]:
        """``config.yaml`` validated, as plain JSON data with the defaults filled in; validated once per
        content (the result is kept in ``cache_dir``), so reading it costs no pydantic model."""
        from .data import config_data

        return config_data(self.config_file, self.cache_dir)

    def edit_config(self, mutate: Callable[[Any], None]) -> HermesConfig:
        """Change ``config.yaml`` in place, keeping the user's comments and order."""
        from .model import edit_config

        return edit_config(mutate, self.config_file)
