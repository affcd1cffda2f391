"""plugin.yaml: Hermes Agent's names and argument shapes, the annotations, and listing without Playwright."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import hermes_plugin_browser
import yaml

from .conftest import scaled

MANIFEST = yaml.safe_load((Path(hermes_plugin_browser.__file__).parent / "plugin.yaml").read_text(encoding="utf-8"))
TOOLS = {tool["name"]: tool for tool in MANIFEST["tools"]}
#: Hermes Agent 0.19's browser tools: each one's properties (name: type) and required arguments.
HERMES_AGENT_SHAPES = {
    "browser_navigate": ({"url": "string"}, ["url"]),
    "browser_snapshot": ({"full": "boolean"}, []),
    "browser_click": ({"ref": "string"}, ["ref"]),
    "browser_type": ({"ref": "string", "text": "string"}, ["ref", "text"]),
    "browser_scroll": ({"direction": "string"}, ["direction"]),
    "browser_back": ({}, []),
    "browser_press": ({"key": "string"}, ["key"]),
    "browser_get_images": ({}, []),
    "browser_vision": ({"question": "string", "annotate": "boolean"}, ["question"]),
    "browser_console": ({"clear": "boolean", "expression": "string"}, []),
    "browser_cdp": ({"method": "string", "params": "object", "target_id": "string", "frame_id": "string",
                     "timeout": "number"}, ["method"]),
    "browser_dialog": ({"action": "string", "prompt_text": "string", "dialog_id": "string"}, ["action"]),
}


def test_the_tools_have_hermes_agents_names_and_argument_shapes() -> None:
    assert {tool["toolset"] for tool in TOOLS.values()} == {"browser"}
    shapes = {name: ({key: value["type"] for key, value in tool["parameters"]["properties"].items()},
                     tool["parameters"].get("required", [])) for name, tool in TOOLS.items()}
    assert shapes == HERMES_AGENT_SHAPES
    assert TOOLS["browser_scroll"]["parameters"]["properties"]["direction"]["enum"] == ["up", "down"]
    assert TOOLS["browser_dialog"]["parameters"]["properties"]["action"]["enum"] == ["accept", "dismiss"]


def test_annotations_say_what_each_tool_may_do() -> None:
    annotations = {name: tool["annotations"] for name, tool in TOOLS.items()}
    for name in ("browser_navigate", "browser_click", "browser_type", "browser_press"):
        assert annotations[name]["read_only"] is False and annotations[name]["open_world"] is True, name
    for name in ("browser_snapshot", "browser_get_images", "browser_console"):
        assert annotations[name]["read_only"] is True, name
    assert annotations["browser_console"]["destructive_if"] == ["expression"]  # it runs JavaScript in the page
    assert annotations["browser_cdp"]["destructive"] is True  # raw protocol commands: anything the page allows


def test_every_reference_resolves_to_a_function_of_the_right_shape() -> None:
    for tool in TOOLS.values():
        module, _, attribute = tool["handler"].partition(":")
        handler = getattr(importlib.import_module(module), attribute)
        assert list(inspect.signature(handler).parameters) == ["args", "kwargs"], tool["name"]
        module, _, attribute = tool["check_fn"].partition(":")
        assert not inspect.signature(getattr(importlib.import_module(module), attribute)).parameters


def test_listing_the_tools_imports_neither_playwright_nor_the_handlers(tmp_path) -> None:
    code = """if True:
        import json, sys
        from hermes_core import Runtime
        from hermes_core.plugins.discovery import candidate_from_module
        runtime = Runtime(home=sys.argv[1], entry_points=())
        runtime.load_candidate(candidate_from_module("hermes_plugin_browser"))
        names = [d["function"]["name"] for d in runtime.get_tool_definitions(enabled_toolsets=["browser_tools"])]
        loaded = [m for m in sys.modules if m.startswith(("playwright", "hermes_plugin_browser.tools"))]
        print(json.dumps([len(names), loaded]))
    """
    pack = str(Path(hermes_plugin_browser.__file__).parent.parent)
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONPATH": pack}, timeout=scaled(120))
    count, loaded = json.loads(result.stdout.splitlines()[-1])
    assert loaded == []
    installed = any(shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome"))
    assert count == (10 if installed else 0)  # the legacy name's ten
