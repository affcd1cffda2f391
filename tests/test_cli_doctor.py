"""``hermes plugins doctor`` notes an unset variable of a plugin's ``requires_env`` only when it makes one of the
plugin's tools unavailable: optional variables (the file pack's ``HERMES_WORKSPACE``) are not noted on every run."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from hermes_core.cli import cli

ROOT = Path(__file__).resolve().parent.parent

SEARCH = """\
name: search
requires_env:
  - {name: SEARCH_API_KEY, description: the search service's key, url: "https://example.org/keys", secret: true}
  - {name: SEARCH_REGION, description: where to search (default everywhere)}
tools:
  - {name: search_web, toolset: search, description: Search, handler: .tools:search, check: {env: [SEARCH_API_KEY]}}
"""


def doctor(monkeypatch, *, env: dict[str, str] | None = None) -> dict:
    for name, value in (env or {}).items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(cli, ["plugins", "doctor", "--json"])
    assert result.exit_code == 0, result.output
    return {row["id"]: row for row in json.loads(result.output)["plugins"]}


def test_an_unset_variable_is_noted_only_while_it_makes_a_tool_unavailable(plugins, monkeypatch):
    plugins.folder("search", SEARCH, files={"tools.py": "def search(args, **kwargs):\n    return '[]'\n"})
    monkeypatch.delenv("SEARCH_API_KEY", raising=False)
    monkeypatch.delenv("SEARCH_REGION", raising=False)

    row = doctor(monkeypatch)["search"]
    assert row["problems"] == ["tool search_web unavailable: environment variable SEARCH_API_KEY is not set"]
    assert row["notes"] == ["environment variable SEARCH_API_KEY is not set (the search service's key, "
                            "https://example.org/keys)"]

    assert doctor(monkeypatch, env={"SEARCH_API_KEY": "k"})["search"]["notes"] == []


def test_the_file_packs_optional_workspace_variable_is_not_noted(plugins, monkeypatch):
    manifest = (ROOT / "hermes_plugins" / "file" / "hermes_plugin_file" / "plugin.yaml").read_text()
    assert "HERMES_WORKSPACE" in manifest
    plugins.folder("file", manifest)
    monkeypatch.delenv("HERMES_WORKSPACE", raising=False)

    row = doctor(monkeypatch)["file"]
    assert row["notes"] == [] and row["problems"] == []
    text = CliRunner().invoke(cli, ["plugins", "doctor"]).output
    assert "HERMES_WORKSPACE" not in text and "[ok] file" in text


def _dist_info(site: Path, name: str, metadata: str, entry_points: str = "") -> None:
    folder = site / f"{name.replace('-', '_')}-1.0.dist-info"
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n{metadata}")
    (folder / "entry_points.txt").write_text(entry_points)


def test_doctor_says_when_another_package_owns_hermes_or_moved_a_dependency_below_its_range(
        isolated_home, tmp_path, monkeypatch):
    """A plugin that depends on Hermes Agent installs its `hermes` script and may downgrade a dependency (apify:
    httpx): both are problems, named, with the command that puts it right."""
    site = tmp_path / "site"
    _dist_info(site, "hermes-agent-like", "", "[console_scripts]\nhermes = hermes_cli.main:main\n")
    _dist_info(site, "hermes-tools-demo", "Requires-Dist: pyyaml<1\nRequires-Dist: not-installed-anywhere>=2\n")
    monkeypatch.syspath_prepend(str(site))
    result = CliRunner().invoke(cli, ["plugins", "doctor", "--json"])
    installation = json.loads(result.output)["installation"]
    assert installation[0] == ("hermes-agent-like 1.0 also installs a `hermes` command: whichever was installed "
                               "last is the one on PATH; `hermes-tools` always runs this one")
    [downgraded] = installation[1:]
    assert downgraded.startswith("pyyaml ") and "but hermes-tools-demo requires pyyaml<1" in downgraded
    assert downgraded.endswith("pip install 'pyyaml<1'")
    strict = CliRunner().invoke(cli, ["plugins", "doctor", "--strict"])
    assert strict.exit_code == 1 and "[!!] installation: hermes-agent-like 1.0 also installs" in strict.output
