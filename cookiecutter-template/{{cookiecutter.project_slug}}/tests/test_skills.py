"""The skill this plugin ships: valid under the Agent Skills standard, and offered by Hermes under the plugin's name."""

from __future__ import annotations

from pathlib import Path

from hermes_core.skills.validation import validate_skill

PLUGIN = "{{ cookiecutter.plugin_name }}"
PACKAGE = "{{ cookiecutter.package_name }}"
SKILL = "{{ cookiecutter.plugin_name }}-guide"
FOLDER = Path(__file__).resolve().parent.parent / PACKAGE / "skills" / SKILL


def test_the_skill_is_valid() -> None:
    report = validate_skill(FOLDER)

    assert [str(problem) for problem in report.errors + report.warnings] == []


def test_the_skill_is_offered_with_its_files(load_hermes_plugin, hermes_runtime) -> None:
    load_hermes_plugin(PACKAGE)
    skill = hermes_runtime.skill_catalog().get(f"{PLUGIN}:{SKILL}")

    assert skill is not None and skill.description
    assert (skill.folder / "references" / "examples.md").is_file()
