"""plugin.yaml: the declared tools, their annotations and the code they point to agree; the checks every listing
runs import nothing of the call path."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import hermes_plugin_vision
import yaml

MANIFEST = yaml.safe_load((Path(hermes_plugin_vision.__file__).parent / "plugin.yaml").read_text(encoding="utf-8"))


def resolve(reference: str) -> object:
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


def test_the_tools_are_declared_in_hermes_agents_toolsets_read_only_and_open_world() -> None:
    assert MANIFEST["name"] == "vision"
    assert {tool["name"]: tool["toolset"] for tool in MANIFEST["tools"]} == {"vision_analyze": "vision",
                                                                             "video_analyze": "video"}
    assert all(tool["annotations"] == {"read_only": True, "open_world": True} for tool in MANIFEST["tools"])


def test_the_arguments_are_hermes_agents() -> None:
    parameters = {tool["name"]: tool["parameters"] for tool in MANIFEST["tools"]}
    assert parameters["vision_analyze"]["required"] == ["image_url", "question"]
    assert parameters["video_analyze"]["required"] == ["video_url", "question"]


def test_every_reference_resolves_to_a_function_of_the_right_shape() -> None:
    for tool in MANIFEST["tools"]:
        assert list(inspect.signature(resolve(tool["handler"])).parameters) == ["args", "kwargs"], tool["name"]
        assert not inspect.signature(resolve(tool["check_fn"])).parameters, tool["name"]


def test_the_checks_import_neither_httpx_nor_the_web_pack() -> None:
    code = ("import json, sys; import hermes_plugin_vision.check; "
            "print(json.dumps([m for m in sys.modules if m.startswith(('httpx', 'hermes_plugin_web', "
            "'hermes_plugin_vision.sources', 'subprocess'))]))")
    pack = str(Path(hermes_plugin_vision.__file__).parent.parent)  # the tests import the pack from its source folder
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONPATH": pack})
    assert json.loads(result.stdout) == []
