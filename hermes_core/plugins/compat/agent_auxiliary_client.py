"""Shim of Hermes Agent's ``agent.auxiliary_client``: ``call_llm`` against the OpenAI-compatible endpoint that the
runtime's config.yaml names, and only then; Hermes runs no model of its own.

The endpoint is ``auxiliary.<task>`` when that section has a ``base_url``, else ``model``:
``{base_url, api_key, default (the model name)}``, as in Hermes Agent's config.yaml.
"""

from __future__ import annotations

import json
import types
import urllib.error
import urllib.request
from typing import Any

from ...errors import LlmEndpointError
from . import host_runtime

__all__ = ["LlmEndpointError", "call_llm"]

#: Upper bound on one call, whatever the plugin asks for.
MAX_TIMEOUT = 300.0
MAX_RESPONSE_BYTES = 8 * 1024 * 1024


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
    url = (base_url or endpoint["base_url"]).rstrip("/") + "/chat/completions"
    if not url.startswith(("http://", "https://")):
        raise LlmEndpointError(f"agent.auxiliary_client.call_llm: model.base_url must be an http(s) URL, not {url!r}")
    body: dict[str, Any] = {"model": model or endpoint.get("model") or endpoint.get("default"), "messages": messages,
                            **(extra_body or {})}
    body.update({key: value for key, value in (("temperature", temperature), ("max_tokens", max_tokens),
                                               ("tools", tools)) if value is not None})
    key = api_key or endpoint.get("api_key")
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST", headers={
        "Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})})
    try:
        with urllib.request.urlopen(request, timeout=min(timeout or 60.0, MAX_TIMEOUT)) as response:
            data = json.loads(response.read(MAX_RESPONSE_BYTES))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise LlmEndpointError(f"agent.auxiliary_client.call_llm: {url} failed: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
        raise LlmEndpointError(f"agent.auxiliary_client.call_llm: {url} did not answer with chat completion choices")
    return json.loads(json.dumps(data), object_hook=lambda item: types.SimpleNamespace(**item))
