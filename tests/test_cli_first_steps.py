"""What a new user trips on at the command line: a suggestion for a mistyped top-level command, JSON errors under
--json, the distribution's name in --version, and the variable that enables a project plugin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core._version import __version__
from hermes_core.authoring.testing import scaled_timeout

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py


def hermes(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*support.hermes_command(), *args], capture_output=True, text=True, cwd=cwd,
                          env=os.environ.copy(), stdin=subprocess.DEVNULL, timeout=scaled_timeout(60))


def test_a_mistyped_top_level_command_gets_a_suggestion():
    result = hermes("tool", "list")

    assert result.returncode == 2 and "No such command 'tool'. Did you mean 'tools'" in result.stderr
    assert "Did you mean" not in hermes("nothing-like-it").stderr


@pytest.mark.parametrize("args", [["tools", "show", "nope", "--json"], ["plugins", "info", "nope", "--json"],
                                  ["toolsets", "show", "nope", "--json"]])
def test_an_error_under_json_is_json(args):
    result = hermes(*args)

    assert result.returncode == 1
    assert "nope" in json.loads(result.stdout)["error"] and result.stderr == ""


def test_an_error_without_json_stays_one_line_of_text():
    result = hermes("tools", "show", "nope")

    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("Error: unknown tool 'nope'")


def test_version_names_the_distribution():
    assert hermes("--version").stdout.strip() == f"hermes-tools {__version__}"


def test_info_of_a_project_plugin_that_is_not_enabled_names_the_variable(tmp_path):
    folder = tmp_path / ".hermes" / "plugins" / "proj"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text("name: proj\nversion: 1.0\n")

    result = hermes("plugins", "info", "proj", cwd=tmp_path)

    assert result.returncode == 1 and "HERMES_ENABLE_PROJECT_PLUGINS=1" in result.stderr
    assert "'proj' is a project plugin" in result.stderr
