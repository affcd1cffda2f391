"""The agent pack's plugin.yaml: names, toolsets, JSON Schemas and handlers."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

PACK = Path(__file__).resolve().parents[1]
TOOLSETS = {
    "todo": "todo",
    "memory": "memory",
    "session_search": "session_search",
    "delegate_task": "delegation",
    "clarify": "clarify",
    "spawn_agent": "subagents",
    "subagent_list": "subagents",
    "subagent_status": "subagents",
    "sessions_list": "sessions",
    "sessions_history": "sessions",
    "sessions_send": "sessions",
    "notify": "notify",
    "slash_command": "commands",
}
#: Each tool's handler: the state tools over the runtime's agent state, the others over its callbacks.
HANDLERS = {"todo": "hermes_plugin_agent.todo:todo", "memory": "hermes_plugin_agent.memory:memory",
            "session_search": "hermes_plugin_agent.session_search:session_search",
            "delegate_task": "hermes_plugin_agent.delegate:delegate_task",
            "clarify": "hermes_plugin_agent.clarify:clarify",
            **{name: f"hermes_plugin_agent.subagents:{name}" for name in ("spawn_agent", "subagent_list",
                                                                         "subagent_status")},
            **{name: f"hermes_plugin_agent.sessions:{name}" for name in ("sessions_list", "sessions_history",
                                                                        "sessions_send")},
            "notify": "hermes_plugin_agent.notify:notify",
            "slash_command": "hermes_plugin_agent.commands:slash_command"}


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    return yaml.safe_load((PACK / "hermes_plugin_agent" / "plugin.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def tools(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in manifest["tools"]}


@pytest.fixture(scope="module")
def validator_for(tools: dict[str, dict[str, Any]]):
    jsonschema = pytest.importorskip("jsonschema")
    return lambda name: jsonschema.Draft202012Validator(tools[name]["parameters"])


def test_manifest_is_a_yaml_mapping_named_agent(manifest) -> None:
    assert manifest["manifest_version"] == 1
    assert manifest["name"] == "agent"
    assert manifest["version"] == "0.2.0"


def test_tools_and_toolsets_are_as_listed(manifest, tools) -> None:
    assert len(manifest["tools"]) == len(tools)
    assert {name: tool["toolset"] for name, tool in tools.items()} == TOOLSETS


def test_parameters_are_valid_draft_2020_12_schemas(tools) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    for name, tool in tools.items():
        jsonschema.Draft202012Validator.check_schema(tool["parameters"])
        assert tool["parameters"]["type"] == "object", name


def test_every_tool_and_parameter_is_described(tools) -> None:
    for name, tool in tools.items():
        assert len(tool["description"]) > 80, name
        for param, schema in tool["parameters"]["properties"].items():
            assert schema.get("description"), f"{name}.{param} has no description"


def test_each_tool_goes_to_its_own_handler(tools) -> None:
    assert {name: tool["handler"] for name, tool in tools.items()} == HANDLERS
    for reference in HANDLERS.values():
        module, _, attr = reference.partition(":")
        assert callable(getattr(importlib.import_module(module), attr))


def test_clarify_is_not_parallel_safe(tools) -> None:
    assert tools["clarify"]["parallel_safe"] is False


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("todo", {}),
        ("todo", {"todos": [{"id": "1", "content": "Write tests", "status": "in_progress"}], "merge": True}),
        ("memory", {"action": "add", "target": "user", "content": "Prefers short answers"}),
        ("memory", {"target": "memory", "operations": [{"action": "remove", "old_text": "uv"},
                                                       {"action": "add", "content": "uses pip"}]}),
        ("session_search", {"query": "docker OR podman", "limit": 2, "sort": "newest", "role_filter": "user"}),
        ("session_search", {"session_id": "20260101_120000_abcdef", "around_message_id": 12, "window": 10}),
        ("session_search", {"session_id": "abc", "profile": "work"}),
        ("session_search", {}),
        ("delegate_task", {"goal": "Review hermes_core/calls/dispatch.py", "toolsets": ["file"]}),
        ("delegate_task", {"tasks": [{"goal": "Research A"}, {"goal": "Research B", "context": "..."}]}),
        ("clarify", {"question": "Which database?", "choices": ["sqlite", "postgres"]}),
    ],
)
def test_typical_calls_validate(validator_for, tool, args) -> None:
    assert not list(validator_for(tool).iter_errors(args))


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("todo", {"todos": [{"id": "1", "content": "x", "status": "done"}]}),
        ("memory", {"action": "add"}),
        ("memory", {"action": "forget", "target": "memory"}),
        ("memory", {"target": "user", "operations": [{"content": "no action"}]}),
        ("session_search", {"sort": "random"}),
        ("session_search", {"around_message_id": "twelve"}),
        ("delegate_task", {"tasks": [{"goal": "a"}, {"context": "no goal"}]}),
        ("delegate_task", {"goal": "a", "role": "boss"}),
        ("clarify", {"choices": ["a", "b"]}),
        ("clarify", {"question": "?", "choices": ["a", "b", "c", "d", "e"]}),
    ],
)
def test_malformed_calls_are_rejected_by_the_schema(validator_for, tool, args) -> None:
    assert list(validator_for(tool).iter_errors(args))


def test_distribution_ships_the_manifest_under_its_entry_point() -> None:
    project = tomllib.loads((PACK / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["entry-points"]["hermes_agent.plugins"] == {"agent": "hermes_plugin_agent"}
    # hatchling ships every file of the package, plugin.yaml included
    assert project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["hermes_plugin_agent"]


def test_manifest_loads_with_the_core_model_without_warnings() -> None:
    from hermes_core.plugins.manifest import load_manifest

    loaded = load_manifest(PACK / "hermes_plugin_agent" / "plugin.yaml")

    assert loaded.name == "agent"
    assert not loaded.model_extra
