"""Fixtures for the vision pack: a runtime with the pack, a stand-in vision model (an OpenAI-compatible endpoint on
127.0.0.1: no model runs here) that decodes the images it is sent, and config.yaml written per test."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Runtime
from hermes_core.authoring.testing import HttpRequest, LocalHttp


class VisionModel:
    """The endpoint's view: each request's question and images (decoded from their data URLs)."""

    def __init__(self, server: LocalHttp) -> None:
        self.server = server
        self.base_url = server.url("/v1")
        server.route("POST", "/v1/chat/completions", self._answer)

    @property
    def asked(self) -> list[dict[str, Any]]:
        return [request.json() for request in self.server.requests if request.path == "/v1/chat/completions"]

    def images(self, index: int = -1) -> list[tuple[str, bytes]]:
        """The (MIME type, bytes) of each image of request ``index``."""
        found = []
        for part in self.asked[index]["messages"][0]["content"]:
            if part["type"] == "image_url":
                header, _, data = part["image_url"]["url"].partition(",")
                found.append((header.removeprefix("data:").removesuffix(";base64"), base64.b64decode(data)))
        return found

    def question(self, index: int = -1) -> str:
        return str(self.asked[index]["messages"][0]["content"][0]["text"])

    def _answer(self, request: HttpRequest) -> tuple[int, dict[str, str], dict[str, Any]]:
        body = request.json()
        count = sum(part["type"] == "image_url" for part in body["messages"][0]["content"])
        return 200, {}, {"id": "c1", "object": "chat.completion", "model": body["model"], "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
                                                               "content": f"I see {count} image(s): a red square."}}]}


@pytest.fixture
def vision_model(local_http: LocalHttp) -> VisionModel:
    return VisionModel(local_http)


@pytest.fixture
def vision_config(hermes_home: Path, vision_model: VisionModel) -> Callable[..., None]:
    """Call it to write config.yaml: the vision model configured unless ``model=False``; ``settings`` for the pack."""

    def write(*, model: bool = True, allow_private: bool = False, **settings: Any) -> None:
        config: dict[str, Any] = {"web": {"allow_private_networks": allow_private},
                                  "plugins": {"entries": {"vision": {"settings": settings}}}}
        if model:
            config["auxiliary"] = {"vision": {"base_url": vision_model.base_url, "model": "local-vision",
                                              "api_key": "test-key"}}
        (hermes_home / "config.yaml").write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML

    write()
    return write


@pytest.fixture
def vision(hermes_runtime: Runtime, load_hermes_plugin: Callable[..., Any],
           vision_config: Callable[..., None]) -> Callable[..., dict[str, Any]]:
    """``vision(tool, **args)``: call a tool of a runtime with the pack loaded; the decoded JSON answer."""
    load_hermes_plugin("hermes_plugin_vision")

    def call(name: str, /, **args: Any) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(hermes_runtime.handle_function_call(name, args))
        return result

    return call
