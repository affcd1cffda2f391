"""The vision model: the configured OpenAI-compatible ``auxiliary.vision`` endpoint (the one browser_vision uses).

Hermes runs no model of its own; without one configured the tools are unavailable, saying which settings to add.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.errors import LlmEndpointError
from hermes_core.plugin import AuxiliaryModel, auxiliary_model

if TYPE_CHECKING:
    from .sources import Loaded

__all__ = ["NO_MODEL", "VisionUnavailable", "ask", "vision_model"]

NO_MODEL = ("no vision model is configured: set auxiliary.vision.base_url (an OpenAI-compatible API), "
            "auxiliary.vision.model and auxiliary.vision.api_key (or OPENAI_API_KEY) in config.yaml")


class VisionUnavailable(Exception):
    """No vision model can be asked; the message names the settings to add."""


def vision_model() -> AuxiliaryModel:
    """The model to ask, or :class:`VisionUnavailable` saying why there is none."""
    try:
        model = auxiliary_model("vision")
    except LlmEndpointError as exc:
        raise VisionUnavailable(str(exc)) from None
    if model is None:
        raise VisionUnavailable(NO_MODEL)
    return model


def ask(question: str, images: list[Loaded], *, max_tokens: int) -> str:
    """The model's answer to ``question`` about ``images`` (sent as data URLs, in order)."""
    model = vision_model()
    content = [{"type": "text", "text": question},
               *({"type": "image_url", "image_url": {"url": image.data_url}} for image in images)]
    return model.complete([{"role": "user", "content": content}], max_tokens=max_tokens)
