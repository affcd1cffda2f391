"""The pack's settings: Hermes Agent's ``tts`` section (``provider``, ``speed`` and one block per provider) and
``plugins.entries.tts.settings`` (format, limits)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hermes_core import ConfigError
from hermes_core.plugin import tool_context

PLUGIN_ID = "tts"
FORMATS = ("auto", "ogg", "wav")


class SettingsError(Exception):
    """The configuration cannot be read, or a setting has an invalid value."""


@dataclass(frozen=True)
class TtsSettings:
    """The ``tts`` section as read, and the pack's limits."""

    #: ``tts.provider``; None: espeak-ng when it is installed, else edge when edge-tts is.
    provider: str | None = None
    #: ``tts.speed``: a multiplier of each provider's normal speed (a provider's own ``speed`` wins).
    speed: float = 1.0
    #: ``tts.<provider>`` blocks (``voice``, ``model``, ``base_url``...), as written.
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ``auto`` (Ogg/Opus when ffmpeg is installed, else WAV), ``ogg`` (needs ffmpeg) or ``wav``.
    format: str = "auto"
    #: Longest text spoken by one call, in characters (longer is refused, never cut).
    max_text_chars: int = 100_000
    #: Seconds allowed for each engine call and for the conversion.
    timeout: float = 120.0

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise SettingsError(f"format must be one of {', '.join(FORMATS)}, not {self.format!r}")
        if self.speed <= 0 or self.max_text_chars <= 0 or self.timeout <= 0:
            raise SettingsError("speed, max_text_chars and timeout must be positive numbers")

    def section(self, provider: str) -> dict[str, Any]:
        return self.sections.get(provider, {})

    def speed_of(self, provider: str) -> float:
        return float(self.section(provider).get("speed") or self.speed)


def load_settings() -> TtsSettings:
    """Read the settings from the calling runtime's config.yaml (on every call, so edits apply at once)."""
    try:
        context = tool_context()
        raw, tts = context.settings, context.section("tts")
    except ConfigError as exc:
        raise SettingsError(str(exc)) from None
    defaults = TtsSettings()
    provider = str(tts.get("provider") or "").strip().lower() or None
    try:
        return TtsSettings(
            provider="espeak" if provider == "espeak-ng" else provider,
            speed=float(tts.get("speed") or 1.0),
            sections={name: dict(value) for name, value in tts.items() if isinstance(value, dict)},
            format=str(raw.get("format", defaults.format)).strip().lower(),
            max_text_chars=int(raw.get("max_text_chars", defaults.max_text_chars)),
            timeout=float(raw.get("timeout", defaults.timeout)),
        )
    except (SettingsError, TypeError, ValueError) as exc:
        raise SettingsError(f"invalid tts settings in config.yaml: {exc}") from None
