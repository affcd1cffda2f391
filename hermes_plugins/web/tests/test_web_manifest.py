"""plugin.yaml: the declared tools and the code they point to agree."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import hermes_plugin_web
import yaml

MANIFEST = yaml.safe_load(
    (Path(hermes_plugin_web.__file__).parent / "plugin.yaml").read_text(encoding="utf-8")
)


def resolve(reference: str) -> object:
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


def test_both_tools_are_declared_in_the_web_toolset() -> None:
    assert MANIFEST["name"] == "web"
    assert {tool["name"]: tool["toolset"] for tool in MANIFEST["tools"]} == {
        "web_extract": "web",
        "web_search": "web",
    }


def test_every_reference_resolves_to_a_function_of_the_right_shape() -> None:
    for tool in MANIFEST["tools"]:
        handler = resolve(tool["handler"])
        assert list(inspect.signature(handler).parameters) == ["args", "kwargs"], tool["name"]
        if "check_fn" in tool:
            assert not inspect.signature(resolve(tool["check_fn"])).parameters, tool["name"]


def test_only_web_search_depends_on_configuration() -> None:
    checks = {tool["name"]: tool.get("check_fn") for tool in MANIFEST["tools"]}
    assert checks == {"web_extract": None, "web_search": "hermes_plugin_web.search:search_available"}


def test_the_check_that_lists_tools_imports_neither_the_call_path_nor_html() -> None:
    """``hermes tools list`` runs ``search_available``: importing its module costs every listing."""
    code = ("import json, sys; import hermes_plugin_web.search; "
            "print(json.dumps([m for m in sys.modules if m in ('html', 'httpx', 'hermes_core.calls.dispatch')]))")
    pack = str(Path(hermes_plugin_web.__file__).parent.parent)  # the tests import the pack from its source folder
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONPATH": pack})
    assert json.loads(result.stdout) == []
