"""The tools' availability checks (run by every listing, so they import nothing of the call path)."""

from __future__ import annotations

from .frames import ffmpeg
from .model import VisionUnavailable, unavailable

__all__ = ["video_available", "vision_available"]


def vision_available() -> bool:
    """The ``check_fn`` of vision_analyze: True, or an exception naming the settings to add."""
    why = unavailable()
    if why is not None:
        raise VisionUnavailable(why)
    return True


def video_available() -> bool:
    """The ``check_fn`` of video_analyze: a vision model and ffmpeg."""
    vision_available()
    if ffmpeg() is None:
        raise VisionUnavailable("ffmpeg is not installed: video_analyze takes the video's frames with it "
                                "(apt-get install ffmpeg, brew install ffmpeg)")
    return True
