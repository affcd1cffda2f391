"""image_generate through an OpenAI-compatible images endpoint on 127.0.0.1: the request has the shape the openai SDK
types describe, a real PNG is saved in the results folder and returned as media (an image block in the Anthropic
format, the path in text in OpenAI chat), pictures the endpoint links to are fetched through the guard."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pydantic
import pytest
from anthropic.types import ToolUseBlock
from openai.types.chat import ChatCompletionMessageFunctionToolCall
from openai.types.image_generate_params import ImageGenerateParamsNonStreaming

from hermes_core import Runtime
from hermes_core.authoring.testing import LocalHttp, png_image
from hermes_core.plugin import media_info

from .conftest import PICTURE


def test_a_generated_picture_is_saved_as_a_real_png_in_the_results_folder(draw, images_endpoint, hermes_home: Path):
    answer = draw(prompt="a green field", aspect_ratio="square")

    assert answer["success"] is True and answer["provider"] == "openai" and answer["modality"] == "text"
    assert answer["model"] == "gpt-image-2-medium" and answer["revised_prompt"] == "a green rectangle"
    saved = Path(answer["image"])
    assert saved.parent == hermes_home / "results" / "media" and saved.read_bytes() == PICTURE
    assert media_info(saved.read_bytes()).mime_type == "image/png"
    [request] = images_endpoint.requests()
    body = request.json()
    assert pydantic.TypeAdapter(ImageGenerateParamsNonStreaming).validate_python(body) == body
    assert body == {"model": "gpt-image-2", "prompt": "a green field", "size": "1024x1024", "n": 1,
                    "quality": "medium"}
    assert request.headers["Authorization"] == "Bearer test-key"


def test_the_anthropic_format_carries_the_picture_and_openai_chat_names_its_path(image_runtime: Runtime):
    anthropic_call = ToolUseBlock(type="tool_use", id="t1", name="image_generate", input={"prompt": "a field"})
    chat_call = ChatCompletionMessageFunctionToolCall(id="c1", type="function", function={
        "name": "image_generate", "arguments": json.dumps({"prompt": "a field"})})

    anthropic_reply, chat_reply = image_runtime.answer_tool_calls([anthropic_call, chat_call])

    text, image = anthropic_reply["content"]
    assert json.loads(text["text"].split("\n")[0])["success"] is True
    assert image["type"] == "image" and base64.b64decode(image["source"]["data"]) == PICTURE
    path = json.loads(chat_reply["content"].split("\n")[0])["image"]
    assert isinstance(chat_reply["content"], str) and f"[image: {path} (image/png, " in chat_reply["content"]


@pytest.mark.parametrize(("aspect", "size"), [("landscape", "1536x1024"), ("portrait", "1024x1536"),
                                              (None, "1536x1024")])
def test_aspect_ratios_become_sizes_landscape_by_default(draw, images_endpoint, aspect: str | None, size: str):
    draw(prompt="p", **({"aspect_ratio": aspect} if aspect else {}))
    assert images_endpoint.requests()[-1].json()["size"] == size


def test_an_unknown_aspect_ratio_is_refused_naming_the_choices(draw, images_endpoint):
    answer = draw(prompt="p", aspect_ratio="widescreen")

    assert "'landscape', 'square', 'portrait'" in answer["error"] and images_endpoint.server.requests == []


def test_the_model_is_configured_tiers_set_the_quality_and_other_names_pass_through(draw, image_config,
                                                                                     images_endpoint):
    for model, expected in (("gpt-image-2-high", {"model": "gpt-image-2", "quality": "high"}),
                            ("dall-e-3", {"model": "dall-e-3"})):
        image_config(provider="openai", openai={"base_url": images_endpoint.base_url, "api_key": "k", "model": model})
        assert draw(prompt="p")["model"] == model
        body = images_endpoint.requests()[-1].json()
        assert {key: body[key] for key in expected} == expected and ("quality" in body) == ("quality" in expected)


def test_a_source_image_goes_to_the_edits_endpoint(draw, images_endpoint, hermes_workspace: Path):
    source = png_image(3, 3, (9, 9, 9))
    (hermes_workspace / "photo.png").write_bytes(source)

    answer = draw(prompt="make it brighter", image_url="photo.png")

    assert answer["success"] is True and answer["modality"] == "image"
    [request] = images_endpoint.requests("edits")
    assert request.headers["Content-Type"].startswith("multipart/form-data")
    assert b'name="image[]"; filename="image1.png"' in request.body and source in request.body
    assert b'name="prompt"\r\n\r\nmake it brighter' in request.body


def test_a_source_outside_the_workspace_is_refused_before_any_request(draw, images_endpoint):
    answer = draw(prompt="p", image_url="/etc/hostname")

    assert answer["success"] is False and answer["error_type"] == "io_error"
    assert "files are read from the workspace" in answer["error"] and images_endpoint.server.requests == []


def test_a_linked_picture_is_fetched_through_the_guard(draw, image_config, images_endpoint, local_http: LocalHttp,
                                                      hermes_home: Path):
    images_endpoint.link = local_http.route("GET", "/out.png", (200, {"Content-Type": "image/png"}, PICTURE))

    refused = draw(prompt="p")
    image_config(allow_private=True, provider="openai",
                 openai={"base_url": images_endpoint.base_url, "api_key": "k"})
    fetched = draw(prompt="p")

    assert refused["success"] is False and "loopback" in refused["error"]
    assert fetched["success"] is True and Path(fetched["image"]).read_bytes() == PICTURE


def test_a_link_to_the_metadata_address_is_refused(draw, image_config, images_endpoint):
    image_config(allow_private=True, provider="openai", openai={"base_url": images_endpoint.base_url, "api_key": "k"})
    images_endpoint.link = "http://169.254.169.254/latest/meta-data/iam"

    answer = draw(prompt="p")

    assert answer["success"] is False and "metadata" in answer["error"] and "never reachable" in answer["error"]


def test_an_answer_that_is_not_a_picture_is_an_error_and_saves_nothing(draw, images_endpoint, hermes_home: Path):
    images_endpoint.server.route("POST", "/v1/images/generations", (200, {}, {"data": [
        {"b64_json": base64.b64encode(b"<html>no</html>").decode()}]}))

    answer = draw(prompt="p")

    assert answer["success"] is False and answer["error_type"] == "invalid_response"
    assert "not an image" in answer["error"] and not (hermes_home / "results" / "media").exists()


def test_an_endpoint_error_is_reported_with_its_message(draw, images_endpoint):
    images_endpoint.server.route("POST", "/v1/images/generations",
                                 (400, {}, {"error": {"message": "Your prompt was rejected"}}))

    answer = draw(prompt="p")

    assert answer["success"] is False and answer["error_type"] == "api_error"
    assert "HTTP 400: Your prompt was rejected" in answer["error"]


def test_an_empty_prompt_is_refused(draw):
    assert draw(prompt="  ") == {"success": False, "image": None, "error": "Prompt is required and must be a "
                                 "non-empty string", "error_type": "invalid_argument", "model": "", "prompt": "",
                                 "aspect_ratio": "landscape", "provider": ""}


def test_without_a_key_the_tool_is_unavailable_naming_it(image_runtime: Runtime, image_config):
    image_config(provider="openai")
    image_runtime.registry.invalidate_checks()
    openai_reason = image_runtime.handle_function_call("image_generate", {"prompt": "p"})
    image_config(provider="fal")
    image_runtime.registry.invalidate_checks()
    fal_reason = image_runtime.handle_function_call("image_generate", {"prompt": "p"})

    assert "unavailable" in openai_reason and "OPENAI_API_KEY" in openai_reason
    assert "unavailable" in fal_reason and "FAL_KEY is not set" in fal_reason


def test_the_toolsets_select_the_tool(image_runtime: Runtime):
    for toolset in ("image_gen", "image_tools"):
        definitions = image_runtime.get_tool_definitions(enabled_toolsets=[toolset], quiet_mode=True)
        assert {d["function"]["name"] for d in definitions} == {"image_generate"}
