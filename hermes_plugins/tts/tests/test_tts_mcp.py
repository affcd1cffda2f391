"""text_to_speech under ``hermes mcp serve``: the MCP SDK's client receives the speech as AudioContent beside the
answer's text."""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import hermes_plugin_tts
import pytest

from hermes_core.authoring.testing import scaled_timeout
from hermes_core.plugin import media_info


def served_call(home: Path, tool: str, arguments: dict[str, Any]) -> Any:
    """Call ``tool`` through ``hermes mcp serve`` (stdio) with the SDK's own client."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    pack = str(Path(hermes_plugin_tts.__file__).parent.parent)
    script = Path(sys.executable).parent / "hermes"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "hermes_core.cli"]
    params = StdioServerParameters(command=command[0], args=[*command[1:], "mcp", "serve"],
                                   env={**os.environ, "HERMES_HOME": str(home),
                                        "PYTHONPATH": os.pathsep.join([pack, os.environ.get("PYTHONPATH", "")])})

    async def main() -> Any:
        async with AsyncExitStack() as stack:
            errlog = stack.enter_context(open(home / "serve-stderr.log", "a"))  # noqa: SIM115
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            with anyio.fail_after(scaled_timeout(60)):
                await session.initialize()
                return await session.call_tool(tool, arguments)

    return anyio.run(main)


def test_the_sdk_client_receives_audio_content(tmp_path: Path):
    if not (shutil.which("espeak-ng") and shutil.which("ffmpeg")):
        pytest.skip("espeak-ng and ffmpeg are not installed (apt-get install espeak-ng ffmpeg); .ci/run installs them")
    home = tmp_path / "home"
    plugin = home / "plugins" / "tts"
    plugin.mkdir(parents=True)  # the pack as a user plugin: its manifest, its code on PYTHONPATH
    shutil.copy(Path(hermes_plugin_tts.__file__).parent / "plugin.yaml", plugin / "plugin.yaml")

    result = served_call(home, "text_to_speech", {"text": "Served over MCP."})

    text, audio = result.content
    answer = json.loads(text.text.split("\n")[0])
    assert not result.is_error and answer["success"] is True and answer["provider"] == "espeak"
    assert audio.type == "audio" and audio.mime_type == "audio/ogg"
    data = base64.b64decode(audio.data)
    assert data == Path(answer["file_path"]).read_bytes() and media_info(data).mime_type == "audio/ogg"
