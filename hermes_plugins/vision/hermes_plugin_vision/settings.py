"""The pack's settings: ``plugins.entries.vision.settings``, ``auxiliary.vision.download_timeout`` (Hermes Agent's)
and ``web.allow_private_networks``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hermes_core import ConfigError
from hermes_core.plugin import tool_context

PLUGIN_ID = "vision"


class SettingsError(Exception):
    """The configuration cannot be read, or a setting has an invalid value."""


@dataclass(frozen=True)
class VisionSettings:
    """Limits on what the tools read; each field but the first comes from ``plugins.entries.vision.settings``."""

    #: ``web.allow_private_networks``: let URLs reach loopback and private addresses (never link-local or metadata).
    allow_private_networks: bool = False
    #: Largest image read or fetched, in bytes.
    max_bytes: int = 20_000_000
    #: Largest image, in pixels (width × height), read from its header before anything decodes it.
    max_pixels: int = 40_000_000
    #: Largest video read or fetched, in bytes.
    max_video_bytes: int = 50_000_000
    #: Frames video_analyze takes, evenly spaced.
    video_frames: int = 8
    #: Widest frame sent, in pixels (ffmpeg scales larger ones down).
    frame_width: int = 1024
    #: Seconds allowed for fetching one image or video (``auxiliary.vision.download_timeout``).
    download_timeout: float = 30.0
    #: Seconds allowed for ffmpeg to take the frames of one video.
    ffmpeg_timeout: float = 120.0

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_pixels", "max_video_bytes", "video_frames", "frame_width"):
            if getattr(self, name) <= 0:
                raise SettingsError(f"{name} must be a positive number, not {getattr(self, name)}")
        for name in ("download_timeout", "ffmpeg_timeout"):
            if getattr(self, name) <= 0:
                raise SettingsError(f"{name} must be a positive number of seconds, not {getattr(self, name)}")


def load_settings() -> VisionSettings:
    """Read the settings from the calling runtime's config.yaml (on every call, so edits apply at once)."""
    try:
        context = tool_context()
        raw, web = context.settings, context.section("web")
        auxiliary = context.section("auxiliary").get("vision")
    except ConfigError as exc:
        raise SettingsError(str(exc)) from None
    defaults = VisionSettings()
    timeout: Any = auxiliary.get("download_timeout") if isinstance(auxiliary, dict) else None
    try:
        return VisionSettings(
            allow_private_networks=bool(web.get("allow_private_networks")),
            max_bytes=int(raw.get("max_bytes", defaults.max_bytes)),
            max_pixels=int(raw.get("max_pixels", defaults.max_pixels)),
            max_video_bytes=int(raw.get("max_video_bytes", defaults.max_video_bytes)),
            video_frames=int(raw.get("video_frames", defaults.video_frames)),
            frame_width=int(raw.get("frame_width", defaults.frame_width)),
            download_timeout=float(raw.get("download_timeout", timeout or defaults.download_timeout)),
            ffmpeg_timeout=float(raw.get("ffmpeg_timeout", defaults.ffmpeg_timeout)),
        )
    except (SettingsError, TypeError, ValueError) as exc:
        raise SettingsError(f"invalid plugins.entries.{PLUGIN_ID}.settings in config.yaml: {exc}") from None
