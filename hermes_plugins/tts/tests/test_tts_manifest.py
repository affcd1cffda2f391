"""plugin.yaml: the declared tool, its annotations and the code it points to agree; the check every listing runs
imports nothing of the call path."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import hermes_plugin_tts
import yaml

MANIFEST = yaml.safe_load((Path(hermes_plugin_tts.__file__).parent / "plugin.yaml").read_text(encoding="utf-8"))


def resolve(reference: str) -> object:
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


def test_text_to_speech_is_declared_with_hermes_agents_toolset_and_arguments() -> None:
    [tool] = MANIFEST["tools"]
    assert (MANIFEST["name"], tool["name"], tool["toolset"]) == ("tts", "text_to_speech", "tts")
    assert set(tool["parameters"]["properties"]) == {"text", "output_path"} and tool["parameters"]["required"] == [
        "text"]
    assert tool["path_args"] == ["output_path"]


def test_it_says_it_writes_files() -> None:
    [tool] = MANIFEST["tools"]
    assert tool["annotations"] == {"read_only": False, "destructive": False, "idempotent": False, "open_world": True}


def test_the_references_resolve_to_functions_of_the_right_shape() -> None:
    [tool] = MANIFEST["tools"]
    assert list(inspect.signature(resolve(tool["handler"])).parameters) == ["args", "kwargs"]
    assert not inspect.signature(resolve(tool["check_fn"])).parameters


def test_the_check_imports_neither_httpx_nor_subprocess() -> None:
    code = ("import json, sys; import hermes_plugin_tts.check; "
            "print(json.dumps([m for m in sys.modules if m.startswith(('httpx', 'subprocess', 'edge_tts', 'piper'))]))")
    pack = str(Path(hermes_plugin_tts.__file__).parent.parent)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONPATH": pack})
    assert json.loads(result.stdout) == []
