"""``hermes plugins new --with-skill``: a plugin that ships one skill, declared in its manifest, which validates
and which the plugin's own tests check; installed, its skill reaches the model through the skills pack."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from hermes_core.authoring.scaffold import render
from hermes_core.skills.validation import validate_skill


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_without_the_option_no_skill_is_rendered(tmp_path: Path) -> None:
    project = render("weather", tmp_path, no_input=True)
    assert not (project / "hermes_plugin_weather" / "skills").exists()
    assert not (project / "tests" / "test_skills.py").exists()
    assert "skills:" not in (project / "hermes_plugin_weather" / "plugin.yaml").read_text()


def test_the_rendered_skill_is_declared_and_valid(tmp_path: Path) -> None:
    project = render("weather", tmp_path, no_input=True, with_skill=True)
    skill = project / "hermes_plugin_weather" / "skills" / "weather-guide"
    report = validate_skill(skill)
    assert report.valid and report.warnings == []
    assert "skills: [skills/weather-guide]" in (project / "hermes_plugin_weather" / "plugin.yaml").read_text()


@pytest.mark.slow
def test_the_plugin_installs_passes_its_tests_and_its_skill_is_served(make_venv, tmp_path: Path) -> None:
    project = render("weather", tmp_path, no_input=True, with_skill=True)
    venv = make_venv("scaffold-with-skill")
    venv.install("hermes-tools-skills", extra=("--no-deps",))
    venv.install(str(project), extra=("--no-build-isolation", "--no-deps"))
    home = {"HERMES_HOME": str(tmp_path / "home")}

    assert "valid" in ok(venv.hermes_cli("skills", "validate", str(project / "hermes_plugin_weather" / "skills")))
    validated = ok(venv.hermes_cli("plugins", "validate", str(project)))
    assert "valid (1 declared tool" in validated and "warning" not in validated
    listed = json.loads(ok(venv.hermes_cli("tools", "call", "skills_list", "{}", env=home)))
    assert [(s["name"], s["source"]) for s in listed["skills"]] == [("weather:weather-guide", "plugin:weather")]
    linked = json.loads(ok(venv.hermes_cli("tools", "call", "skill_view", json.dumps(
        {"name": "weather:weather-guide", "file_path": "references/examples.md"}), env=home)))
    assert "Hello, Ada!" in linked["content"]  # the installed wheel carries the skill's files

    tests = venv.run(venv.python, "-m", "pytest", "-q", cwd=project)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert re.search(r"\b\d+ passed\b", tests.stdout) and "failed" not in tests.stdout
