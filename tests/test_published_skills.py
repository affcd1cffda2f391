"""A published Hermes Agent plugin that ships skills, installed from PyPI next to hermes-tools-skills in a fresh
venv: ``hermes tools call skills_list`` lists its skills and ``skill_view`` serves a body and a linked file."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytestmark = [pytest.mark.network, pytest.mark.slow]

#: Pinned: it registers six skills with ``ctx.register_skill(name, <folder>/SKILL.md)``, each with references/.
PLUGIN = "html-to-markdown-hermes-plugin==3.18.7"
PLUGIN_ID = "html-to-markdown"


@pytest.fixture(scope="session")
def skills_venv(make_venv: Any, package_index: str) -> Any:
    venv = make_venv("published-skills")
    venv.install("hermes-tools-skills", extra=("--no-deps",))
    installed = venv.run(venv.python, "-m", "pip", "install", "-q", "--disable-pip-version-check", PLUGIN,
                         timeout=900)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return venv


def tool(venv: Any, home: dict[str, str], name: str, args: dict[str, Any], code: int = 0) -> dict[str, Any]:
    result = venv.hermes_cli("tools", "call", name, json.dumps(args), env=home, timeout=300)
    assert result.returncode == code, result.stdout + result.stderr
    answer: dict[str, Any] = json.loads(result.stdout)
    return answer


@pytest.fixture
def home(tmp_path: Any) -> dict[str, str]:
    (tmp_path / "home").mkdir()
    return {"HERMES_HOME": str(tmp_path / "home")}


def test_skills_list_lists_the_plugins_skills(skills_venv: Any, home: dict[str, str]) -> None:
    listed = tool(skills_venv, home, "skills_list", {})
    names = [skill["name"] for skill in listed["skills"] if skill["source"] == f"plugin:{PLUGIN_ID}"]
    assert len(names) == 6 and f"{PLUGIN_ID}:html-to-markdown" in names
    assert all(skill["description"] for skill in listed["skills"])


def test_skill_view_returns_a_body_and_a_linked_file(skills_venv: Any, home: dict[str, str]) -> None:
    name = f"{PLUGIN_ID}:html-to-markdown"
    viewed = tool(skills_venv, home, "skill_view", {"name": name})
    assert viewed["success"] and viewed["content"].strip() and not viewed["content"].startswith("---")
    references = viewed["linked_files"]["references"]
    assert "references/python-api.md" in references
    linked = tool(skills_venv, home, "skill_view", {"name": name, "file_path": "references/python-api.md"})
    assert linked["success"] and linked["content"].strip() and linked["file_type"] == ".md"
    escaped = tool(skills_venv, home, "skill_view", {"name": name, "file_path": "../../plugin.yaml"}, code=1)
    assert "leaves the skill folder" in escaped["error"]
