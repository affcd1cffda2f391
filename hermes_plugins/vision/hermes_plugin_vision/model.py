"""The vision model, in this order: the host's model callback (``Runtime.set_model_callback``), the MCP client's
sampling under ``hermes mcp serve``, then the configured OpenAI-compatible ``auxiliary.vision`` endpoint (the one
browser_vision uses). Hermes runs no model of its own; without any the tools are unavailable, saying which settings
to add."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.errors import LlmEndpointError
from hermes_core.plugin import AuxiliaryModel, auxiliary_model, tool_context

if TYPE_CHECKING:
    from .sources import Loaded

__all__ = ["NO_MODEL", "VisionUnavailable", "ask", "unavailable"]

NO_MODEL = ("no vision model is configured: set auxiliary.vision.base_url (an OpenAI-compatible API), "
            "auxiliary.vision.model and auxiliary.vision.api_key (or OPENAI_API_KEY) in config.yaml")


class VisionUnavailable(Exception):
    """No vision model can be asked; the message names the settings to add."""


def vision_endpoint() -> AuxiliaryModel | str:
    """The configured ``auxiliary.vision`` model, or why there is none."""
    try:
        model = auxiliary_model("vision")
    except LlmEndpointError as exc:
        return str(exc)
    return model or NO_MODEL


def unavailable() -> str | None:
    """Why no vision model could answer a call of this runtime, or None."""
    return tool_context().model_unavailable(vision_endpoint())


def ask(question: str, images: list[Loaded], *, max_tokens: int) -> str:
    """The model's answer to ``question`` about ``images`` (sent as data URLs, in order); raises
    :class:`~hermes_core.errors.NoAnswer` saying why when no model answers."""
    content = [{"type": "text", "text": question},
               *({"type": "image_url", "image_url": {"url": image.data_url}} for image in images)]
    return tool_context().ask_model([{"role": "user", "content": content}], max_tokens=max_tokens,
                                    purpose="vision", endpoint=vision_endpoint()).text
