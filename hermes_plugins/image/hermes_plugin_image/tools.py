"""``image_generate`` with Hermes Agent 0.19's arguments and answer (``{"success", "image", "model", "prompt",
"aspect_ratio", "modality", "provider"}``; on failure ``success: false`` with ``error`` and ``error_type``). The
picture is saved in the results folder (``image`` is its path) and returned as media beside the answer."""

from __future__ import annotations

import json
from typing import Any

from hermes_plugin_vision.settings import VisionSettings
from hermes_plugin_vision.sources import Loaded, SourceError, check_image, load_image

from hermes_core.plugin import Media, MediaError, ToolResult, save_media

from . import fal, openai_images
from .settings import ImageSettings, SettingsError, load_settings

__all__ = ["ASPECT_RATIOS", "image_generate"]

ASPECT_RATIOS = ("landscape", "square", "portrait")
_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


class _Failed(Exception):
    def __init__(self, message: str, error_type: str) -> None:
        super().__init__(message)
        self.error_type = error_type


def image_generate(args: dict[str, Any], **kwargs: Any) -> str | ToolResult:
    prompt = str(args.get("prompt") or "").strip()
    aspect = str(args.get("aspect_ratio") or "landscape").strip().lower()
    aspect = aspect if aspect in ASPECT_RATIOS else "landscape"  # forgiving, as Hermes Agent is
    answer: dict[str, Any] = {"model": "", "prompt": prompt, "aspect_ratio": aspect, "provider": ""}
    try:
        if not prompt:
            raise _Failed("Prompt is required and must be a non-empty string", "invalid_argument")
        settings = _settings()
        answer["provider"] = settings.provider
        references = [str(ref).strip() for ref in (args.get("image_url"), *(args.get("reference_image_urls") or ()))
                      if isinstance(ref, str) and ref.strip()]
        picture, answer["model"], modality, extra = _draw(prompt, aspect, references, settings)
        image = _image(picture, settings)
        saved = save_media(Media.from_bytes(image.data))
    except _Failed as exc:
        return json.dumps({"success": False, "image": None, "error": str(exc), "error_type": exc.error_type,
                           **answer}, ensure_ascii=False)
    except MediaError as exc:
        return json.dumps({"success": False, "image": None, "error": str(exc), "error_type": "io_error", **answer},
                          ensure_ascii=False)
    return ToolResult(json.dumps({"success": True, "image": str(saved.path), **answer, "modality": modality, **extra},
                                 ensure_ascii=False), saved)


def _settings() -> ImageSettings:
    try:
        return load_settings()
    except SettingsError as exc:
        raise _Failed(str(exc), "configuration") from None


def _draw(prompt: str, aspect: str, references: list[str],
          settings: ImageSettings) -> tuple[bytes | str, str, str, dict[str, Any]]:
    """The picture (bytes or a URL to fetch), the model, the modality and the provider's extra answer fields."""
    try:
        if settings.provider == "fal":
            # FAL fetches http(s) sources itself; a file or data: URL goes as a data URL
            sources = [ref if ref.lower().startswith(("http://", "https://")) else _source(ref, settings).data_url
                       for ref in references]
            url, model, modality = fal.generate(prompt, aspect, sources, settings)
            return url, model, modality, {}
        loaded = [_source(ref, settings) for ref in references[:16]]
        files = [(image.data, f"image{index}.{_EXTENSIONS[image.info.mime_type]}")
                 for index, image in enumerate(loaded, 1) if image.info is not None]
        picture, model, extra = openai_images.generate(prompt, aspect, files, settings)
        return picture, model, "image" if files else "text", extra
    except (fal.FalError, openai_images.OpenAIImageError) as exc:
        raise _Failed(str(exc), "api_error") from None


def _source(reference: str, settings: ImageSettings) -> Loaded:
    try:
        return load_image(reference, _fetching(settings))
    except SourceError as exc:
        raise _Failed(f"Could not load source image {reference[:200]!r}: {exc}", "io_error") from None


def _image(picture: bytes | str, settings: ImageSettings) -> Loaded:
    """The generated picture, checked like any image: fetched through the guard when the provider linked to it."""
    try:
        if isinstance(picture, str):
            return load_image(picture, _fetching(settings))
        return check_image(picture, "the picture", _fetching(settings))
    except SourceError as exc:
        raise _Failed(f"The provider's picture cannot be used: {exc}", "invalid_response") from None


def _fetching(settings: ImageSettings) -> VisionSettings:
    return VisionSettings(allow_private_networks=settings.allow_private_networks, max_bytes=settings.max_bytes,
                          download_timeout=min(settings.timeout, 60.0))
