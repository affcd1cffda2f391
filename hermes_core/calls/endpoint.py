"""The configured model endpoint: an OpenAI-compatible Chat Completions API (``delegation.base_url``), asked through
the ``openai`` SDK (the ``hermes-tools[openai]`` extra) when neither the host nor the caller answers model
requests. The SDK is imported by the first request, never to list tools."""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Mapping
from typing import Any

from ..config.model import DelegationConfig
from .asking import ModelReply, ModelRequest

__all__ = ["OpenAIEndpoint", "configured_endpoint"]

INSTALL_HINT = "pip install 'hermes-tools[openai]'"


class OpenAIEndpoint:
    """A model callback over an OpenAI-compatible endpoint: ``ModelRequest`` in, ``ModelReply`` out. A request's
    ``model`` wins over the endpoint's default model (a host routing tasks to models)."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 300.0) -> None:
        self.base_url, self.model, self.timeout = base_url, model, timeout
        self._api_key = api_key
        self._client: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIEndpoint({self.base_url!r}, model={self.model!r})"

    def client(self) -> Any:
        """The SDK client (made once; the SDK's clients are thread-safe)."""
        with self._lock:
            if self._client is None:
                import openai

                # a local endpoint needs no key, but the SDK wants one: never fall back to OPENAI_API_KEY silently
                self._client = openai.OpenAI(base_url=self.base_url, api_key=self._api_key or "no-key",
                                             timeout=self.timeout, max_retries=1)
            return self._client

    def __call__(self, request: ModelRequest) -> ModelReply:
        options: dict[str, Any] = {"model": request.model or self.model, "messages": list(request.messages)}
        if request.tools:
            options["tools"] = list(request.tools)
        if request.max_tokens is not None:
            options["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            options["temperature"] = request.temperature
        return ModelReply.of(self.client().chat.completions.create(**options))


def configured_endpoint(settings: DelegationConfig, environ: Mapping[str, str]) -> OpenAIEndpoint | str:
    """The endpoint ``delegation`` configures, or why none can be asked."""
    if not settings.base_url:
        return "no model endpoint is configured (delegation.base_url)"
    if not settings.model:
        return "delegation.base_url is set, but delegation.model (the model to ask there) is not"
    if not settings.base_url.startswith(("http://", "https://")):
        return f"delegation.base_url must be an http(s) URL, not {settings.base_url!r}"
    key = None
    if settings.api_key_env:
        key = environ.get(settings.api_key_env)
        if not key:
            return f"delegation.api_key_env names {settings.api_key_env}, which is not set"
    if importlib.util.find_spec("openai") is None:
        return f"the endpoint of delegation.base_url is asked with the openai package, which is missing: {INSTALL_HINT}"
    return OpenAIEndpoint(settings.base_url, settings.model, key, settings.model_timeout)
