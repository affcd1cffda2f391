"""Who vision_analyze asks, in the issue's order: the host's model callback, then the MCP client's sampling under
``hermes mcp serve``, then the configured ``auxiliary.vision`` endpoint; each gets the image itself (the same
pixels) with the question."""

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
import hermes_plugin_vision
import pytest

from hermes_core import ModelRequest, Runtime
from hermes_core.authoring.testing import png_image, scaled_timeout

RED = png_image(4, 3, (255, 0, 0))


def images_of(request: ModelRequest) -> list[bytes]:
    return [base64.b64decode(part["image_url"]["url"].partition(",")[2])
            for message in request.messages for part in message["content"] if part["type"] == "image_url"]


def test_the_hosts_model_callback_is_asked_before_the_configured_endpoint(hermes_runtime: Runtime, vision,
                                                                        vision_model, hermes_workspace: Path):
    (hermes_workspace / "chart.png").write_bytes(RED)
    asked: list[ModelRequest] = []

    def host_model(request: ModelRequest) -> str:
        asked.append(request)
        return "The host's model sees red."

    hermes_runtime.set_model_callback(host_model)
    answer = vision("vision_analyze", image_url="chart.png", question="What colour is it?")

    assert answer == {"success": True, "analysis": "The host's model sees red."}
    assert images_of(asked[0]) == [RED]
    assert asked[0].messages[0]["content"][0]["text"].endswith("What colour is it?")
    assert asked[0].purpose == "vision"
    assert vision_model.asked == []  # the endpoint was not asked


def test_a_host_model_alone_makes_the_tool_available(hermes_runtime: Runtime, vision, vision_config,
                                                     hermes_workspace: Path):
    vision_config(model=False)
    hermes_runtime.set_model_callback(lambda request: "seen")
    (hermes_workspace / "chart.png").write_bytes(RED)

    names = {d["function"]["name"] for d in hermes_runtime.get_tool_definitions(quiet_mode=True)}

    assert "vision_analyze" in names
    assert vision("vision_analyze", image_url="chart.png", question="?") == {"success": True, "analysis": "seen"}


def test_a_failing_host_model_is_an_error_saying_so(hermes_runtime: Runtime, vision, vision_model,
                                                    hermes_workspace: Path):
    (hermes_workspace / "chart.png").write_bytes(RED)

    def broken(request: ModelRequest) -> str:
        raise ConnectionError("the host's model is down")

    hermes_runtime.set_model_callback(broken)
    answer = vision("vision_analyze", image_url="chart.png", question="?")

    assert answer["success"] is False and "the host's model is down" in answer["error"]
    assert vision_model.asked == []


# -- under hermes mcp serve: the client's sampling ---------------------------------------------------------------


def served_call(home: Path, workspace: Path, arguments: dict[str, Any], **callbacks: Any) -> Any:
    """Call vision_analyze through ``hermes mcp serve`` (stdio) with the SDK's own client and ``callbacks``."""
    import hermes_plugin_web  # the vision pack fetches through the web pack's address guard
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    packs = [str(Path(module.__file__).parent.parent) for module in (hermes_plugin_vision, hermes_plugin_web)]
    script = Path(sys.executable).parent / "hermes"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "hermes_core.cli"]
    params = StdioServerParameters(command=command[0], args=[*command[1:], "mcp", "serve", "--workspace",
                                                             str(workspace)],
                                   env={**os.environ, "HERMES_HOME": str(home),
                                        "PYTHONPATH": os.pathsep.join([*packs, os.environ.get("PYTHONPATH", "")])})

    async def main() -> Any:
        async with AsyncExitStack() as stack:
            errlog = stack.enter_context(open(home / "serve-stderr.log", "a"))  # noqa: SIM115
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write, **callbacks))
            with anyio.fail_after(scaled_timeout(60)):
                await session.initialize()
                return await session.call_tool("vision_analyze", arguments)

    return anyio.run(main)


@pytest.fixture
def served_home(tmp_path: Path) -> tuple[Path, Path]:
    """A home with the vision pack as a user plugin (its manifest; its code on PYTHONPATH) and no vision model
    configured, and a workspace holding a red PNG."""
    home, workspace = tmp_path / "home", tmp_path / "workspace"
    plugin = home / "plugins" / "vision"
    plugin.mkdir(parents=True)
    workspace.mkdir()
    shutil.copy(Path(hermes_plugin_vision.__file__).parent / "plugin.yaml", plugin / "plugin.yaml")
    (workspace / "chart.png").write_bytes(RED)
    return home, workspace


def test_served_the_clients_sampling_sees_the_image_and_answers(served_home: tuple[Path, Path]):
    import mcp.types as types

    home, workspace = served_home
    requests: list[types.CreateMessageRequestParams] = []

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> Any:
        requests.append(params)
        return types.CreateMessageResultWithTools(role="assistant", model="client-vision", stop_reason="endTurn",
                                                  content=[types.TextContent(text="The client's model sees red.")])

    result = served_call(home, workspace, {"image_url": "chart.png", "question": "What colour is it?"},
                         sampling_callback=sample,
                         sampling_capabilities=types.SamplingCapability(tools=types.SamplingToolsCapability()))

    assert not result.is_error, result.content
    assert json.loads(result.content[0].text) == {"success": True, "analysis": "The client's model sees red."}
    [request] = requests
    blocks = request.messages[0].content_as_list
    [image] = [block for block in blocks if isinstance(block, types.ImageContent)]
    assert image.mime_type == "image/png" and base64.b64decode(image.data) == RED
    assert any(isinstance(block, types.TextContent) and block.text.endswith("What colour is it?")
               for block in blocks)


def test_served_without_sampling_or_an_endpoint_the_tool_says_what_to_set(served_home: tuple[Path, Path]):
    home, workspace = served_home

    result = served_call(home, workspace, {"image_url": "chart.png", "question": "?"})

    answer = json.loads(result.content[0].text)
    assert answer["success"] is False
    assert "did not declare the sampling capability" in answer["error"]
    assert "auxiliary.vision.base_url" in answer["error"]
