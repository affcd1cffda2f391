"""The file pack's plugin.yaml: tools, handlers, parallel safety, path arguments and result budget."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

PACK = Path(__file__).resolve().parents[1]
TOOLS = ("read_file", "write_file", "patch", "search_files")


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    return yaml.safe_load((PACK / "hermes_plugin_file" / "plugin.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def tools(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in manifest["tools"]}


def test_declares_the_four_file_tools_in_toolset_file(manifest, tools) -> None:
    assert manifest["name"] == "file"
    assert tuple(tools) == TOOLS
    assert {tool["toolset"] for tool in tools.values()} == {"file"}


def test_handlers_import_as_callables(tools) -> None:
    for tool in tools.values():
        module, _, attr = tool["handler"].partition(":")
        assert callable(getattr(importlib.import_module(module), attr)), tool["name"]


def test_parameters_are_valid_json_schemas(tools) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    for tool in tools.values():
        jsonschema.Draft202012Validator.check_schema(tool["parameters"])
        assert tool["parameters"]["type"] == "object"
        for name, prop in tool["parameters"]["properties"].items():
            assert prop.get("description"), f"{tool['name']}.{name} has no description"


def test_only_read_and_search_are_parallel_safe(tools) -> None:
    assert {name for name, tool in tools.items() if tool["parallel_safe"]} == {"read_file", "search_files"}


def test_every_path_argument_is_declared(tools) -> None:
    for tool in tools.values():
        assert tool["path_args"] == ["path"]
        assert "path" in tool["parameters"]["properties"]


def test_read_file_result_budget_is_unlimited(tools) -> None:
    assert "max_result_size_chars" in tools["read_file"]
    assert tools["read_file"]["max_result_size_chars"] == "unlimited"


def test_distribution_ships_the_manifest_under_its_entry_point() -> None:
    project = tomllib.loads((PACK / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["entry-points"]["hermes_agent.plugins"] == {"file": "hermes_plugin_file"}
    # hatchling ships every file of the package, plugin.yaml included
    assert project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["hermes_plugin_file"]


def test_manifest_loads_with_the_core_model_without_warnings() -> None:
    from hermes_core.plugins.manifest import load_manifest

    loaded = load_manifest(PACK / "hermes_plugin_file" / "plugin.yaml")

    assert loaded.name == "file"
    assert not loaded.model_extra
