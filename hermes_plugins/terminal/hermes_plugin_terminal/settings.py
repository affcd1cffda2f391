"""The terminal plugin's settings: ``plugins.entries.terminal.settings`` in config.yaml."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hermes_core.plugin import tool_context

__all__ = ["SettingsError", "TerminalSettings", "load_settings"]

PLUGIN_ID = "terminal"


class SettingsError(ValueError):
    """The settings in config.yaml are invalid."""


class TerminalSettings(BaseModel):
    """Upper bounds for what a tool call may ask for, and where new tasks start."""

    model_config = ConfigDict(extra="forbid")

    max_timeout: float = Field(3600.0, gt=0, description="Longest `timeout` (seconds) a call may use.")
    max_output_chars: int = Field(100_000, gt=0, description="Largest `max_output_chars` a call may use.")
    workdir: str | None = Field(None, description="Working directory of a new task (default: the workspace).")
    input_timeout: float = Field(10.0, gt=0, description="Longest wait (seconds) for a background process to take "
                                                         "what `process` write or submit sends it.")


def load_settings() -> TerminalSettings:
    """Read and validate the settings; raises :class:`SettingsError` with a message naming the key."""
    try:
        return TerminalSettings.model_validate(tool_context().settings)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, error['loc']))}: {error['msg']}" for error in exc.errors()
        )
        raise SettingsError(f"invalid config.yaml plugins.entries.{PLUGIN_ID}.settings: {problems}") from None
