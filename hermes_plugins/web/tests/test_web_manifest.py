"""plugin.yaml: the declared tools and the code they point to agree."""

from __future__ import annotations

import importlib
import inspect
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
