"""An OpenAI-compatible images endpoint (``image_gen.provider: openai``): ``/images/generations``, or ``/images/edits``
with the source images. Hermes Agent's tiers ``gpt-image-2-low|medium|high`` ask ``gpt-image-2`` at that quality;
any other model name (``image_gen.openai.model``) is sent as it is, for other compatible servers."""

from __future__ import annotations

import base64
import binascii
from typing import Any

import httpx

from .settings import ImageSettings

__all__ = ["DEFAULT_MODEL", "SIZES", "TIERS", "OpenAIImageError", "generate"]

TIERS = {"gpt-image-2-low": "low", "gpt-image-2-medium": "medium", "gpt-image-2-high": "high"}
DEFAULT_MODEL = "gpt-image-2-medium"
SIZES = {"landscape": "1536x1024", "square": "1024x1024", "portrait": "1024x1536"}


class OpenAIImageError(Exception):
    """The endpoint failed or answered without a picture; the message says why (for the model)."""


def generate(prompt: str, aspect_ratio: str, sources: list[tuple[bytes, str]],
             settings: ImageSettings) -> tuple[bytes | str, str, dict[str, Any]]:
    """Ask the endpoint; the picture (bytes, or the URL it links to), the model asked and extra answer fields."""
    if not settings.openai_api_key:
        raise OpenAIImageError("no key for the images endpoint: set OPENAI_API_KEY or image_gen.openai.api_key")
    chosen = settings.openai_model or (settings.model if settings.model in TIERS else None) or DEFAULT_MODEL
    fields: dict[str, Any] = {"model": "gpt-image-2" if chosen in TIERS else chosen, "prompt": prompt,
                              "size": SIZES[aspect_ratio], "n": 1}
    if chosen in TIERS:
        fields["quality"] = TIERS[chosen]
    headers = {"Authorization": f"Bearer {settings.openai_api_key}"}
    url = f"{settings.openai_base_url}/images/{'edits' if sources else 'generations'}"
    try:
        with httpx.Client(timeout=settings.timeout, follow_redirects=False) as client:  # the user's endpoint
            if sources:
                files = [("image[]", (name, data)) for data, name in sources]
                response = client.post(url, headers=headers, data={k: str(v) for k, v in fields.items()},
                                       files=files)
            else:
                response = client.post(url, headers=headers, json=fields)
    except httpx.HTTPError as exc:
        raise OpenAIImageError(f"{url} failed: {exc or type(exc).__name__}") from None
    if response.is_error:
        raise OpenAIImageError(f"{url} answered HTTP {response.status_code}: {_message(response)}")
    try:
        first = response.json()["data"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        raise OpenAIImageError(f"{url} answered without image data") from None
    extra = {"size": fields["size"], **({"quality": fields["quality"]} if "quality" in fields else {})}
    if isinstance(first.get("revised_prompt"), str):
        extra["revised_prompt"] = first["revised_prompt"]
    if isinstance(first.get("b64_json"), str):
        try:
            return base64.b64decode(first["b64_json"], validate=True), chosen, extra
        except (binascii.Error, ValueError):
            raise OpenAIImageError(f"{url} answered with base64 that is not valid") from None
    if isinstance(first.get("url"), str):
        return first["url"], chosen, extra
    raise OpenAIImageError(f"{url} answered with neither b64_json nor a URL")


def _message(response: httpx.Response) -> str:
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return response.text[:300] or response.reason_phrase
    return str(error.get("message") if isinstance(error, dict) else error)[:300]
