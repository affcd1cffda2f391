"""The pack's settings: Hermes Agent's ``image_gen`` section (``provider``, ``model``, ``openai: {model, base_url,
api_key}``), ``plugins.entries.image.settings`` (limits) and ``web.allow_private_networks``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from hermes_core import ConfigError
from hermes_core.plugin import tool_context

PLUGIN_ID = "image"
PROVIDERS = ("fal", "openai")
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"


class SettingsError(Exception):
    """The configuration cannot be read, or a setting has an invalid value."""


@dataclass(frozen=True)
class ImageSettings:
    """Which backend and model draw the picture, and the limits on the call."""

    #: ``image_gen.provider``: ``fal`` (unset: Hermes Agent's default) or ``openai`` (any OpenAI-compatible endpoint).
    provider: str = "fal"
    #: ``image_gen.model``: the FAL model (or an OpenAI tier, ``gpt-image-2-medium``...).
    model: str | None = None
    #: ``image_gen.openai.model``: the model the OpenAI-compatible endpoint is asked for (its tier ids included).
    openai_model: str | None = None
    #: ``image_gen.openai.base_url``: the endpoint (else ``OPENAI_BASE_URL``, else OpenAI's).
    openai_base_url: str = DEFAULT_OPENAI_BASE_URL
    #: ``image_gen.openai.api_key`` (else ``OPENAI_API_KEY``).
    openai_api_key: str = ""
    #: ``web.allow_private_networks``: let image URLs (sources, and the pictures a provider links to) reach loopback
    #: and private addresses.
    allow_private_networks: bool = False
    #: Seconds allowed for one generation, waiting in the provider's queue included.
    timeout: float = 300.0
    #: Largest picture downloaded from a provider, in bytes.
    max_bytes: int = 25_000_000

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise SettingsError(f"image_gen.provider must be one of {', '.join(PROVIDERS)}, not {self.provider!r}")
        if self.timeout <= 0:
            raise SettingsError(f"timeout must be a positive number of seconds, not {self.timeout}")
        if self.max_bytes <= 0:
            raise SettingsError(f"max_bytes must be a positive number of bytes, not {self.max_bytes}")


def load_settings() -> ImageSettings:
    """Read the settings from the calling runtime's config.yaml (on every call, so edits apply at once)."""
    try:
        context = tool_context()
        raw, web, section = context.settings, context.section("web"), context.section("image_gen")
    except ConfigError as exc:
        raise SettingsError(str(exc)) from None
    openai: Any = section.get("openai") if isinstance(section.get("openai"), dict) else {}
    defaults = ImageSettings()
    try:
        return ImageSettings(
            provider=str(section.get("provider") or "fal").strip().lower(),
            model=_text(section.get("model")),
            openai_model=_text(os.environ.get("OPENAI_IMAGE_MODEL")) or _text(openai.get("model")),
            openai_base_url=(_text(openai.get("base_url")) or _text(os.environ.get("OPENAI_BASE_URL"))
                             or DEFAULT_OPENAI_BASE_URL).rstrip("/"),
            openai_api_key=_text(openai.get("api_key")) or os.environ.get("OPENAI_API_KEY", ""),
            allow_private_networks=bool(web.get("allow_private_networks")),
            timeout=float(raw.get("timeout", defaults.timeout)),
            max_bytes=int(raw.get("max_bytes", defaults.max_bytes)),
        )
    except (SettingsError, TypeError, ValueError) as exc:
        raise SettingsError(f"invalid image settings in config.yaml: {exc}") from None


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None
