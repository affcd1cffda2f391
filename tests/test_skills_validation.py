"""Skill validation agrees with the Agent Skills standard's reference implementation (``skills-ref``) on the same
good and bad skills, and says where each problem is."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.skills.validation import validate_skill

skills_ref = pytest.importorskip("skills_ref", reason="skills-ref is a test dependency (the dev extra)")

GOOD = {
    "minimal": "---\nname: minimal\ndescription: The least a skill needs.\n---\n# Minimal\n",
    "all-fields": "---\nname: all-fields\ndescription: Every field of the standard.\nlicense: Apache-2.0\n"
                  "compatibility: Needs git and network access\nallowed-tools: Bash(git:*) Read\n"
                  "metadata:\n  author: someone\n  version: '1.0'\n---\nBody with [a link](references/a.md).\n",
    "at-the-limits": "---\nname: " + "a" * 64 + "\ndescription: " + "d" * 1024 + "\n---\n",
    "digits-2-and-hyphens": "---\nname: digits-2-and-hyphens\ndescription: Fine.\n---\n",
}
#: Bad skills, each with the words Hermes' message must hold.
BAD = {
    "no-front-matter": ("# Just Markdown\n", "no YAML front matter"),
    "unclosed": ("---\nname: unclosed\ndescription: x\n", "not closed"),
    "upper": ("---\nname: Upper\ndescription: x\n---\n", "lower-case"),
    "under_score": ("---\nname: under_score\ndescription: x\n---\n", "only letters, digits and '-'"),
    "-leading": ("---\nname: -leading\ndescription: x\n---\n", "start or end"),
    "double--hyphen": ("---\nname: double--hyphen\ndescription: x\n---\n", "'--'"),
    "too-long": ("---\nname: " + "a" * 65 + "\ndescription: x\n---\n", "longer than 64"),
    "other-folder": ("---\nname: not-the-folder\ndescription: x\n---\n", "differs from its folder"),
    "no-description": ("---\nname: no-description\n---\n", "missing required field 'description'"),
    "empty-description": ("---\nname: empty-description\ndescription: ''\n---\n", "non-empty"),
    "long-description": ("---\nname: long-description\ndescription: " + "d" * 1025 + "\n---\n", "longer than 1024"),
    "no-name": ("---\ndescription: x\n---\n", "missing required field 'name'"),
    "long-compatibility": ("---\nname: long-compatibility\ndescription: x\ncompatibility: " + "c" * 501 + "\n---\n",
                           "'compatibility' is longer"),
    "not-a-mapping": ("---\n- a\n- b\n---\n", "must be a mapping"),
}


def make(root: Path, folder: str, text: str) -> Path:
    skill = root / folder
    skill.mkdir()
    (skill / "SKILL.md").write_text(text, encoding="utf-8")
    if "references/a.md" in text:
        (skill / "references").mkdir()
        (skill / "references" / "a.md").write_text("# A\n")
    return skill


@pytest.mark.parametrize("folder", sorted(GOOD))
def test_a_good_skill_is_valid_for_both(tmp_path: Path, folder: str) -> None:
    name = "a" * 64 if folder == "at-the-limits" else folder
    skill = make(tmp_path, name, GOOD[folder])
    assert skills_ref.validate(skill) == []
    report = validate_skill(skill)
    assert report.errors == [] and report.warnings == []


@pytest.mark.parametrize("folder", sorted(BAD))
def test_a_bad_skill_is_invalid_for_both_and_hermes_names_file_line_and_problem(tmp_path: Path, folder: str) -> None:
    text, words = BAD[folder]
    skill = make(tmp_path, "a" * 65 if folder == "too-long" else folder, text)
    assert skills_ref.validate(skill) != []
    report = validate_skill(skill)
    assert not report.valid
    assert any(words in problem.message for problem in report.errors), report.errors
    assert all(str(problem).startswith(f"{skill / 'SKILL.md'}:") for problem in report.errors)


def test_problems_carry_the_line_of_their_field(tmp_path: Path) -> None:
    skill = make(tmp_path, "lines", "---\ndescription: ok\nlicense: MIT\nname: Lines\n---\n\nSee [x](missing.md)\n")
    assert [(problem.line, problem.message.split(" ")[0]) for problem in validate_skill(skill).errors] == \
        [(4, "name"), (7, "linked")]


def test_fields_outside_the_standard_warn_where_the_reference_refuses(tmp_path: Path) -> None:
    # Hermes Agent's own skills carry `platforms`, `tags` ...: Hermes reads them, so it only warns.
    skill = make(tmp_path, "agent-extras", "---\nname: agent-extras\ndescription: x\nplatforms: [linux]\n---\n")
    assert skills_ref.validate(skill) != []
    report = validate_skill(skill)
    assert report.valid and [w.message.split(" ")[1] for w in report.warnings] == ["'platforms'"]


def test_a_link_out_of_the_skill_folder_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "outside.md").write_text("outside")
    skill = make(tmp_path, "escapes", "---\nname: escapes\ndescription: x\n---\n[out](../outside.md) "
                                      "[site](https://example.org/x.md) [anchor](#steps)\n")
    assert [problem.message for problem in validate_skill(skill).errors] == \
        ["link '../outside.md': '../outside.md' leaves the skill folder ('..' is not allowed)"]


def test_a_skill_made_by_skill_manage_passes_both(tmp_path: Path) -> None:
    from hermes_core import Runtime
    from hermes_core.plugins.discovery import candidate_from_module

    runtime = Runtime(home=tmp_path / "home", entry_points=(), environ={})
    runtime.load_candidate(candidate_from_module("hermes_plugin_skills", "skills"))
    content = "---\nname: made-here\ndescription: Made by the model.\n---\n# Made here\n"
    runtime.handle_function_call("skill_manage", {"action": "create", "name": "made-here", "content": content})
    skill = tmp_path / "home" / "skills" / "made-here"
    assert skills_ref.validate(skill) == [] and validate_skill(skill).valid
