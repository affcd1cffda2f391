"""``hermes config path|show|get|set|unset``: keys checked against the config model, comments kept."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from hermes_core.cli import cli

COMMENTED = """\
# My settings.
approvals:
  mode: ask   # who answers
# the browser pack
browser:
  sandbox: auto  # bubblewrap where it works
"""


def hermes(*args: str) -> object:
    return CliRunner().invoke(cli, list(args))


def test_set_then_show_round_trips_with_the_comments_kept(isolated_home: Path):
    config = isolated_home / "config.yaml"
    config.write_text(COMMENTED)
    assert hermes("config", "path").output.strip() == str(config)

    result = hermes("config", "set", "browser.allow_private", "true")
    assert result.exit_code == 0, result.output
    shown = hermes("config", "show").output
    assert shown == COMMENTED + "  allow_private: true\n"
    assert hermes("config", "get", "browser.allow_private").output == "true\n"

    assert hermes("config", "set", "approvals.timeout", "90").exit_code == 0
    assert hermes("config", "get", "approvals.timeout").output == "90.0\n"
    assert hermes("config", "get", "approvals.policy").output == "dangerous\n"  # a default, not in the file
    assert "mode: ask   # who answers" in config.read_text()

    assert hermes("config", "unset", "browser.sandbox").exit_code == 0
    assert yaml.safe_load(config.read_text())["browser"] == {"allow_private": True}
    assert "# My settings." in config.read_text()
    assert hermes("config", "unset", "browser.sandbox").output.strip() == "browser.sandbox was not set"


def test_a_bad_key_or_value_is_refused_with_the_valid_choices_and_nothing_changes(isolated_home: Path):
    config = isolated_home / "config.yaml"
    config.write_text(COMMENTED)
    bad_value = hermes("config", "set", "approvals.mode", "maybe")
    assert bad_value.exit_code == 1
    assert "approvals.mode: Input should be 'ask', 'strict', 'smart', 'deny' or 'approve'" in bad_value.output
    bad_key = hermes("config", "set", "approvals.mod", "ask")
    assert bad_key.exit_code == 1 and "unknown key 'approvals.mod': the keys of approvals are mode, timeout, " \
                                     "policy" in bad_key.output
    typo = hermes("config", "set", "brwser.allow_private", "true")
    assert typo.exit_code == 1 and "unknown key 'brwser': the settings of Hermes are plugins," in typo.output
    assert "browser" in typo.output  # the plugins' sections it could have meant
    below_a_value = hermes("config", "get", "approvals.mode.x")
    assert below_a_value.exit_code == 1 and "approvals.mode is a value, not a section" in below_a_value.output
    assert config.read_text() == COMMENTED


def test_values_are_yaml_except_where_the_setting_is_text(isolated_home: Path):
    assert hermes("config", "set", "mcp_servers.time.command", "true").exit_code == 0  # a command named "true"
    assert hermes("config", "set", "mcp_servers.time.args", "[mcp-server-time, --local-timezone, UTC]").exit_code == 0
    assert hermes("config", "set", "plugins.psy.actor_id", "me@example.org").exit_code == 0  # a plugin's block
    text = (isolated_home / "config.yaml").read_text()
    assert yaml.safe_load(text) == {"mcp_servers": {"time": {"command": "true", "args": [
        "mcp-server-time", "--local-timezone", "UTC"]}}, "plugins": {"psy": {"actor_id": "me@example.org"}}}
    assert "    args:\n    - mcp-server-time\n" in text  # block style
    assert hermes("config", "get", "plugins.psy", "--json").output.strip() == '{\n  "actor_id": "me@example.org"\n}'


def test_show_without_a_file_says_every_setting_has_its_default(isolated_home: Path):
    result = CliRunner().invoke(cli, ["config", "show"])
    assert result.exit_code == 0 and "every setting has its default" in result.output
    effective = yaml.safe_load(CliRunner().invoke(cli, ["config", "show", "--effective"]).output)
    assert effective["approvals"]["mode"] == "ask" and effective["mcp"]["list_timeout"] == 5.0


def test_an_empty_section_the_edits_fill_is_written_in_block_style(isolated_home: Path):
    """Item 13 of #46: `{}` / `[]` in the file, filled by `config set` or `mcp add`, became `{fs: {command: ...}}`
    on one line. Filled, they are block style; one with a comment on its line keeps it there."""
    config = isolated_home / "config.yaml"
    config.write_text("mcp_servers: {}\nweb: {}\nplugins:\n  disabled: []  # kept off\n")

    assert hermes("mcp", "add", "fs", "--force", "--", "mcp-server-fs", "--root", "a b").exit_code == 0
    assert hermes("config", "set", "web.summarize", "true").exit_code == 0
    assert hermes("config", "set", "plugins.enabled", "[file]").exit_code == 0

    text = config.read_text()
    assert "{" not in text and "[" not in text.replace("disabled: []  # kept off", ""), text
    assert "mcp_servers:\n  fs:\n    command: mcp-server-fs\n    args:\n    - --root\n    - a b\n" in text
    assert "web:\n  summarize: true\n" in text
    assert yaml.safe_load(text)["mcp_servers"]["fs"]["args"] == ["--root", "a b"]
