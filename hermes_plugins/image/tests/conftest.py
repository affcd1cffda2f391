"""Fixtures for the image pack: a runtime with the pack, stand-ins for the providers on 127.0.0.1 (an
OpenAI-compatible images endpoint over HTTP; FAL's queue API over HTTPS with a test CA, since fal-client speaks
nothing else) and config.yaml written per test."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Runtime
from hermes_core.authoring.testing import HttpRequest, LocalHttp, png_image

#: What the stand-in providers draw.
PICTURE = png_image(16, 9, (30, 200, 90))


class ImagesEndpoint:
    """An OpenAI-compatible ``/v1/images/...`` API answering with :data:`PICTURE` as base64 (or a URL, if set)."""

    def __init__(self, server: LocalHttp) -> None:
        self.server = server
        self.base_url = server.url("/v1")
        self.link: str | None = None
        server.route("POST", "/v1/images/generations", self._answer)
        server.route("POST", "/v1/images/edits", self._answer)

    def _answer(self, request: HttpRequest) -> tuple[int, dict[str, str], dict[str, Any]]:
        item = {"url": self.link} if self.link else {"b64_json": base64.b64encode(PICTURE).decode(),
                                                     "revised_prompt": "a green rectangle"}
        return 200, {}, {"created": 0, "data": [item]}

    def requests(self, kind: str = "generations") -> list[HttpRequest]:
        return [request for request in self.server.requests if request.path == f"/v1/images/{kind}"]


@pytest.fixture
def images_endpoint(local_http: LocalHttp) -> ImagesEndpoint:
    return ImagesEndpoint(local_http)


@pytest.fixture
def image_config(hermes_home: Path, images_endpoint: ImagesEndpoint,
                 monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Call it to write config.yaml's ``image_gen`` section (default: the OpenAI-compatible stand-in)."""
    for name in ("FAL_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_IMAGE_MODEL", "FAL_IMAGE_MODEL"):
        monkeypatch.delenv(name, raising=False)

    def write(*, allow_private: bool = False, settings: dict[str, Any] | None = None, **image_gen: Any) -> None:
        section = image_gen or {"provider": "openai", "openai": {"base_url": images_endpoint.base_url,
                                                                  "api_key": "test-key"}}
        config = {"image_gen": section, "web": {"allow_private_networks": allow_private},
                  "plugins": {"entries": {"image": {"settings": settings or {}}}}}
        (hermes_home / "config.yaml").write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML

    write()
    return write


@pytest.fixture
def image_runtime(hermes_runtime: Runtime, load_hermes_plugin: Callable[..., Any],
                  image_config: Callable[..., None]) -> Iterator[Runtime]:
    load_hermes_plugin("hermes_plugin_image")
    yield hermes_runtime


@pytest.fixture
def draw(image_runtime: Runtime) -> Callable[..., dict[str, Any]]:
    """``draw(**args)``: call image_generate; the JSON answer (its first line: the media reference follows)."""

    def call(**args: Any) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(image_runtime.handle_function_call("image_generate", args)
                                            .split("\n")[0])
        return result

    return call
