"""Where images and videos come from: a file of the workspace or the results folder, an http(s) URL fetched through
the web pack's guard (every redirect hop checked before connecting), or a ``data:`` URL; each within its byte cap,
an image also within the pixel cap, read from its header before anything decodes it."""

from __future__ import annotations

import base64
import binascii
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from hermes_plugin_web.fetch import Accepted, FetchError, fetch
from hermes_plugin_web.settings import WebSettings

from hermes_core.plugin import MediaInfo, media_info, tool_context

from .settings import VisionSettings

__all__ = ["Loaded", "SourceError", "check_image", "load_image", "load_video"]

#: The image types vision models read (what OpenAI, Anthropic and Gemini all accept).
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
VIDEO_SUFFIXES = frozenset({".mp4", ".webm", ".mov", ".avi", ".mkv", ".mpeg", ".mpg", ".m4v"})

IMAGES = Accepted(lambda media_type: media_type.startswith("image/") or media_type == "application/octet-stream",
                  "image/png,image/jpeg,image/gif,image/webp;q=0.9,*/*;q=0.1", "{url} is {media_type}, not an image")
VIDEOS = Accepted(lambda media_type: media_type.startswith("video/") or media_type == "application/octet-stream",
                  "video/*;q=0.9,*/*;q=0.1", "{url} is {media_type}, not a video")


class SourceError(Exception):
    """The image or video cannot be used; the message says why (for the model)."""


@dataclass(frozen=True)
class Loaded:
    """The bytes of an image or a video, and where they came from."""

    data: bytes
    source: str
    #: An image's type and size in pixels (None for a video).
    info: MediaInfo | None = None

    @property
    def data_url(self) -> str:
        assert self.info is not None
        return f"data:{self.info.mime_type};base64,{base64.b64encode(self.data).decode('ascii')}"


def load_image(reference: str, settings: VisionSettings) -> Loaded:
    """The image ``reference`` names, checked: one of the types vision models read, within the byte and pixel caps."""
    return check_image(*_load(reference, settings, settings.max_bytes, IMAGES), settings)


def check_image(data: bytes, source: str, settings: VisionSettings) -> Loaded:
    """``data`` as an image, if it is one of the types vision models read within the byte and pixel caps (its size
    read from its header: nothing is decoded)."""
    if len(data) > settings.max_bytes:
        raise SourceError(f"{source} has {len(data):,} bytes, more than the {settings.max_bytes:,} byte limit")
    info = media_info(data)
    if info is None or info.kind != "image":
        raise SourceError(f"{source} is not an image Hermes can read (PNG, JPEG, GIF or WebP)")
    if info.mime_type not in IMAGE_TYPES:
        raise SourceError(f"{source} is {info.mime_type}; vision models read PNG, JPEG, GIF and WebP: convert it first")
    if info.width is None or info.height is None:
        raise SourceError(f"{source}: cannot read the image's size from its header, so it is not opened")
    if info.width * info.height > settings.max_pixels:
        raise SourceError(f"{source} is {info.width} × {info.height} pixels, more than the {settings.max_pixels:,} "
                          "pixel limit (plugins.entries.vision.settings.max_pixels); it was not decoded")
    return Loaded(data, source, info)


def load_video(reference: str, settings: VisionSettings) -> Loaded:
    """The video ``reference`` names, within the byte cap (ffmpeg judges what it holds)."""
    data, source = _load(reference, settings, settings.max_video_bytes, VIDEOS)
    return Loaded(data, source)


def _load(reference: str, settings: VisionSettings, limit: int, accepted: Accepted) -> tuple[bytes, str]:
    reference = reference.strip()
    if not reference:
        raise SourceError("no image or video was named: give a file path, an http(s) URL or a data: URL")
    scheme = reference.split(":", 1)[0].lower() if ":" in reference else ""
    if scheme in ("http", "https"):
        web = WebSettings(allow_private_networks=settings.allow_private_networks, timeout=settings.download_timeout,
                          max_bytes=limit)
        try:
            page = fetch(reference, web, accepted=accepted)
        except FetchError as exc:
            raise SourceError(str(exc)) from None
        return page.body, page.url
    if scheme == "data":
        return _data_url(reference, limit), "the data: URL"
    if scheme == "file":
        reference = reference.removeprefix("file://")
    elif len(scheme) > 1:  # not a Windows drive letter
        raise SourceError(f"refusing {reference[:100]!r}: {scheme}: URLs are not allowed, only http(s), data: and "
                          "file paths")
    return _read_file(reference, limit), reference


def _data_url(reference: str, limit: int) -> bytes:
    header, comma, payload = reference.partition(",")
    if not comma or not header.endswith(";base64"):
        raise SourceError("a data: URL must be base64 (data:image/png;base64,...)")
    if len(payload) * 3 // 4 > limit + 2:
        raise SourceError(f"the data: URL holds about {len(payload) * 3 // 4:,} bytes, more than the {limit:,} byte "
                          "limit")
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise SourceError("the data: URL's base64 is not valid") from None


def _read_file(reference: str, limit: int) -> bytes:
    """A file of the workspace or the results folder (where links lead counts), a regular file within ``limit``."""
    context = tool_context()
    path = Path(os.path.expanduser(reference))
    real = Path(os.path.realpath(context.workspace / path))
    roots = [Path(os.path.realpath(root)) for root in (context.workspace, context.home.results_dir)]
    if not any(real == root or real.is_relative_to(root) for root in roots):
        raise SourceError(f"refusing {reference!r}: files are read from the workspace ({context.workspace}) or the "
                          f"results folder ({context.home.results_dir}) only")
    try:
        status = os.stat(real)
        if not stat.S_ISREG(status.st_mode):
            raise SourceError(f"{reference} is not a regular file")
        if status.st_size > limit:
            raise SourceError(f"{reference} has {status.st_size:,} bytes, more than the {limit:,} byte limit")
        with open(real, "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise SourceError(f"{reference}: no such file") from None
    except OSError as exc:
        raise SourceError(f"cannot read {reference}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise SourceError(f"{reference} has more than the {limit:,} byte limit")
    return data
