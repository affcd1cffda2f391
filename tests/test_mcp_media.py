"""An MCP server's images and sounds are kept: saved in the results folder within the media cap, named in the text
(``hermes tools call`` prints the path), carried by the reply formats that take them, and passed on as MCP image
and audio content when Hermes serves the tool in turn."""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import re
import subprocess
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import yaml
from anthropic.types import ToolUseBlock

from hermes_core.authoring.testing import scaled_timeout

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py
SERVER = Path(__file__).resolve().parent / "fixtures" / "mcp" / "media_server.py"
REFERENCE = re.compile(r"^\[(image|audio): (.+) \((\S+), (\d+) bytes\)\]$", re.MULTILINE)


def _fixture_module() -> Any:
    spec = importlib.util.spec_from_file_location("hermes_mcp_media_server", SERVER)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FIXTURE = _fixture_module()


def media_server() -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER)]}


def saved(text: str) -> list[tuple[str, Path, str]]:
    return [(kind, Path(path), mime) for kind, path, mime, _ in REFERENCE.findall(text)]


def test_an_image_from_a_server_is_saved_and_named_in_the_text(hermes, isolated_home):
    runtime = hermes({"media": media_server()})

    text = runtime.handle_function_call("mcp__media__chart", {})

    assert text.startswith("Sales by month\n")
    [(kind, path, mime)] = saved(text)
    assert (kind, mime) == ("image", "image/png") and path.read_bytes() == FIXTURE.CHART
    assert path.parent == isolated_home / "results" / "media"


def test_the_anthropic_answer_carries_the_servers_image_as_an_image_block(hermes):
    runtime = hermes({"media": media_server()})

    [reply] = runtime.answer_tool_calls([ToolUseBlock(type="tool_use", id="t1", name="mcp__media__chart", input={})])

    text, image = reply["content"]
    assert text["text"].startswith("Sales by month") and image["type"] == "image"
    assert base64.b64decode(image["source"]["data"]) == FIXTURE.CHART


def test_a_sound_from_a_server_is_saved_as_audio(hermes):
    runtime = hermes({"media": media_server()})

    [(kind, path, mime)] = saved(runtime.handle_function_call("mcp__media__sound", {}))

    assert (kind, mime) == ("audio", "audio/wav") and path.read_bytes() == FIXTURE.WAV


def test_invalid_or_oversized_media_from_a_server_become_a_reason_not_a_file(hermes, isolated_home):
    runtime = hermes({"media": media_server()}, tool_output={"max_media_bytes": 50_000})

    broken = runtime.handle_function_call("mcp__media__bad_image", {})
    huge = runtime.handle_function_call("mcp__media__huge_image", {})

    assert broken.startswith("broken\n") and "base64 data is not valid" in broken
    assert "not kept" in huge and "50000 byte limit" in huge
    assert saved(broken) == saved(huge) == [] and not (isolated_home / "results" / "media").exists()


def test_hermes_tools_call_saves_the_image_and_prints_its_path(isolated_home):
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"media": media_server()}}))

    result = subprocess.run([*support.hermes_command(), "tools", "call", "mcp__media__chart"], capture_output=True,
                            text=True, timeout=scaled_timeout(120),
                            env={**os.environ, "HERMES_HOME": str(isolated_home)})

    assert result.returncode == 0, result.stderr
    [(_, path, _)] = saved(result.stdout.strip())
    assert path.read_bytes() == FIXTURE.CHART and path.is_relative_to(isolated_home / "results" / "media")


def test_hermes_serving_a_servers_tool_passes_its_media_on_as_mcp_content(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"media": media_server()}}))

    async def main() -> tuple[Any, Any]:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        command = [*support.hermes_command(), "mcp", "serve"]
        params = StdioServerParameters(command=command[0], args=command[1:], env={"HERMES_HOME": str(home)})
        async with AsyncExitStack() as stack:
            errlog = stack.enter_context(open(tmp_path / "serve-stderr.log", "a"))  # noqa: SIM115
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            with anyio.fail_after(scaled_timeout(60)):
                await session.initialize()
                return (await session.call_tool("media__chart", {}), await session.call_tool("media__sound", {}))

    chart, sound = anyio.run(main)

    text, image = chart.content
    assert text.type == "text" and text.text.startswith("Sales by month")
    assert image.type == "image" and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == FIXTURE.CHART
    assert [block.type for block in sound.content] == ["text", "audio"]
    assert base64.b64decode(sound.content[1].data) == FIXTURE.WAV and sound.content[1].mime_type == "audio/wav"
    assert not json.dumps(text.text).count("base64")
