"""The skills pack's plugin.yaml: Hermes Agent's tool names and argument shapes, valid schemas, honest annotations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

PACK = Path(__file__).resolve().parents[1]
#: Hermes Agent 0.19's arguments of each tool (tools/skills_tool.py, tools/skill_manager_tool.py), required first.
HERMES_AGENT_ARGUMENTS = {
    "skills_list": ([], ["category"]),
    "skill_view": (["name"], ["file_path"]),
    "skill_manage": (["action", "name"], ["content", "old_string", "new_string", "replace_all", "category",
                                          "file_path", "file_content", "absorbed_into"]),
}


@pytest.fixture(scope="module")
def tools() -> dict[str, dict[str, Any]]:
    manifest = yaml.safe_load((PACK / "hermes_plugin_skills" / "plugin.yaml").read_text(encoding="utf-8"))
    assert manifest["name"] == "skills"
    return {tool["name"]: tool for tool in manifest["tools"]}


def test_the_three_tools_take_hermes_agents_arguments(tools) -> None:
    assert {name: (tool["parameters"]["required"], sorted(tool["parameters"]["properties"]))
            for name, tool in tools.items()} == \
        {name: (required, sorted([*required, *optional])) for name, (required, optional) in
         HERMES_AGENT_ARGUMENTS.items()}
    assert tools["skill_manage"]["parameters"]["properties"]["action"]["enum"] == \
        ["create", "patch", "edit", "delete", "write_file", "remove_file"]


def test_parameters_are_valid_schemas_and_described(tools) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    for tool in tools.values():
        jsonschema.Draft202012Validator.check_schema(tool["parameters"])
        assert all(p.get("description") for p in tool["parameters"]["properties"].values()), tool["name"]


def test_reading_is_read_only_and_managing_is_a_write(tools) -> None:
    assert {name: (tool["annotations"]["read_only"], tool["parallel_safe"]) for name, tool in tools.items()} == {
        "skills_list": (True, True), "skill_view": (True, True), "skill_manage": (False, False)}
    assert tools["skill_manage"]["annotations"]["destructive"] is True
    assert {tool["toolset"] for tool in tools.values()} == {"skills"}
