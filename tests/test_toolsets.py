"""Toolsets: legacy names, presets, composites, aliases, enable/disable filtering and cycles."""

from __future__ import annotations

import json
import logging

import pytest

from hermes_core import LEGACY_TOOLSETS, Runtime, Toolset
from hermes_core.errors import ToolsetCycleError, UnknownToolsetError

ALL_LEGACY_TOOLS = sorted({tool for tools in LEGACY_TOOLSETS.values() for tool in tools})


@pytest.fixture
def runtime() -> Runtime:
    """Every legacy tool registered in a toolset of its own kind, plus one unrelated tool."""
    runtime = Runtime()
    for legacy, tools in LEGACY_TOOLSETS.items():
        for tool in tools:
            runtime.register_tool(tool, legacy.removesuffix("_tools"), {"description": tool},
                                  lambda args, **kw: "ok")
    runtime.register_tool("other", "misc", {"description": "other"}, lambda args, **kw: "ok")
    return runtime


def names(definitions) -> set[str]:
    return {d["function"]["name"] for d in definitions}


@pytest.mark.parametrize("legacy", sorted(LEGACY_TOOLSETS))
def test_legacy_name_enables_exactly_its_tools(runtime, legacy):
    assert names(runtime.get_tool_definitions(enabled_toolsets=[legacy])) == set(LEGACY_TOOLSETS[legacy])


@pytest.mark.parametrize("legacy", sorted(LEGACY_TOOLSETS))
def test_legacy_name_disables_exactly_its_tools(runtime, legacy):
    expected = set(ALL_LEGACY_TOOLS) - set(LEGACY_TOOLSETS[legacy]) | {"other"}
    assert names(runtime.get_tool_definitions(disabled_toolsets=[legacy])) == expected


def test_disabled_is_subtracted_after_enabled(runtime):
    selected = runtime.get_tool_definitions(enabled_toolsets=["file_tools", "web"], disabled_toolsets=["file"])
    assert names(selected) == {"web_search", "web_extract"}


def test_neither_means_all(runtime):
    assert names(runtime.get_tool_definitions()) == set(ALL_LEGACY_TOOLS) | {"other"}


@pytest.mark.parametrize("spelling", ["all", "*"])
def test_all_and_star_select_everything(runtime, spelling):
    assert names(runtime.get_tool_definitions(enabled_toolsets=[spelling])) == set(ALL_LEGACY_TOOLS) | {"other"}


def test_unknown_toolset_is_reported(runtime, caplog):
    with caplog.at_level(logging.WARNING, logger="hermes_core"):
        selected = runtime.get_tool_definitions(enabled_toolsets=["web", "no_such_toolset"])
    assert names(selected) == {"web_search", "web_extract"}
    assert "no_such_toolset" in caplog.text


def test_unknown_toolset_is_silent_in_quiet_mode(runtime, caplog):
    with caplog.at_level(logging.WARNING, logger="hermes_core"):
        runtime.get_tool_definitions(enabled_toolsets=["no_such_toolset"], quiet_mode=True)
    assert "no_such_toolset" not in caplog.text


def test_resolve_unknown_raises(runtime):
    with pytest.raises(UnknownToolsetError, match="nope"):
        runtime.resolve_toolset("nope")


def test_composite_includes_expand(runtime):
    runtime.toolsets.define(Toolset("research", tools=("other",), includes=("web", "vision_tools")))
    assert set(runtime.resolve_toolset("research")) == {"other", "web_search", "web_extract", "vision_analyze"}


def test_include_cycle_names_the_cycle(runtime):
    runtime.toolsets.define(Toolset("a", includes=("b",)))
    runtime.toolsets.define(Toolset("b", includes=("c",)))
    runtime.toolsets.define(Toolset("c", includes=("a",)))
    with pytest.raises(ToolsetCycleError, match="a -> b -> c -> a"):
        runtime.resolve_toolset("a")


def test_self_include_is_a_cycle(runtime):
    runtime.toolsets.define(Toolset("loop", includes=("loop",)))
    with pytest.raises(ToolsetCycleError, match="loop -> loop"):
        runtime.resolve_toolset("loop")


def test_include_of_an_uninstalled_toolset_contributes_nothing(runtime):
    runtime.toolsets.define(Toolset("mix", tools=("other",), includes=("not_installed",)))
    assert runtime.resolve_toolset("mix") == ["other"]


def test_presets_resolve_over_installed_tools(runtime):
    cli = set(runtime.resolve_toolset("hermes-cli"))
    assert cli == set(ALL_LEGACY_TOOLS)  # every installed core tool, and not the unrelated one
    assert "clarify" not in runtime.resolve_toolset("hermes-acp")
    assert set(runtime.resolve_toolset("hermes-telegram")) == cli
    assert set(runtime.resolve_toolset("hermes-gateway")) == cli


def test_preset_is_empty_when_nothing_is_installed():
    assert Runtime().resolve_toolset("hermes-cli") == []


def test_alias_resolves_to_its_target(runtime):
    runtime.register_tool("mcp__srv__x", "mcp-srv", {"description": "x"}, lambda a, **k: "ok")
    runtime.toolsets.add_alias("srv", "mcp-srv", source="mcp:srv")
    assert runtime.resolve_toolset("srv") == ["mcp__srv__x"]
    runtime.toolsets.remove_source("mcp:srv")
    with pytest.raises(UnknownToolsetError):
        runtime.resolve_toolset("srv")


def test_legacy_names_that_map_to_a_toolset(runtime):
    assert runtime.toolsets.legacy_names_for("file") == ["file_tools"]


def test_schemas_mentioning_filtered_tools_are_patched(runtime):
    runtime.register_tool("navigator", "nav", {"description": "Open a page. Prefer web_extract for plain text."},
                          lambda a, **k: "ok")
    full = {d["function"]["name"]: d for d in runtime.get_tool_definitions()}
    assert "web_extract" in full["navigator"]["function"]["description"]
    filtered = {d["function"]["name"]: d for d in runtime.get_tool_definitions(disabled_toolsets=["web"])}
    assert filtered["navigator"]["function"]["description"] == "Open a page."


def test_execute_code_lists_only_surviving_tools(runtime):
    runtime.register_tool("execute_code", "code_execution", {"description": "Run Python."}, lambda a, **k: "ok")
    [definition] = [d for d in runtime.get_tool_definitions(enabled_toolsets=["code_execution", "web"])
                    if d["function"]["name"] == "execute_code"]
    description = definition["function"]["description"]
    assert "web_search" in description and "web_extract" in description and "read_file" not in description


def test_hermes_cli_holds_no_tool_that_is_not_shipped_and_each_has_its_reason():
    from hermes_core.tools.toolsets import NOT_SHIPPED, PRESETS

    assert len(PRESETS["hermes-cli"].tools) == 39
    assert not set(PRESETS["hermes-cli"].tools) & set(NOT_SHIPPED)
    assert "ha_get_state" in PRESETS["hermes-cli"].tools  # hermes-tools-homeassistant
    assert {"kanban_show", "computer_use"} <= set(PRESETS["hermes-cli"].omitted)
    assert all(reason for reason in NOT_SHIPPED.values())


def test_hermes_agents_general_names_resolve_as_it_defines_them(runtime):
    assert runtime.resolve_toolset("search") == ["web_search"]
    assert "web_search" in runtime.resolve_toolset("browser")  # Hermes Agent's browser toolset finds URLs too
    assert set(runtime.resolve_toolset("safe")) == {"web_search", "web_extract", "vision_analyze", "image_generate"}
    assert runtime.resolve_toolset("kanban") == [] and runtime.toolsets.is_known("kanban")


def test_a_platform_preset_is_the_general_tools_and_says_what_it_leaves_out(runtime):
    assert set(runtime.resolve_toolset("hermes-discord")) == set(runtime.resolve_toolset("hermes-cli"))

    left_out = runtime.toolsets.left_out("hermes-discord")

    assert left_out["discord"].startswith("not shipped: a tool of Hermes Agent's messaging gateway")
    assert left_out["process"] == "not installed: no installed plugin provides it"
    assert "terminal" not in left_out and runtime.toolsets.left_out("misc") == {}


def test_toolsets_show_lists_what_is_left_out_and_why(isolated_home):
    from click.testing import CliRunner

    from hermes_core.cli import cli

    shown = CliRunner().invoke(cli, ["toolsets", "show", "hermes-discord"]).output
    as_json = json.loads(CliRunner().invoke(cli, ["toolsets", "show", "hermes-discord", "--json"]).output)

    assert "left out (54 of Hermes Agent's tools):" in shown
    assert "    discord, discord_admin: not shipped: a tool of Hermes Agent's messaging gateway" in shown
    assert as_json["kind"] == "preset" and as_json["tools"] == []
    assert as_json["left_out"]["computer_use"].startswith("not shipped: desktop control")


# -- the media packs ------------------------------------------------------------------------------------------

MEDIA_PACKS = (("hermes_plugin_vision", "vision"), ("hermes_plugin_image", "image"), ("hermes_plugin_tts", "tts"))
#: Each pack's backend configured (none is asked: only availability matters here).
MEDIA_CONFIG = {"auxiliary": {"vision": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": "k"}},
                "image_gen": {"provider": "openai", "openai": {"api_key": "k"}},
                "tts": {"provider": "openai", "openai": {"api_key": "k"}}}


def test_the_legacy_media_names_select_the_three_packs_tools(pack_runtime):
    runtime = pack_runtime(MEDIA_CONFIG, *MEDIA_PACKS)

    definitions = runtime.get_tool_definitions(enabled_toolsets=["vision_tools", "image_tools", "tts_tools"])

    assert {d["function"]["name"] for d in definitions} == {"vision_analyze", "image_generate", "text_to_speech"}


@pytest.mark.parametrize(("toolset", "tools"), [("vision", ["vision_analyze"]), ("video", ["video_analyze"]),
                                                ("image_gen", ["image_generate"]), ("tts", ["text_to_speech"])])
def test_hermes_agents_media_toolset_names_resolve(pack_runtime, toolset, tools):
    assert pack_runtime(MEDIA_CONFIG, *MEDIA_PACKS).resolve_toolset(toolset) == tools
