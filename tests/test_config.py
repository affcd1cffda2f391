"""config.yaml: defaults, typed loading, one clear message for a bad file, comment-preserving edits."""

from __future__ import annotations

import pytest

from hermes_core.config import ConfigError, edit_config, hermes_home, load_config, plugin_settings


def test_hermes_home_defaults_to_dot_hermes(monkeypatch, tmp_path):
    monkeypatch.delenv("HERMES_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert hermes_home() == tmp_path / ".hermes"


def test_missing_file_means_defaults(isolated_home):
    config = load_config()
    assert config.plugins.hook_timeout == 30 and config.plugins.enabled is None
    assert config.tool_output.max_result_size_chars == 100_000 and not config.web.allow_private_networks


def test_values_and_unknown_top_level_keys(isolated_home):
    (isolated_home / "config.yaml").write_text(
        "plugins:\n  disabled: [x]\n  entries:\n    web: {settings: {timeout: 5}}\nmy_plugin: {colour: blue}\n")
    config = load_config()
    assert config.plugins.disabled == ["x"] and config.model_extra == {"my_plugin": {"colour": "blue"}}
    assert plugin_settings("web") == {"timeout": 5} and plugin_settings("other") == {}


def test_invalid_value_names_file_line_and_key(isolated_home):
    path = isolated_home / "config.yaml"
    path.write_text("web:\n  allow_private_networks: true\nplugins:\n  hook_timeout: soon\n")
    with pytest.raises(ConfigError) as info:
        load_config()
    assert str(info.value).startswith(f"{path}:4: plugins.hook_timeout: ")


def test_unknown_nested_key_is_an_error(isolated_home):
    (isolated_home / "config.yaml").write_text("plugins:\n  disabeld: [x]\n")
    with pytest.raises(ConfigError, match=r"config.yaml:2: plugins.disabeld: Extra inputs are not permitted"):
        load_config()


def test_invalid_yaml_names_the_line(isolated_home):
    (isolated_home / "config.yaml").write_text("plugins:\n  disabled: [x\n")
    with pytest.raises(ConfigError, match=r"config.yaml:\d+: invalid YAML"):
        load_config()


def test_edits_keep_comments_and_order(isolated_home):
    path = isolated_home / "config.yaml"
    path.write_text("# my settings\nweb:\n  allow_private_networks: false  # keep me\nplugins:\n  disabled: [a]\n")
    edit_config(lambda doc: doc["plugins"]["disabled"].append("b"))
    text = path.read_text()
    assert "# my settings" in text and "# keep me" in text
    assert text.index("web:") < text.index("plugins:")
    assert load_config().plugins.disabled == ["a", "b"]


def test_edit_that_makes_the_file_invalid_is_refused_and_nothing_is_written(isolated_home):
    path = isolated_home / "config.yaml"
    path.write_text("plugins:\n  hook_timeout: 5\n")
    with pytest.raises(ConfigError, match="hook_timeout"):
        edit_config(lambda doc: doc["plugins"].update({"hook_timeout": "never"}))
    assert path.read_text() == "plugins:\n  hook_timeout: 5\n"


def test_unwritable_config_is_a_clear_error(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("HERMES_HOME", str(blocker / "home"))
    with pytest.raises(ConfigError, match="cannot write the configuration"):
        edit_config(lambda doc: doc.update({"command_allowlist": ["x"]}))
