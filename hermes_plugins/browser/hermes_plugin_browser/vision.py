"""The optional vision model: an OpenAI-compatible endpoint set in config.yaml (Hermes Agent's
``auxiliary.vision``: ``base_url``, ``model``, ``api_key``, ``timeout``)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import urllib.request
from dataclasses import dataclass
from typing import Any

__all__ = ["VisionModel", "answer_question", "vision_model"]


@dataclass(frozen=True)
class VisionModel:
    base_url: str
    model: str
    api_key: str
    timeout: float


def vision_model(auxiliary: dict[str, Any]) -> VisionModel | None:
    """The configured vision model, or None when ``auxiliary.vision`` names no endpoint and model."""
    section = auxiliary.get("vision")
    if not isinstance(section, dict):
        return None
    base_url, model = str(section.get("base_url") or ""), str(section.get("model") or "")
    if not base_url or not model:
        return None
    return VisionModel(base_url.rstrip("/"), model, str(section.get("api_key") or os.environ.get("OPENAI_API_KEY", "")),
                       float(section.get("timeout") or 120))


async def answer_question(model: VisionModel, png: bytes, question: str) -> str:
    """The model's answer to ``question`` about the screenshot (its chat-completions endpoint, one message)."""
    body = {"model": model.model, "messages": [{"role": "user", "content": [
        {"type": "text", "text": question or "Describe this page."},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()}},
    ]}]}
    headers = {"Content-Type": "application/json"}
    if model.api_key:
        headers["Authorization"] = f"Bearer {model.api_key}"
    request = urllib.request.Request(f"{model.base_url}/chat/completions", data=json.dumps(body).encode(),
                                     headers=headers)

    def post() -> str:
        with urllib.request.urlopen(request, timeout=model.timeout) as response:  # the user's URL
            reply = json.loads(response.read(10_000_000))
        return str(reply["choices"][0]["message"]["content"])

    return await asyncio.to_thread(post)
