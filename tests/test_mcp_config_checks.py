"""`hermes mcp install-claude` and `hermes mcp add` check what they write: the toolsets exist, the command and its
folder exist; `--force` writes anyway."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from hermes_core.cli import cli

MANIFEST = """\
name: notes
version: 1.0
tools:
  - name: notes_echo
    toolset: notes
    description: Echo
    parameters: {type: object, properties: {text: {type: string}}}
    handler: .tools:echo
"""


def hermes(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def claude(tmp_path: Path, plugins) -> tuple[Path, Path]:
    """Claude Desktop's config file (not there yet), a workspace, and a plugin of toolset ``notes`` installed."""
    plugins.folder("notes", manifest=MANIFEST, files={"tools.py": "def echo(args, **kw):\n    return 'x'\n"})
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return tmp_path / "claude_desktop_config.json", workspace


def test_install_claude_refuses_a_toolset_nothing_installed_provides(claude):
    config, workspace = claude

    refused = hermes("mcp", "install-claude", "--config-file", str(config), "--workspace", str(workspace),
                     "--toolsets", "nonsense,notes,web")

    assert refused.exit_code == 1 and not config.exists()
    assert "unknown toolsets 'nonsense', 'web' (installed: notes)" in refused.output
    assert "--force writes the entry anyway" in refused.output and len(refused.output.strip().splitlines()) == 1


def test_install_claude_writes_known_toolsets_and_force_writes_unknown_ones(claude):
    config, workspace = claude

    known = hermes("mcp", "install-claude", "--config-file", str(config), "--workspace", str(workspace),
                   "--toolsets", "notes")
    forced = hermes("mcp", "install-claude", "--config-file", str(config), "--workspace", str(workspace),
                    "--toolsets", "web", "--name", "later", "--force")

    assert (known.exit_code, forced.exit_code) == (0, 0), known.output + forced.output
    servers = json.loads(config.read_text())["mcpServers"]
    assert servers["hermes"]["args"][-2:] == ["--toolsets", "notes"]
    assert servers["later"]["args"][-2:] == ["--toolsets", "web"]


def test_install_claude_refuses_a_workspace_that_does_not_exist(claude, tmp_path):
    config, _ = claude

    refused = hermes("mcp", "install-claude", "--config-file", str(config), "--workspace", str(tmp_path / "nope"))

    assert refused.exit_code == 2 and "does not exist" in refused.output and not config.exists()


@pytest.mark.parametrize(("args", "message"), [
    (["x", "--", "no-such-command-here"], "command 'no-such-command-here' not found on PATH"),
    (["x", "--", "./bin/server.py"], "command './bin/server.py' not found"),
    (["x", "--cwd", "/no/such/folder", "--", sys.executable], "--cwd /no/such/folder: no such folder"),
])
def test_add_refuses_a_command_or_folder_that_does_not_exist_unless_forced(isolated_home, args, message):
    refused = hermes("mcp", "add", *args)

    assert refused.exit_code == 1 and message in refused.output and "--force" in refused.output
    assert not (isolated_home / "config.yaml").exists()
    forced = hermes("mcp", "add", "--force", "--no-connect", *args)
    assert forced.exit_code == 0, forced.output
    assert "x" in yaml.safe_load((isolated_home / "config.yaml").read_text())["mcp_servers"]


def test_add_checks_a_relative_command_from_its_cwd_and_leaves_variables_to_start_up(isolated_home, tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "server.py").write_text("")

    relative = hermes("mcp", "add", "rel", "--no-connect", "--cwd", str(tmp_path), "--", "bin/server.py")
    variable = hermes("mcp", "add", "var", "--no-connect", "--", "${SERVER_BIN}")

    assert (relative.exit_code, variable.exit_code) == (0, 0), relative.output + variable.output
