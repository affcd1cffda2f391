"""`hermes plugins list`, `info` and `doctor` show everything a plugin contributes, and `doctor` reports with an
invalid config.yaml too (the config problem first)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli

SURFACE = Path(__file__).parent / "fixtures" / "hermes_agent" / "surface"
SURFACE_CONTRIBUTES = {"commands": ["shout", "surface-status"], "cli_commands": ["surface"],
                       "skills": ["surface:checklist", "surface:workflow"],
                       "middleware": ["tool_execution", "tool_request"], "web_search_providers": []}


@pytest.fixture(autouse=True)
def surface(isolated_home: Path):
    shutil.copytree(SURFACE, isolated_home / "plugins" / "surface")
    yield
    for name in [n for n in sys.modules if n.startswith("hermes_plugins.")]:
        del sys.modules[name]


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("command", [["plugins", "list", "--json"], ["plugins", "doctor", "--json"]])
def test_json_records_carry_commands_cli_commands_skills_and_middleware(command):
    data = json.loads(run(*command))
    [record] = [r for r in (data["plugins"] if isinstance(data, dict) else data) if r["id"] == "surface"]
    assert {key: record[key] for key in SURFACE_CONTRIBUTES} == SURFACE_CONTRIBUTES


def test_text_listing_and_info_show_them():
    listing = run("plugins", "list")
    for line in ("    slash commands: /shout, /surface-status", "    CLI commands: surface",
                 "    skills: surface:checklist, surface:workflow", "    middleware: tool_execution, tool_request"):
        assert line + "\n" in listing
    info = run("plugins", "info", "surface")
    assert "  slash commands: /shout, /surface-status\n" in info and "  CLI commands: surface\n" in info
    assert json.loads(run("plugins", "info", "surface", "--json"))["skills"] == SURFACE_CONTRIBUTES["skills"]


def test_info_shows_a_hermes_agent_requires_hermes_as_not_checked(isolated_home: Path):
    manifest = isolated_home / "plugins" / "surface" / "plugin.yaml"
    manifest.write_text(manifest.read_text() + 'requires_hermes: ">=0.21.5"\n')
    assert "  requires_hermes: >=0.21.5 (not checked: a Hermes Agent version)\n" in run("plugins", "info", "surface")


INVALID = {
    "a wrong value": ("tool_output:\n  max_result_size_chars: lots\nplugins:\n  disabled: [other]\n",
                      "plugins.enabled and plugins.disabled were read from it"),
    "not YAML": ("plugins: [unclosed\n", "cannot be read from it, so no plugin was imported"),
    "a wrong selection": ("plugins:\n  disabled: surface\n", "cannot be read from it, so no plugin was imported"),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_doctor_with_an_invalid_config_reports_the_config_first_then_every_plugin(isolated_home, case):
    text, fallback = INVALID[case]
    (isolated_home / "config.yaml").write_text(text)
    result = CliRunner().invoke(cli, ["plugins", "doctor"])
    assert result.exit_code == 0, result.output
    first, second, *rest = result.output.splitlines()
    assert first.startswith(f"config: {isolated_home / 'config.yaml'}:") and fallback in second
    assert any("surface" in line for line in rest)
    report = json.loads(run("plugins", "doctor", "--json"))
    assert report["config_error"] == first.removeprefix("config: ") and fallback in report["config_fallback"]
    [surface] = [r for r in report["plugins"] if r["id"] == "surface"]
    imported = case == "a wrong value"
    assert (surface["state"], surface["imported"]) == (("loaded", True) if imported else ("disabled", False))
    assert CliRunner().invoke(cli, ["plugins", "doctor", "--strict"]).exit_code == 1


def test_doctor_with_an_invalid_config_never_imports_a_plugin_the_file_disables(isolated_home):
    (isolated_home / "config.yaml").write_text("approvals:\n  mode: sometimes\nplugins:\n  disabled: [surface]\n")
    [surface] = [r for r in json.loads(run("plugins", "doctor", "--json"))["plugins"] if r["id"] == "surface"]
    assert (surface["state"], surface["imported"]) == ("disabled", False)
    assert "hermes_plugins.surface" not in sys.modules
