"""Index records list the skills a plugin's wheel ships (validated), and ``hermes skills install ID`` copies them
from the downloaded wheel into the user's skills: the plugin itself is neither installed nor run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.index.build import entries_from_wheel
from hermes_core.index.catalog import IndexEntry, index_document
from hermes_core.index.wheelmeta import build_wheel, read_wheel

pytestmark = pytest.mark.slow

PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "guides-plugin"
version = "1.0.0"

[project.entry-points."hermes_agent.plugins"]
guides = "guides_plugin"

[tool.setuptools]
packages = ["guides_plugin"]

[tool.setuptools.package-data]
guides_plugin = ["skills/*/*.md", "skills/*/references/*.md"]
"""


@pytest.fixture(scope="module")
def wheel_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the wheel of a plugin that ships two valid skills and one invalid one."""
    project = tmp_path_factory.mktemp("guides-project")
    (project / "pyproject.toml").write_text(PYPROJECT)
    package = project / "guides_plugin"
    package.mkdir()
    (package / "__init__.py").write_text("raise SystemExit('the plugin must not run')\n")
    for name, description in (("brew", "How to brew"), ("steep", "How to steep"), ("Bad_Name", "Invalid")):
        (package / "skills" / name / "references").mkdir(parents=True)
        (package / "skills" / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\nSee [a](references/a.md).\n")
        (package / "skills" / name / "references" / "a.md").write_text(f"# {name} reference\n")
    folder = tmp_path_factory.mktemp("guides-wheel")
    with build_wheel(project) as wheel:
        target = folder / wheel.name
        target.write_bytes(wheel.read_bytes())
    return folder


@pytest.fixture
def entry(wheel_folder: Path) -> IndexEntry:
    [wheel] = wheel_folder.glob("*.whl")
    with read_wheel(wheel) as info:
        [found] = entries_from_wheel(info)
    return found


@pytest.fixture
def index(entry: IndexEntry, wheel_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An index holding the plugin, and pip pointed at the wheel's folder only."""
    path = tmp_path / "index.json"
    path.write_text(index_document([entry]))
    monkeypatch.setenv("HERMES_INDEX_URL", str(path))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheel_folder))
    return path


def test_fetch_lists_the_valid_skills_of_the_wheel_and_notes_the_others(entry: IndexEntry) -> None:
    assert [(s.name, s.description, s.path) for s in entry.skills] == [
        ("brew", "How to brew", "guides_plugin/skills/brew"), ("steep", "How to steep", "guides_plugin/skills/steep")]
    assert any("guides_plugin/skills/Bad_Name left out" in note and "lower-case" in note for note in entry.notes)


def test_the_index_refuses_an_invalid_skill_record(entry: IndexEntry) -> None:
    from hermes_core.errors import PluginIndexError
    from hermes_core.index.catalog import parse_index

    data = json.loads(index_document([entry]))
    data["plugins"][0]["skills"][0].update(name="Not Valid", path="../escape")
    with pytest.raises(PluginIndexError, match="skills") as refused:
        parse_index(json.dumps(data))
    assert "lower-case" in str(refused.value) and "not a relative folder" in str(refused.value)


def test_install_by_index_id_copies_the_skills_without_installing_the_plugin(index: Path, isolated_home: Path) -> None:
    result = CliRunner().invoke(cli, ["skills", "install", "guides"])
    assert result.exit_code == 0, result.output
    assert "installed skill 'brew'" in result.output and "installed skill 'steep'" in result.output
    skills = isolated_home / "skills"
    assert sorted(p.relative_to(skills).as_posix() for p in skills.rglob("*") if p.is_file()) == [
        "brew/SKILL.md", "brew/references/a.md", "steep/SKILL.md", "steep/references/a.md"]
    again = CliRunner().invoke(cli, ["skills", "install", "guides:brew"])
    assert again.exit_code == 1 and "already installed" in again.output
    forced = CliRunner().invoke(cli, ["skills", "install", "guides:brew", "--force"])
    assert forced.exit_code == 0 and "replaced skill 'brew'" in forced.output


def test_plugins_info_shows_the_skills_of_a_plugin_that_is_not_installed(index: Path, isolated_home: Path) -> None:
    shown = CliRunner().invoke(cli, ["plugins", "info", "guides"])
    assert shown.exit_code == 0, shown.output
    assert "skills (2; hermes skills install guides):" in shown.output and "brew   How to brew" in shown.output


def test_an_unknown_id_or_skill_is_a_clear_error(index: Path, isolated_home: Path) -> None:
    unknown = CliRunner().invoke(cli, ["skills", "install", "nothing-here"])
    assert unknown.exit_code == 1 and "neither a file, a folder nor a plugin of the index" in unknown.output
    missing = CliRunner().invoke(cli, ["skills", "install", "guides:nope"])
    assert missing.exit_code == 1 and "ships no skill 'nope' (its skills: brew, steep)" in missing.output
