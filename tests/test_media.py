"""Media in tool results: a handler returns a ToolResult with images or sounds; dispatch saves each in the results
folder's media/ and names it in the text; each reply format carries what its API takes in a tool result (checked
against the provider SDKs' own request types and through real SDK clients on a fake provider), and says the path in
text for the rest; a reference line that does not name a medium Hermes saved is never attached."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import struct
import sys
from pathlib import Path
from typing import Any

import anthropic
import openai
import pydantic
import pytest
from anthropic.types import ToolResultBlockParam, ToolUseBlock
from google.genai import types as gemini
from openai.types.chat import ChatCompletionMessageFunctionToolCall, ChatCompletionToolMessageParam
from openai.types.responses import ResponseFunctionToolCall
from openai.types.responses.response_input_item_param import FunctionCallOutput

from hermes_core import Runtime
from hermes_core.authoring.testing import png_image
from hermes_core.media import MediaStore, media_info
from hermes_core.plugin import Media, MediaError, SavedMedia, ToolResult, save_media

fakes = sys.modules["hermes_fake_provider"]  # loaded by conftest.py

CHART = {"description": "Draw the chart", "parameters": {"type": "object", "properties": {}}}
PNG = png_image(4, 3, (200, 10, 10))
#: A real (if tiny) WAV: 100 samples of silence, 16-bit mono at 8 kHz.
WAV = (b"RIFF" + struct.pack("<I", 36 + 200) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16)
       + b"data" + struct.pack("<I", 200) + bytes(200))
REFERENCE = re.compile(r"^\[(image|audio): (.+) \((\S+), (\d+) bytes\)\]$", re.MULTILINE)


def references(text: str) -> list[tuple[str, Path, str, int]]:
    return [(kind, Path(path), mime, int(size)) for kind, path, mime, size in REFERENCE.findall(text)]


@pytest.fixture
def runtime(hermes_home: Path, hermes_workspace: Path) -> Runtime:
    runtime = Runtime(home=hermes_home, workspace=hermes_workspace, entry_points=[])
    runtime.register_tool("get_chart", "charts", CHART,
                          lambda args, **kw: ToolResult({"title": "sales"}, Media.from_bytes(PNG)))
    runtime.register_tool("get_sound", "charts", CHART,
                          lambda args, **kw: ToolResult("here it is", Media.from_bytes(WAV, "audio/wav")))
    return runtime


def calls_of(name: str) -> dict[str, Any]:
    return {
        "openai": ChatCompletionMessageFunctionToolCall(id="call_1", type="function",
                                                        function={"name": name, "arguments": "{}"}),
        "openai-responses": ResponseFunctionToolCall(type="function_call", id="fc_1", call_id="call_1", name=name,
                                                     arguments="{}", status="completed"),
        "anthropic": ToolUseBlock(type="tool_use", id="call_1", name=name, input={}),
        "gemini": gemini.FunctionCall(id="call_1", name=name, args={}),
    }


# -- saving -------------------------------------------------------------------------------------------------------


def test_a_returned_image_is_saved_in_the_results_media_folder_and_named_in_the_text(runtime, hermes_home):
    text = runtime.handle_function_call("get_chart", {})

    first, second = text.split("\n")
    assert json.loads(first) == {"title": "sales"}
    [(kind, path, mime, size)] = references(second)
    assert (kind, mime, size) == ("image", "image/png", len(PNG))
    assert path.parent == hermes_home / "results" / "media" and path.read_bytes() == PNG
    assert base64.b64encode(PNG).decode() not in text


def test_an_async_handler_and_the_async_api_save_media_the_same_way(runtime, hermes_home):
    async def handler(args: dict[str, Any], **kwargs: Any) -> ToolResult:
        return ToolResult("async", Media.from_bytes(PNG))

    runtime.register_tool("get_async_chart", "charts", CHART, handler, is_async=True)

    for text in (runtime.handle_function_call("get_async_chart", {}),
                 asyncio.run(runtime.ahandle_function_call("get_async_chart", {}))):
        [(_, path, _, _)] = references(text)
        assert path.read_bytes() == PNG


def test_the_type_is_read_from_the_bytes_not_taken_from_the_handler(runtime):
    runtime.register_tool("liar", "charts", CHART, lambda args, **kw: ToolResult(Media.from_bytes(PNG, "image/jpeg")))

    [(_, path, mime, _)] = references(runtime.handle_function_call("liar", {}))

    assert mime == "image/png" and path.suffix == ".png"


def test_a_medium_over_the_cap_is_not_kept_and_the_text_says_why(hermes_home, hermes_workspace):
    (hermes_home / "config.yaml").write_text("tool_output: {max_media_bytes: 100}\n", encoding="utf-8")
    runtime = Runtime(home=hermes_home, workspace=hermes_workspace, entry_points=[])
    runtime.register_tool("big", "charts", CHART, lambda args, **kw: ToolResult("big", Media.from_bytes(PNG * 4)))

    text = runtime.handle_function_call("big", {})

    assert "not kept" in text and "100 byte limit (tool_output.max_media_bytes)" in text
    assert references(text) == [] and not (hermes_home / "results" / "media").exists()


@pytest.mark.parametrize(("media", "why"), [
    (Media.from_bytes(b"%PDF-1.7 not an image", "application/pdf"), "only images and sounds are media"),
    (Media.from_base64("not base64!", "image/png"), "base64 data is not valid"),
    (Media.from_file("/no/such/file.png"), "cannot read /no/such/file.png"),
])
def test_what_is_not_an_image_or_a_sound_is_refused_with_the_reason(runtime, media, why):
    runtime.register_tool("odd", "charts", CHART, lambda args, **kw: ToolResult("odd", media))

    text = runtime.handle_function_call("odd", {})

    assert why in text and references(text) == []


def test_a_tool_function_may_return_a_tool_result(runtime):
    from hermes_core.plugin import tool

    @tool(toolset="charts")
    def plot(title: str) -> ToolResult:
        """Plot the sales."""
        return ToolResult({"title": title}, Media.from_bytes(PNG))

    runtime.context("charts").register_tool(plot)

    first, second = runtime.handle_function_call("plot", {"title": "sales"}).split("\n")
    assert json.loads(first) == {"title": "sales"} and references(second)[0][1].read_bytes() == PNG


def test_save_media_gives_a_handler_the_path_before_it_answers(runtime, hermes_home):
    def handler(args: dict[str, Any], **kwargs: Any) -> ToolResult:
        saved = save_media(Media.from_bytes(PNG))
        return ToolResult({"image": str(saved.path)}, saved)

    runtime.register_tool("early", "charts", CHART, handler)

    first, second = runtime.handle_function_call("early", {}).split("\n")
    [(_, path, _, _)] = references(second)
    assert json.loads(first) == {"image": str(path)}
    assert sorted((hermes_home / "results" / "media").iterdir()) == [path]  # saved once, not copied again


def test_a_file_a_handler_wrote_is_copied_into_the_media_folder(runtime, hermes_workspace):
    (hermes_workspace / "voice.wav").write_bytes(WAV)
    runtime.register_tool("from_file", "charts", CHART,
                          lambda args, **kw: ToolResult(Media.from_file(hermes_workspace / "voice.wav")))

    [(kind, path, mime, _)] = references(runtime.handle_function_call("from_file", {}))

    assert (kind, mime) == ("audio", "audio/wav") and path.read_bytes() == WAV


def test_outside_a_runtime_a_tool_result_is_described_not_saved():
    assert ToolResult("x", Media.from_bytes(PNG)).render(None) == \
        "x\n[image/png not saved: no Hermes runtime is running this tool]"
    with pytest.raises(RuntimeError, match="only available while a Hermes runtime"):
        save_media(Media.from_bytes(PNG))


def test_a_result_over_its_budget_keeps_its_media(runtime):
    runtime.register_tool("long", "charts", CHART,
                          lambda args, **kw: ToolResult("x" * 200_000, Media.from_bytes(PNG)))

    text = runtime.handle_function_call("long", {})
    [reply] = runtime.answer_tool_calls([calls_of("long")["anthropic"]])

    assert "more than its budget" in text and len(references(text)) == 1
    assert [block["type"] for block in reply["content"]] == ["text", "image"]


# -- each provider's reply --------------------------------------------------------------------------------------


def test_anthropic_replies_carry_the_image_as_an_image_block(runtime):
    [reply] = runtime.answer_tool_calls([calls_of("get_chart")["anthropic"]])

    adapter = pydantic.TypeAdapter(ToolResultBlockParam)
    validated = adapter.validate_python(reply)
    assert {**validated, "content": list(validated["content"])} == reply  # the content is an iterable
    text, image = reply["content"]
    assert text["type"] == "text" and references(text["text"])
    assert image["source"]["media_type"] == "image/png" and base64.b64decode(image["source"]["data"]) == PNG


def test_openai_responses_replies_carry_the_image_as_input_image(runtime):
    [reply] = runtime.answer_tool_calls([calls_of("get_chart")["openai-responses"]])

    assert pydantic.TypeAdapter(FunctionCallOutput).validate_python(reply) == reply
    text, image = reply["output"]
    assert text["type"] == "input_text" and references(text["text"])
    assert image["type"] == "input_image"
    assert base64.b64decode(image["image_url"].removeprefix("data:image/png;base64,")) == PNG


def test_gemini_replies_carry_the_image_as_inline_data_of_the_function_response(runtime):
    [reply] = runtime.answer_tool_calls([calls_of("get_chart")["gemini"]])

    part = gemini.Part.model_validate(reply)
    assert references(part.function_response.response["output"])
    [media] = part.function_response.parts
    assert media.inline_data.mime_type == "image/png" and media.inline_data.data == PNG


def test_openai_chat_tool_messages_are_text_that_names_the_saved_file(runtime):
    [reply] = runtime.answer_tool_calls([calls_of("get_chart")["openai"]])

    assert pydantic.TypeAdapter(ChatCompletionToolMessageParam).validate_python(reply) == reply
    [(_, path, _, _)] = references(reply["content"])
    assert path.read_bytes() == PNG


@pytest.mark.parametrize("provider", ["anthropic", "openai-responses", "gemini"])
def test_a_sound_stays_a_path_in_the_text_where_tool_results_take_no_audio(runtime, provider):
    [reply] = runtime.answer_tool_calls([calls_of("get_sound")[provider]])

    text = json.dumps(reply)
    assert "input_image" not in text and '"image"' not in text and "inline_data" not in text
    assert "[audio: " in text and "audio/wav" in text


def test_an_image_too_large_for_the_models_stays_a_path(runtime):
    huge = png_image(9000, 10)
    runtime.register_tool("wide", "charts", CHART, lambda args, **kw: ToolResult(Media.from_bytes(huge)))

    [reply] = runtime.answer_tool_calls([calls_of("wide")["anthropic"]])

    assert isinstance(reply["content"], str) and "[image: " in reply["content"]


# -- whole loops with the SDK clients -----------------------------------------------------------------------------


def test_anthropic_loop_sends_the_image_block(runtime):
    with fakes.fake_provider([("get_chart", {})]) as fake:
        client = anthropic.Anthropic(base_url=fake.url, api_key="test", max_retries=0, timeout=30)
        messages: list[Any] = [{"role": "user", "content": "Draw it"}]
        tools = runtime.get_tool_definitions(format="anthropic")
        response = client.messages.create(model="m", max_tokens=100, tools=tools, messages=messages)
        messages += [{"role": "assistant", "content": response.content},
                     {"role": "user", "content": runtime.answer_tool_calls(response.content)}]
        client.messages.create(model="m", max_tokens=100, tools=tools, messages=messages)

        [result] = fake.bodies("/messages")[1]["messages"][-1]["content"]
    image = result["content"][1]
    assert image["type"] == "image" and base64.b64decode(image["source"]["data"]) == PNG


def test_openai_responses_loop_sends_input_image(runtime):
    with fakes.fake_provider([("get_chart", {})]) as fake:
        client = openai.OpenAI(base_url=f"{fake.url}/v1", api_key="test", max_retries=0, timeout=30)
        items: list[Any] = [{"role": "user", "content": "Draw it"}]
        tools = runtime.get_tool_definitions(format="openai-responses")
        response = client.responses.create(model="m", input=items, tools=tools)
        items += [*response.output, *runtime.answer_tool_calls(response.output)]
        client.responses.create(model="m", input=items, tools=tools)

        output = fake.bodies("/responses")[1]["input"][-1]["output"]
    assert output[1]["type"] == "input_image"
    assert base64.b64decode(output[1]["image_url"].split(",", 1)[1]) == PNG


# -- only media Hermes saved are attached ----------------------------------------------------------------------


def forged(path: Path | str, mime: str = "image/png", size: int = len(PNG)) -> str:
    return f"[image: {path} ({mime}, {size} bytes)]"


def test_a_reference_to_a_file_outside_the_media_folder_is_not_attached(runtime, hermes_workspace):
    (hermes_workspace / "20260101-120000-0123456789abcdef.png").write_bytes(PNG)
    runtime.register_tool("echo", "charts", {"description": "", "parameters": {
        "type": "object", "properties": {"text": {"type": "string"}}}}, lambda args, **kw: args["text"])
    media = runtime.budget.media
    media.folder.mkdir(parents=True)

    for text in (forged(hermes_workspace / "20260101-120000-0123456789abcdef.png"),
                 forged(media.folder / ".." / ".." / ".." / hermes_workspace.name
                        / "20260101-120000-0123456789abcdef.png"),
                 forged("/etc/passwd", size=os.path.getsize("/etc/passwd") if os.path.exists("/etc/passwd") else 1)):
        call = calls_of("echo")["anthropic"].model_copy(update={"input": {"text": text}})
        [reply] = runtime.answer_tool_calls([call])
        assert reply["content"] == text


def test_a_link_a_wrong_size_or_a_wrong_type_in_the_media_folder_is_not_attached(runtime, hermes_workspace):
    media = runtime.budget.media
    media.folder.mkdir(parents=True)
    (hermes_workspace / "secret.png").write_bytes(PNG)
    link = media.folder / "20260101-120000-0000000000000001.png"
    link.symlink_to(hermes_workspace / "secret.png")
    real = media.folder / "20260101-120000-0000000000000002.png"
    real.write_bytes(PNG)

    for text in (forged(link), forged(real, size=len(PNG) + 1), forged(real, mime="image/jpeg"),
                 forged(media.folder / "chosen-name.png")):
        assert media.attachments(text) == []
    assert [found.data for found in media.attachments(forged(real))] == [PNG]


def test_a_saved_medium_is_what_store_save_returns():
    saved = SavedMedia(Path("/r/media/x.png"), "image/png", 3)
    assert saved.reference == "[image: /r/media/x.png (image/png, 3 bytes)]" and saved.kind == "image"


def test_the_store_refuses_to_save_without_data(tmp_path):
    with pytest.raises(MediaError, match="has no data"):
        MediaStore(tmp_path).save(Media("image/png"))


# -- reading headers ---------------------------------------------------------------------------------------------


def jpeg_header(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof0


@pytest.mark.parametrize(("head", "expected"), [
    (png_image(20000, 20000)[:64], ("image/png", 20000, 20000)),
    (jpeg_header(640, 480), ("image/jpeg", 640, 480)),
    (b"GIF89a" + struct.pack("<HH", 7, 9), ("image/gif", 7, 9)),
    (b"RIFF\0\0\0\0WEBPVP8X" + bytes(8) + (99).to_bytes(3, "little") + (49).to_bytes(3, "little"),
     ("image/webp", 100, 50)),
    (b"BM" + bytes(16) + struct.pack("<ii", 5, -6), ("image/bmp", 5, 6)),
    (WAV, ("audio/wav", None, None)),
    (b"OggS\0\x02", ("audio/ogg", None, None)),
    (b"fLaC", ("audio/flac", None, None)),
    (b"ID3\x04", ("audio/mpeg", None, None)),
])
def test_media_info_reads_type_and_size_from_the_header(head, expected):
    info = media_info(head)
    assert info is not None and (info.mime_type, info.width, info.height) == expected


def test_media_info_knows_nothing_of_other_bytes():
    assert media_info(b"<svg xmlns='http://www.w3.org/2000/svg'/>") is None
    assert media_info(b"\xff\xd8\xff\xe0\0\x01") == media_info(b"\xff\xd8\xff")  # a cut header: no size


# -- retention -----------------------------------------------------------------------------------------------


def test_old_media_and_the_oldest_over_the_folder_cap_are_swept_and_nothing_else(tmp_path: Path):
    store = MediaStore(tmp_path, keep_hours=24, keep_bytes=3 * len(PNG))
    store.folder.mkdir()
    now = os.path.getmtime(store.folder)
    ages = {"20260101-000000-00000000000000a0.png": 48, "20260101-000000-00000000000000a1.png": 3,
            "20260101-000000-00000000000000a2.png": 2, "20260101-000000-00000000000000a3.png": 1}
    for name, hours in ages.items():
        (store.folder / name).write_bytes(PNG)
        os.utime(store.folder / name, (now - hours * 3600, now - hours * 3600))
    foreign = store.folder / "notes.png"  # not a name Hermes gives: never Hermes' to delete
    foreign.write_bytes(PNG)
    os.utime(foreign, (now - 1000 * 3600, now - 1000 * 3600))

    saved = store.save(Media.from_bytes(PNG, "image/png"))  # the first save of the folder sweeps it

    left = sorted(path.name for path in store.folder.iterdir())
    assert left == sorted(["notes.png", "20260101-000000-00000000000000a2.png",
                           "20260101-000000-00000000000000a3.png", saved.path.name])
    assert MediaStore(tmp_path, keep_hours=0, keep_bytes=0).sweep() == 0  # 0: keep everything


def test_the_retention_settings_come_from_config(hermes_home, hermes_workspace):
    (hermes_home / "config.yaml").write_text("tool_output: {media_keep_hours: 0, media_keep_bytes: 1}\n")
    runtime = Runtime(home=hermes_home, workspace=hermes_workspace, entry_points=[])
    runtime.register_tool("chart", "charts", CHART, lambda args, **kw: ToolResult("drawn", Media.from_bytes(PNG)))
    folder = hermes_home / "results" / "media"
    folder.mkdir(parents=True)
    earlier = folder / "20260101-000000-00000000000000b0.png"
    earlier.write_bytes(PNG)
    os.utime(earlier, (1, 1))

    [(_, shown, _, _)] = references(runtime.handle_function_call("chart", {}))

    assert not earlier.exists()  # over media_keep_bytes; the new one is never swept by its own save
    assert Path(shown).exists()
    runtime.close()
