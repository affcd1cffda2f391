"""config.yaml: defaults, typed loading, one clear message for a bad file, comment-preserving edits."""

from __future__ import annotations

import pytest

from hermes_core import ConfigError, HermesHome, hermes_home


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
    assert config.plugin_settings("hermes-tenuo") == {"require_warrant": True, "endpoint": "y"}
    assert config.override_granted("hermes-tenuo") and not config.override_granted("other")


def test_invalid_value_names_file_line_and_key(home):
    path = home.config_file
    path.write_text("web:\n  allow_private_networks: true\nplugins:\n  hook_timeout: soon\n")
    with pytest.raises(ConfigError) as info:
        home.config()
    assert str(info.value).startswith(f"{path}:4: plugins.hook_timeout: ")


def test_unknown_nested_key_is_an_error(home):
    home.config_file.write_text("plugins:\n  disabeld: [x]\n")
    with pytest.raises(ConfigError, match=r"config.yaml:2: plugins.disabeld: Extra inputs are not permitted"):
        home.config()


def test_invalid_yaml_names_the_line(home):
    home.config_file.write_text("plugins:\n  disabled: [x\n")
    with pytest.raises(ConfigError, match=r"config.yaml:\d+: invalid YAML"):
        home.config()


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
