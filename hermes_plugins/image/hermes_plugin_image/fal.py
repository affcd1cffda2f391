"""FAL (Hermes Agent's default image backend) through ``fal-client``: Hermes Agent's model catalog (``image_gen.model``,
default FLUX 2 Klein 9B), each model's way of saying the aspect ratio, and its edit endpoint when it has one.

The key is ``FAL_KEY``. The request waits in FAL's queue at most the pack's ``timeout``; the picture FAL links to is
downloaded through the web pack's guard.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from .settings import ImageSettings

__all__ = ["DEFAULT_MODEL", "MODELS", "FalError", "FalModel", "fal_unavailable", "generate", "model_of"]


@dataclass(frozen=True)
class FalModel:
    """How one FAL model is asked: its size style and sizes per aspect, defaults, accepted keys, edit endpoint."""

    display: str
    #: ``image_size`` (a preset or a literal size) or ``aspect_ratio``.
    size_key: str
    sizes: dict[str, str]
    defaults: dict[str, Any] = field(default_factory=dict)
    edit_endpoint: str | None = None
    max_reference_images: int = 1


_PRESETS = {"landscape": "landscape_16_9", "square": "square_hd", "portrait": "portrait_16_9"}
_RATIOS = {"landscape": "16:9", "square": "1:1", "portrait": "9:16"}
_PNG = {"output_format": "png"}

#: Hermes Agent 0.19's catalog (the upscaler it chains for FLUX 2 Pro is not run here).
MODELS: dict[str, FalModel] = {
    "fal-ai/flux-2/klein/9b": FalModel("FLUX 2 Klein 9B", "image_size", _PRESETS,
                                       {"num_inference_steps": 4, **_PNG, "enable_safety_checker": False},
                                       "fal-ai/flux-2/klein/9b/edit", 9),
    "fal-ai/flux-2-pro": FalModel("FLUX 2 Pro", "image_size", _PRESETS,
                                  {"num_inference_steps": 50, "guidance_scale": 4.5, "num_images": 1, **_PNG,
                                   "enable_safety_checker": False, "safety_tolerance": "5", "sync_mode": True},
                                  "fal-ai/flux-2-pro/edit"),
    "fal-ai/z-image/turbo": FalModel("Z-Image Turbo", "image_size", _PRESETS,
                                     {"num_inference_steps": 8, "num_images": 1, **_PNG,
                                      "enable_safety_checker": False, "enable_prompt_expansion": False}),
    "fal-ai/nano-banana-pro": FalModel("Nano Banana Pro", "aspect_ratio", _RATIOS,
                                       {"num_images": 1, **_PNG, "safety_tolerance": "5", "resolution": "1K"},
                                       "fal-ai/nano-banana-pro/edit"),
    "fal-ai/gpt-image-1.5": FalModel("GPT Image 1.5", "image_size",
                                     {"landscape": "1536x1024", "square": "1024x1024", "portrait": "1024x1536"},
                                     {"quality": "medium", "num_images": 1, **_PNG}, "fal-ai/gpt-image-1.5/edit"),
    "fal-ai/gpt-image-2": FalModel("GPT Image 2", "image_size",
                                   {"landscape": "landscape_4_3", "square": "square_hd", "portrait": "portrait_4_3"},
                                   {"quality": "medium", "num_images": 1, **_PNG}, "openai/gpt-image-2/edit"),
    "fal-ai/ideogram/v3": FalModel("Ideogram V3", "image_size", _PRESETS,
                                   {"rendering_speed": "BALANCED", "expand_prompt": True, "style": "AUTO"},
                                   "fal-ai/ideogram/v3/edit"),
    "fal-ai/recraft/v4/pro/text-to-image": FalModel("Recraft V4 Pro", "image_size", _PRESETS,
                                                    {"enable_safety_checker": False}),
    "fal-ai/qwen-image": FalModel("Qwen Image", "image_size", _PRESETS,
                                  {"num_inference_steps": 30, "guidance_scale": 2.5, "num_images": 1, **_PNG,
                                   "acceleration": "regular"}, "fal-ai/qwen-image-2/pro/edit"),
    "fal-ai/krea/v2/medium/text-to-image": FalModel("Krea 2 Medium", "aspect_ratio", _RATIOS,
                                                    {"creativity": "medium"}),
    "fal-ai/krea/v2/large/text-to-image": FalModel("Krea 2 Large", "aspect_ratio", _RATIOS, {"creativity": "medium"}),
}
DEFAULT_MODEL = "fal-ai/flux-2/klein/9b"


class FalError(Exception):
    """The generation failed; the message says why (for the model)."""


def fal_unavailable() -> str | None:
    """Why FAL cannot be used now (no key, no ``fal-client``), or None."""
    if not os.environ.get("FAL_KEY"):
        return "FAL_KEY is not set: get a key at https://fal.ai and set FAL_KEY, or set image_gen.provider: openai"
    import importlib.util

    if importlib.util.find_spec("fal_client") is None:
        return "fal-client is not installed: pip install fal-client (a dependency of hermes-tools-image)"
    return None


def model_of(settings: ImageSettings) -> tuple[str, FalModel]:
    """The configured model (``image_gen.model``; ``FAL_IMAGE_MODEL`` as in Hermes Agent), or the default; a model
    outside the catalog is asked with an ``image_size`` preset."""
    model_id = settings.model or os.environ.get("FAL_IMAGE_MODEL", "").strip() or DEFAULT_MODEL
    return model_id, MODELS.get(model_id) or FalModel(model_id, "image_size", _PRESETS, dict(_PNG))


def generate(prompt: str, aspect_ratio: str, sources: list[str], settings: ImageSettings) -> tuple[str, str, str]:
    """Ask FAL; the URL of the first picture, the model id and the modality (``text`` or ``image``)."""
    why = fal_unavailable()
    if why is not None:
        raise FalError(why)
    import fal_client

    model_id, model = model_of(settings)
    arguments: dict[str, Any] = {**model.defaults, "prompt": prompt}
    if sources:
        if model.edit_endpoint is None:
            raise FalError(f"model {model.display} ({model_id}) cannot edit images: omit image_url for "
                           "text-to-image, or configure an edit-capable model in image_gen.model")
        endpoint, arguments["image_urls"] = model.edit_endpoint, sources[:model.max_reference_images]
    else:
        endpoint, arguments[model.size_key] = model_id, model.sizes[aspect_ratio]
    client = fal_client.SyncClient(key=os.environ["FAL_KEY"], default_timeout=settings.timeout)
    try:
        result = client.subscribe(endpoint, arguments=arguments, client_timeout=settings.timeout)
    except Exception as exc:  # fal-client's own errors carry FAL's message
        raise FalError(f"FAL ({endpoint}) failed: {exc}") from None
    images = result.get("images") if isinstance(result, dict) else None
    first = images[0] if isinstance(images, list) and images else None
    if not isinstance(first, dict) or not isinstance(first.get("url"), str):
        raise FalError(f"FAL ({endpoint}) answered without an image URL")
    return first["url"], model_id, "image" if sources else "text"
