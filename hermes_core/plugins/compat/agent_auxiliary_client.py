"""Shim of Hermes Agent's ``agent.auxiliary_client``: ``call_llm`` against the OpenAI-compatible endpoint that the
runtime's config.yaml names, and only then; Hermes runs no model of its own.

The endpoint is ``auxiliary.<task>`` when that section has a ``base_url``, else ``model``:
``{base_url, api_key, default (the model name)}``, as in Hermes Agent's config.yaml.
"""

from __future__ import annotations

import json
import types
from typing import Any

from ...calls.auxiliary import MAX_TIMEOUT, chat_completion
from ...errors import LlmEndpointError
from . import host_runtime

__all__ = ["LlmEndpointError", "call_llm"]


def _endpoint(task: str | None) -> dict[str, Any]:
    config = host_runtime().config.model_dump(mode="json")
    auxiliary = (config.get("auxiliary") or {}).get(task or "") if isinstance(config.get("auxiliary"), dict) else None
    for section in (auxiliary, config.get("model")):
        if isinstance(section, dict) and isinstance(section.get("base_url"), str) and section["base_url"].strip():
            return section
    raise LlmEndpointError(
        "agent.auxiliary_client.call_llm: no model endpoint is configured; Hermes runs no model of its own. Set "
        "model.base_url (an OpenAI-compatible API), model.api_key and model.default (the model) in config.yaml")


def call_llm(task: str | None = None, *, provider: str | None = None, model: str | None = None,
             base_url: str | None = None, api_key: str | None = None, main_runtime: Any = None,
             messages: list[dict[str, Any]], temperature: float | None = None, max_tokens: int | None = None,
             tools: list[dict[str, Any]] | None = None, timeout: float | None = None,
             extra_body: dict[str, Any] | None = None, **ignored: Any) -> Any:
    """One chat completion: the response as attributes (``response.choices[0].message.content``). Raises
    :class:`LlmEndpointError` when no endpoint is configured or it fails."""
    endpoint = _endpoint(task)
    body: dict[str, Any] = {"model": model or endpoint.get("model") or endpoint.get("default"), "messages": messages,
                            **(extra_body or {})}
    body.update({key: value for key, value in (("temperature", temperature), ("max_tokens", max_tokens),
                                               ("tools", tools)) if value is not None})
    try:
        data = chat_completion(base_url or endpoint["base_url"], body, api_key or endpoint.get("api_key"),
                               min(timeout or 60.0, MAX_TIMEOUT))
    except LlmEndpointError as exc:
        raise LlmEndpointError(f"agent.auxiliary_client.call_llm: {exc}") from None
    return json.loads(json.dumps(data), object_hook=lambda item: types.SimpleNamespace(**item))
