"""Shell completion of dynamic values, driven through click's completion protocol (``_HERMES_COMPLETE``,
``COMP_WORDS``, ``COMP_CWORD``) against the real ``hermes`` console script: plugin ids, tool names, toolset
names and MCP server names, read from the discovery cache and config.yaml without importing any plugin."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.authoring.testing import scaled_timeout

HERMES = str(Path(sys.executable).with_name("hermes"))

DECLARED = """\
name: notes
description: Keep notes
tools:
  - {name: notes_add, toolset: notes, description: Add a note, handler: .tools:add}
  - {name: notes_find, toolset: notes, description: Find notes, handler: .tools:add}
toolsets:
  - {name: notes-all, description: Every notes tool, includes: [notes]}
"""


def complete(shell: str, line: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """What ``hermes`` answers when ``shell`` asks it to complete ``line`` (the cursor at its end)."""
    words = line.split(" ")
    protocol = {"_HERMES_COMPLETE": f"{shell}_complete", "COMP_WORDS": line,
                "COMP_CWORD": words[-1] if shell == "fish" else str(len(words) - 1)}
    return subprocess.run([HERMES], capture_output=True, text=True, timeout=scaled_timeout(60),
                          env={**os.environ, **protocol, **(env or {})})


def offered(line: str, env: dict[str, str] | None = None) -> list[str]:
    """The values bash would offer for ``line``."""
    result = complete("bash", line, env)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return [item.split(",", 1)[1] for item in result.stdout.splitlines() if item]


@pytest.fixture
def notes(plugins):
    plugins.folder("notes", DECLARED, "def add(args, **kwargs):\n    return 'ok'\n")
    return plugins


def test_plugin_ids_are_completed_for_the_commands_that_take_one(notes, isolated_home):
    notes.folder("coded", None, "def register(ctx):\n    pass\n")
    notes.folder("paused", "name: paused\n", "")
    (isolated_home / "config.yaml").write_text("plugins:\n  disabled: [paused]\n")

    assert {"notes", "coded", "paused"} <= set(offered("hermes plugins info "))
    assert "notes" in offered("hermes plugins disable ") and "paused" not in offered("hermes plugins disable ")
    assert "paused" in offered("hermes plugins enable ") and "notes" not in offered("hermes plugins enable ")
    assert offered("hermes plugins info no") == ["notes"]
    assert not notes.imported("coded") and not notes.imported("notes"), "completion imported a plugin"


def test_uninstall_offers_installed_distributions_only_and_not_twice(notes):
    site = notes.site
    notes.distribution("packed", "hermes_packed", "name: packed\n")
    env = {"PYTHONPATH": str(site)}

    assert "packed" in offered("hermes plugins uninstall ", env)
    assert "notes" not in offered("hermes plugins uninstall ", env), "a folder plugin is not uninstalled with pip"
    assert "packed" not in offered("hermes plugins uninstall packed ", env)
    assert not notes.imported("packed")


def test_tool_names_come_from_the_manifests_of_plugins_that_would_load(notes, isolated_home):
    assert offered("hermes tools show notes_") == ["notes_add", "notes_find"]
    assert offered("hermes tools call notes_f") == ["notes_find"]
    (isolated_home / "config.yaml").write_text("plugins:\n  disabled: [notes]\n")
    assert offered("hermes tools call notes_") == []


def test_toolset_names_cover_plugins_presets_legacy_names_and_comma_lists(notes):
    shown = offered("hermes toolsets show ")
    assert {"notes", "notes-all", "hermes-cli", "file_tools"} <= set(shown)
    assert offered("hermes tools list --toolsets file_tools,no") == ["file_tools,notes", "file_tools,notes-all"]
    assert "notes" not in offered("hermes tools list --disable notes,")


def test_mcp_server_names_are_read_from_config_and_no_server_is_started(isolated_home, tmp_path):
    started = tmp_path / "started"
    server = tmp_path / "server.py"
    server.write_text(f"open({str(started)!r}, 'w')\n")
    (isolated_home / "config.yaml").write_text(
        f"mcp_servers:\n  time: {{command: {sys.executable}, args: [{server}]}}\n"
        "  tickets: {url: 'http://127.0.0.1:9/mcp'}\n")
    assert offered("hermes mcp remove ti") == ["tickets", "time"]
    assert "mcp-time" in offered("hermes mcp serve --toolsets mcp-")
    offered("hermes tools call ")
    assert not started.exists(), "completion started an MCP server"


def test_install_and_index_show_offer_the_plugin_indexs_ids():
    assert "file" in offered("hermes plugins install fi")
    assert offered("hermes index show fil") == ["file"]


def test_an_index_on_the_network_is_not_fetched_on_tab(http_server):
    from hermes_core.index.catalog import bundled_index_path

    url, routes = http_server
    routes["/index.json"] = (200, bundled_index_path().read_bytes())  # would offer "file" if it were fetched
    assert offered("hermes plugins install fi", {"HERMES_INDEX_URL": f"{url}/index.json"}) == []
    assert "file" in offered("hermes plugins install fi", {"HERMES_INDEX_URL": str(bundled_index_path())})


def test_zsh_and_fish_get_each_value_with_its_description(notes):
    zsh = complete("zsh", "hermes tools show notes_a")
    assert zsh.returncode == 0 and zsh.stdout.splitlines() == ["plain", "notes_add", "notes: Add a note"]
    fish = complete("fish", "hermes plugins info no")
    assert fish.returncode == 0 and fish.stdout.splitlines() == ["plain,notes\tuser: Keep notes"]


def test_top_level_completion_offers_the_command_groups_without_loading_plugins(notes):
    notes.folder("coded", None, "def register(ctx):\n    ctx.register_cli_command('mine', 'Mine', lambda p: None)\n")
    assert offered("hermes ") == ["plugins", "tools", "toolsets", "mcp", "index", "skills", "checkpoints", "cron",
                                  "sessions", "memory", "config"]
    assert not notes.imported("coded")


def test_a_broken_config_completes_nothing_and_prints_no_traceback(notes, isolated_home):
    (isolated_home / "config.yaml").write_text("plugins: [not, a, mapping]\n")
    result = complete("bash", "hermes plugins info ")
    assert result.returncode == 0 and result.stdout.strip() == "" and "Traceback" not in result.stderr


def test_the_completion_scripts_are_the_ones_docs_cli_md_tells_each_shell_to_load():
    docs = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text()
    for shell in ("bash", "zsh", "fish"):
        assert f"_HERMES_COMPLETE={shell}_source hermes" in docs
        script = subprocess.run([HERMES], capture_output=True, text=True, timeout=scaled_timeout(60),
                                env={**os.environ, "_HERMES_COMPLETE": f"{shell}_source"})
        assert script.returncode == 0 and f"{shell}_complete" in script.stdout, script.stderr


def test_a_warm_completion_builds_no_model_and_parses_no_yaml(notes, isolated_home):
    (isolated_home / "config.yaml").write_text("plugins:\n  disabled: []\n")
    assert offered("hermes tools show notes_") == ["notes_add", "notes_find"]  # fills the caches
    protocol = {"_HERMES_COMPLETE": "bash_complete", "COMP_WORDS": "hermes tools show notes_", "COMP_CWORD": "3"}
    warm = subprocess.run([HERMES], capture_output=True, text=True, timeout=scaled_timeout(60),
                          env={**os.environ, **protocol, "PYTHONPROFILEIMPORTTIME": "1"})
    assert warm.returncode == 0 and warm.stdout.split() == ["plain,notes_add", "plain,notes_find"], warm.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in warm.stderr.splitlines() if line.startswith("import time")}
    assert imported & {"pydantic", "yaml", "hermes_core.plugins.manifest", "hermes_core.config.model"} == set()
