"""The auxiliary models of config.yaml: OpenAI-compatible chat-completions endpoints the user names for a task
(Hermes Agent's ``auxiliary.<task>``: ``base_url``, ``model``, ``api_key``, ``timeout``, ``temperature``,
``extra_body``), e.g. ``auxiliary.vision`` for the tools that look at pictures. Hermes runs no model of its own."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import LlmEndpointError
from .toolcontext import tool_context

if TYPE_CHECKING:
    from .asking import ModelRequest

__all__ = ["MAX_TIMEOUT", "AuxiliaryModel", "auxiliary_model", "chat_completion"]

#: Upper bound on one request, whatever the configuration asks for.
MAX_TIMEOUT = 600.0
MAX_RESPONSE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class AuxiliaryModel:
    """One configured endpoint and model."""

    task: str
    base_url: str
    model: str
    api_key: str = field(repr=False, default="")
    timeout: float = 120.0
    temperature: float | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_section(cls, task: str, section: Any) -> AuxiliaryModel | None:
        """The model an ``auxiliary.<task>`` section names, or None when it names no ``base_url`` and ``model``;
        the key falls back to ``OPENAI_API_KEY``, as in Hermes Agent. Raises
        :class:`~hermes_core.errors.LlmEndpointError` for a section whose values are not numbers where they must be."""
        if not isinstance(section, dict):
            return None
        base_url, model = str(section.get("base_url") or "").strip(), str(section.get("model") or "").strip()
        if not base_url or not model:
            return None
        temperature = section.get("temperature")
        extra = section.get("extra_body")
        api_key = str(section.get("api_key") or os.environ.get("OPENAI_API_KEY", ""))
        try:
            return cls(task, base_url.rstrip("/"), model, api_key, float(section.get("timeout") or 120),
                       None if temperature is None else float(temperature),
                       dict(extra) if isinstance(extra, dict) else {})
        except (TypeError, ValueError) as exc:
            raise LlmEndpointError(f"invalid auxiliary.{task} in config.yaml: {exc}") from None

    def __call__(self, request: ModelRequest) -> str:
        """The model as a model callback (``ctx.ask_model(..., endpoint=model)``): the text of its answer."""
        return self.complete(list(request.messages), max_tokens=request.max_tokens)

    def complete(self, messages: list[dict[str, Any]], *, max_tokens: int | None = None) -> str:
        """The text of the model's answer to ``messages`` (OpenAI chat messages; image parts as ``image_url``
        data URLs). Blocks for the request; raises :class:`~hermes_core.errors.LlmEndpointError`."""
        body: dict[str, Any] = {**self.extra_body, "model": self.model, "messages": messages}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        reply = chat_completion(self.base_url, body, self.api_key, self.timeout)
        try:
            message = reply["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise LlmEndpointError(f"{self.base_url} answered without a message") from None
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):  # some servers answer with content parts
            content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        if not content and isinstance(message, dict):  # a reasoning model that put everything in its reasoning
            content = message.get("reasoning_content") or message.get("reasoning")
        return str(content or "")


def chat_completion(base_url: str, body: dict[str, Any], api_key: str | None, timeout: float) -> dict[str, Any]:
    """POST ``body`` to ``<base_url>/chat/completions``; the decoded answer, which has ``choices``. Raises
    :class:`~hermes_core.errors.LlmEndpointError` naming the URL for every failure."""
    url = base_url.rstrip("/") + "/chat/completions"
    if not url.startswith(("http://", "https://")):
        raise LlmEndpointError(f"the model's base_url must be an http(s) URL, not {base_url!r}")
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST", headers={
        "Content-Type": "application/json", **({"Authorization": f"Bearer {api_key}"} if api_key else {})})
    try:
        with urllib.request.urlopen(request, timeout=min(timeout, MAX_TIMEOUT)) as response:  # the user's endpoint
            data = json.loads(response.read(MAX_RESPONSE_BYTES))
    except urllib.error.HTTPError as exc:
        detail = exc.read(2000).decode("utf-8", "replace").strip()
        raise LlmEndpointError(f"{url} answered HTTP {exc.code}" + (f": {detail}" if detail else "")) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise LlmEndpointError(f"{url} failed: {getattr(exc, 'reason', None) or exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
        raise LlmEndpointError(f"{url} did not answer with chat completion choices")
    return data


def auxiliary_model(task: str) -> AuxiliaryModel | None:
    """The ``auxiliary.<task>`` model of the runtime whose tool is running, or None when config.yaml names none."""
    return AuxiliaryModel.from_section(task, tool_context().section("auxiliary").get(task))
