"""image_generate through FAL with the real fal-client against a stand-in of FAL's queue API on 127.0.0.1 (HTTPS with
a test CA: fal-client speaks nothing else, and reads its hosts when imported, so each call runs in a fresh process):
the model's payload, the queue round trip, the picture fetched through the guard, saved, and carried as an image
block in the Anthropic format."""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hermes_plugin_image
import hermes_plugin_vision
import hermes_plugin_web
import pytest
import trustme

from hermes_core.authoring.testing import HttpRequest, LocalHttp, png_image, scaled_timeout

from .conftest import PICTURE

CALL = """
import json, sys
from hermes_core import Runtime
from hermes_core.plugins.discovery import candidate_from_module

runtime = Runtime(workspace=sys.argv[2], entry_points=[])
record = runtime.load_candidate(candidate_from_module("hermes_plugin_image"))
assert record.state != "error", record.reason
call = {"type": "tool_use", "id": "t1", "name": "image_generate", "input": json.loads(sys.argv[1])}
print(json.dumps(runtime.answer_tool_calls([call])))
"""


class FakeFal:
    """FAL's queue API: a submission is queued, its status is COMPLETED, its result links to a picture on ``cdn``."""

    def __init__(self, tls: ssl.SSLContext, cdn: LocalHttp) -> None:
        self.server = LocalHttp(tls=tls)
        self.cdn = cdn
        self.picture_url = cdn.route("GET", "/files/out.png", (200, {"Content-Type": "image/png"}, PICTURE))
        self.submitted: list[tuple[str, dict[str, Any]]] = []

    def route_model(self, endpoint: str) -> None:
        base = f"/{endpoint}/requests/r1"
        self.server.route("POST", f"/{endpoint}", self._submit(endpoint, base))
        self.server.route("GET", f"{base}/status", (200, {}, {"status": "COMPLETED", "logs": []}))
        self.server.route("GET", base, lambda request: (200, {}, {
            "images": [{"url": self.picture_url, "width": 16, "height": 9}], "seed": 1}))

    def _submit(self, endpoint: str, base: str) -> Any:
        def answer(request: HttpRequest) -> tuple[int, dict[str, str], dict[str, Any]]:
            self.submitted.append((endpoint, request.json()))
            return 200, {}, {"request_id": "r1", "response_url": self.server.url(base),
                             "status_url": self.server.url(f"{base}/status"),
                             "cancel_url": self.server.url(f"{base}/cancel")}

        return answer

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def fal(tmp_path: Path, local_http: LocalHttp) -> Iterator[tuple[FakeFal, dict[str, str]]]:
    """The stand-in and the environment that points fal-client at it."""
    ca = trustme.CA()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    fake = FakeFal(context, local_http)
    packs = [str(Path(str(module.__file__)).parent.parent)
             for module in (hermes_plugin_image, hermes_plugin_vision, hermes_plugin_web)]
    environment = {"FAL_KEY": "test-fal-key", "FAL_QUEUE_RUN_HOST": fake.server.host, "FAL_RUN_HOST": fake.server.host,
                   "SSL_CERT_FILE": str(tmp_path / "ca.pem"),
                   "PYTHONPATH": os.pathsep.join([*packs, os.environ.get("PYTHONPATH", "")])}
    yield fake, environment
    fake.close()


def generate(environment: dict[str, str], home: Path, workspace: Path, config: dict[str, Any],
             **args: Any) -> dict[str, Any]:
    (home / "config.yaml").write_text(json.dumps(config), encoding="utf-8")
    result = subprocess.run([sys.executable, "-c", CALL, json.dumps(args), str(workspace)], capture_output=True,
                            text=True, timeout=scaled_timeout(120),
                            env={**os.environ, **environment, "HERMES_HOME": str(home)})
    assert result.returncode == 0, result.stderr
    [reply] = json.loads(result.stdout)
    return dict(reply)


LOCAL_PICTURES = {"web": {"allow_private_networks": True}}  # the stand-in CDN is on 127.0.0.1


def test_the_default_model_gets_its_payload_and_the_picture_is_saved_and_attached(fal, hermes_home: Path,
                                                                                hermes_workspace: Path):
    fake, environment = fal
    fake.route_model("fal-ai/flux-2/klein/9b")

    reply = generate(environment, hermes_home, hermes_workspace, LOCAL_PICTURES, prompt="a green field",
                     aspect_ratio="portrait")

    [(endpoint, payload)] = fake.submitted
    assert endpoint == "fal-ai/flux-2/klein/9b"
    assert payload == {"prompt": "a green field", "image_size": "portrait_16_9", "num_inference_steps": 4,
                       "output_format": "png", "enable_safety_checker": False}
    assert fake.server.requests[0].headers["Authorization"] == "Key test-fal-key"
    text, image = reply["content"]
    answer = json.loads(text["text"].split("\n")[0])
    assert answer["success"] is True and answer["provider"] == "fal" and answer["model"] == "fal-ai/flux-2/klein/9b"
    assert Path(answer["image"]).read_bytes() == PICTURE
    assert Path(answer["image"]).parent == hermes_home / "results" / "media"
    assert base64.b64decode(image["source"]["data"]) == PICTURE


def test_an_aspect_ratio_model_and_an_edit_with_a_local_source(fal, hermes_home: Path, hermes_workspace: Path):
    fake, environment = fal
    fake.route_model("fal-ai/nano-banana-pro")
    fake.route_model("fal-ai/nano-banana-pro/edit")
    source = png_image(2, 2, (1, 2, 3))
    (hermes_workspace / "photo.png").write_bytes(source)
    config = {**LOCAL_PICTURES, "image_gen": {"provider": "fal", "model": "fal-ai/nano-banana-pro"}}

    generate(environment, hermes_home, hermes_workspace, config, prompt="p", aspect_ratio="square")
    edited = generate(environment, hermes_home, hermes_workspace, config, prompt="brighter", image_url="photo.png",
                      reference_image_urls=["https://example.com/style.png"])

    (first, text_to_image), (second, edit) = fake.submitted
    assert (first, text_to_image["aspect_ratio"]) == ("fal-ai/nano-banana-pro", "1:1")
    assert second == "fal-ai/nano-banana-pro/edit" and "aspect_ratio" not in edit
    assert edit["image_urls"] == ["data:image/png;base64," + base64.b64encode(source).decode()]  # capped at one
    assert json.loads(edited["content"][0]["text"].split("\n")[0])["modality"] == "image"


def test_a_model_without_an_edit_endpoint_refuses_a_source(fal, hermes_home: Path, hermes_workspace: Path):
    fake, environment = fal
    config = {"image_gen": {"model": "fal-ai/z-image/turbo"}}

    reply = generate(environment, hermes_home, hermes_workspace, config, prompt="p",
                     image_url="https://example.com/a.png")

    answer = json.loads(reply["content"])
    assert answer["success"] is False and "cannot edit images" in answer["error"] and fake.submitted == []


def test_a_picture_link_to_a_private_address_is_refused_by_default(fal, hermes_home: Path, hermes_workspace: Path):
    fake, environment = fal
    fake.route_model("fal-ai/flux-2/klein/9b")

    reply = generate(environment, hermes_home, hermes_workspace, {}, prompt="p")

    answer = json.loads(reply["content"])
    assert answer["success"] is False and "loopback" in answer["error"] and fake.cdn.requests == []
