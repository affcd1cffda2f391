"""config.yaml: defaults, typed loading, one clear message for a bad file, comment-preserving edits."""

from __future__ import annotations

import json

import pytest

from hermes_core import ConfigError, HermesHome, hermes_home
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.config.data import ENTRY_KEYS, PLUGINS_KEYS, override_granted, plugin_settings
from hermes_core.config.model import PluginEntryConfig, PluginsConfig


@pytest.fixture
def home(isolated_home) -> HermesHome:
    return HermesHome(isolated_home)


def test_hermes_home_defaults_to_dot_hermes(monkeypatch, tmp_path):
    monkeypatch.delenv("HERMES_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert hermes_home() == tmp_path / ".hermes"


def test_missing_file_means_defaults(home):
    config = home.config()
    assert config.plugins.hook_timeout == 30 and config.plugins.enabled is None
    assert config.tool_output.max_result_size_chars == 100_000 and not config.web.allow_private_networks


def test_values_and_unknown_top_level_keys(home):
    home.config_file.write_text(
        "plugins:\n  disabled: [x]\n  entries:\n    web: {settings: {timeout: 5}}\nmy_plugin: {colour: blue}\n")
    config = home.config()
    assert config.plugins.disabled == ["x"] and config.model_extra == {"my_plugin": {"colour": "blue"}}
    assert config.plugin_settings("web") == {"timeout": 5} and config.plugin_settings("other") == {}


def test_plugin_entries_take_hermes_agent_style_keys_beside_ours(home):
    home.config_file.write_text("plugins:\n  entries:\n    hermes-tenuo: {require_warrant: true, endpoint: x,\n"
                                "      settings: {endpoint: y}, allow_tool_override: true}\n")
    config = home.config()
    expected = {"require_warrant": True, "endpoint": "y"}
    assert config.plugin_settings("hermes-tenuo") == expected and config.plugin_settings("other") == {}
    data = home.config_data()  # the same, as the plain data start-up paths and tool contexts read
    assert plugin_settings(data, "hermes-tenuo") == expected and plugin_settings(data, "other") == {}
    assert override_granted(data, "hermes-tenuo") and not override_granted(data, "other")
    assert set(PluginEntryConfig.model_fields) == ENTRY_KEYS


def test_invalid_value_names_file_line_and_key(home):
    path = home.config_file
    path.write_text("web:\n  allow_private_networks: true\nplugins:\n  hook_timeout: soon\n")
    with pytest.raises(ConfigError) as info:
        home.config()
    assert str(info.value).startswith(f"{path}:4: plugins.hook_timeout: ")


def test_unknown_nested_key_is_an_error(home):
    home.config_file.write_text("plugins:\n  disabeld: [x]\n")
    with pytest.raises(ConfigError, match=r"config.yaml:2: plugins.disabeld: Value error, not a setting of Hermes "
                                          r"\(enabled, disabled, entries, .*\); a plugin's own settings block"):
        home.config()
    home.config_file.write_text("approvals:\n  mod: ask\n")
    with pytest.raises(ConfigError, match=r"config.yaml:2: approvals.mod: Extra inputs are not permitted"):
        home.config()


def test_plugin_settings_blocks_in_hermes_agents_layout(home):
    """``plugins.<id>:`` (as psy-core-hermes and agentmetrics-hermes document) is the plugin's settings block, kept
    in the dump the compat ``load_config`` returns; ``plugins.entries.<id>`` wins where both set a key."""
    home.config_file.write_text("# mine\nplugins:\n  enabled: [psy]\n  psy:\n    actor_id: a@b.c\n    mode: x\n"
                                "  empty:\n  entries:\n    psy: {mode: y}\n")
    config = home.config()
    assert config.plugins.enabled == ["psy"]
    assert config.plugin_settings("psy") == {"actor_id": "a@b.c", "mode": "y"} and config.plugin_settings("empty") == {}
    dumped = config.model_dump(mode="json")["plugins"]
    assert dumped["psy"] == {"actor_id": "a@b.c", "mode": "x"}
    data = home.config_data()
    assert plugin_settings(data, "psy") == {"actor_id": "a@b.c", "mode": "y"} and plugin_settings(data, "enabled") == {}
    assert set(PluginsConfig.model_fields) == PLUGINS_KEYS


def test_invalid_yaml_names_the_line(home):
    home.config_file.write_text("plugins:\n  disabled: [x\n")
    with pytest.raises(ConfigError, match=r"config.yaml:\d+: invalid YAML"):
        home.config()


def test_cached_data_of_another_text_under_the_same_name_is_not_used(home):
    """The config cache's file name is only a checksum: a cache file holding another text (a collision) is a miss."""
    from hermes_core.config import data as configdata

    home.config_file.write_text("plugins:\n  hook_timeout: 5\n")
    assert home.config_data()["plugins"]["hook_timeout"] == 5
    [cache_file] = home.cache_dir.glob("config-*.json")
    stored = json.loads(cache_file.read_text())
    planted = {**stored["data"], "plugins": {**stored["data"]["plugins"], "hook_timeout": 99}}
    cache_file.write_text(json.dumps({"key": [*stored["key"][:2], "plugins: {hook_timeout: 99}\n"], "data": planted}))
    configdata._memo.clear()  # a fresh process
    assert home.config_data()["plugins"]["hook_timeout"] == 5
    assert json.loads(cache_file.read_text())["key"] == stored["key"]  # validated again and rewritten


def test_edits_keep_comments_and_order(home):
    path = home.config_file
    path.write_text("# my settings\nweb:\n  allow_private_networks: false  # keep me\nplugins:\n  disabled: [a]\n")
    home.edit_config(lambda doc: doc["plugins"]["disabled"].append("b"))
    text = path.read_text()
    assert "# my settings" in text and "# keep me" in text
    assert text.index("web:") < text.index("plugins:")
    assert home.config().plugins.disabled == ["a", "b"]


def test_edit_that_makes_the_file_invalid_is_refused_and_nothing_is_written(home):
    path = home.config_file
    path.write_text("plugins:\n  hook_timeout: 5\n")
    with pytest.raises(ConfigError, match="hook_timeout"):
        home.edit_config(lambda doc: doc["plugins"].update({"hook_timeout": "never"}))
    assert path.read_text() == "plugins:\n  hook_timeout: 5\n"


def test_unwritable_config_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="cannot write the configuration"):
        HermesHome(blocker / "home").edit_config(lambda doc: doc.update({"command_allowlist": ["x"]}))


# -- comment-preserving edits: every comment position survives a disable followed by an enable ----------------

COMMENTED_CONFIGS = {
    "eol after an empty flow list": "plugins:\n  disabled: []  # note\n",
    "eol after a flow list": "plugins:\n  disabled: [a]  # keep a off\n",
    "eol after the key of a block list": "plugins:\n  disabled:  # off\n    - a\n",
    "eol after each item": "plugins:\n  disabled:\n    - a  # first\n    - b  # second\n",
    "own line before the list": "plugins:\n  # what is off\n  disabled:\n    - a\n",
    "own line between items": "plugins:\n  disabled:\n    - a\n    # the next one too\n    - b\n",
    "own line after the last item": "plugins:\n  disabled:\n    - a\n    # end of list\nweb: {}\n",
    "no disabled key yet": "# my settings\nplugins:  # plugin switches\n  hook_timeout: 5  # seconds\n",
    "no plugins section": "# only a comment\nweb: {allow_private_networks: false}  # flow map\n",
    "comment at the end of the file": "plugins:\n  disabled: []\n# the end\n",
    "an allow-list too": "plugins:\n  enabled: [x, a]  # only these\n  disabled: []  # none\n",
    "flow mapping with a comment": "plugins: {disabled: [], enabled: null}  # all flow\n",
    "empty file with a comment": "# nothing yet\n",
    "indented by four": "plugins:\n    disabled:\n        - a   # indented\n    hook_timeout: 3\n",
    "comment between sections": "plugins:\n  disabled: []\n\n# --- web ---\nweb:\n  allow_private_networks: true\n",
    "document start marker": "---\nplugins:\n  disabled: [] # x\n",
}


def comments(text: str) -> list[str]:
    return sorted(line.split("#", 1)[1].strip() for line in text.splitlines() if "#" in line)


@pytest.mark.parametrize("text", COMMENTED_CONFIGS.values(), ids=COMMENTED_CONFIGS.keys())
def test_disable_then_enable_keeps_every_comment_and_the_file_readable(plugins, isolated_home, text):
    from click.testing import CliRunner

    from hermes_core import reset_default_runtime
    from hermes_core.cli import cli

    plugins.folder("x", manifest="name: x\ntools: []\n")
    home = HermesHome(isolated_home)
    home.config_file.write_text(text)
    before = home.config()
    for command in ("disable", "enable"):
        reset_default_runtime()
        result = CliRunner().invoke(cli, ["plugins", command, "x"])
        assert result.exit_code == 0, result.output
        after = home.config_file.read_text()
        assert comments(after) == comments(text), after
        assert (command == "disable") == ("x" in home.config().plugins.disabled)
    assert home.config().model_dump() == before.model_dump()


def test_a_config_that_is_already_invalid_is_reported_as_the_users_file_and_left_alone(home):
    home.config_file.write_text("plugins:\n  disabled: [a\n")
    with pytest.raises(ConfigError, match=r"config.yaml:\d+: invalid YAML"):
        home.edit_config(lambda doc: doc["plugins"]["disabled"].append("b"))
    assert home.config_file.read_text() == "plugins:\n  disabled: [a\n"


EDITS_IN_A_CHILD = """
import sys
from pathlib import Path
from hermes_core import HermesHome
home, tag = HermesHome(Path(sys.argv[1])), sys.argv[2]
for n in range(25):
    home.edit_config(lambda doc: doc.setdefault("plugins", {}).setdefault("disabled", []).append(f"{tag}{n}"))
"""


def test_edits_from_two_processes_at_once_are_all_kept(home):
    import subprocess
    import sys

    home.config_file.write_text("# shared\nplugins:\n  disabled: []\n")
    children = [subprocess.Popen([sys.executable, "-c", EDITS_IN_A_CHILD, str(home.root), tag]) for tag in "ab"]
    for child in children:
        assert child.wait(timeout=scaled_timeout(120)) == 0
    disabled = home.config().plugins.disabled
    assert sorted(disabled) == sorted(f"{tag}{n}" for tag in "ab" for n in range(25))
    assert "# shared" in home.config_file.read_text()


ALREADY_DISABLED = {
    "first of several, comment below": "plugins:\n  disabled:\n    - x\n    # about b\n    - b\n",
    "middle, comment below": "plugins:\n  disabled:\n    - a\n    - x\n    # about c\n    - c\n",
    "last, comment below": "plugins:\n  disabled:\n    - a\n    - x\n# the end\n",
    "alone, comment below": "plugins:\n  disabled:\n    - x\n\n# --- web ---\nweb: {allow_private_networks: true}\n",
    "flow list": "plugins:\n  disabled: [a, x, b]  # three\n",
}


@pytest.mark.parametrize("text", ALREADY_DISABLED.values(), ids=ALREADY_DISABLED.keys())
def test_enable_keeps_the_comments_around_the_removed_entry(plugins, isolated_home, text):
    from click.testing import CliRunner

    from hermes_core.cli import cli

    plugins.folder("x", manifest="name: x\ntools: []\n")
    home = HermesHome(isolated_home)
    home.config_file.write_text(text)
    result = CliRunner().invoke(cli, ["plugins", "enable", "x"])
    assert result.exit_code == 0, result.output
    after = home.config_file.read_text()
    assert comments(after) == comments(text), after
    assert "x" not in home.config().plugins.disabled
