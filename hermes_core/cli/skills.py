"""``hermes skills ...``: list, show, validate, scaffold and install skills (the Agent Skills standard)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..config.home import HermesHome
from ._common import UserError, echo_json, runtime
from .table import Column, echo_table

if TYPE_CHECKING:
    from ..skills import SkillEntry

__all__ = ["skills"]

SKELETON = """---
name: {name}
description: {description}
---

# {title}

## When to use

Say when an agent should load this skill.

## Steps

1. The first step, with the exact command.
2. How to check that it worked.
"""


@click.group()
def skills() -> None:
    """List, show, validate, create and install skills."""


def _row(entry: SkillEntry) -> dict[str, Any]:
    return {"name": entry.name, "description": entry.description, "source": entry.origin,
            "category": entry.category, "path": str(entry.folder or entry.document),
            "available": entry.available, "shadowed_by": entry.shadowed_by, "problem": entry.problem}


@skills.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_skills(as_json: bool) -> None:
    """List skills: plugins', the user's and (with HERMES_ENABLE_PROJECT_PLUGINS) the project's; shadowed too."""
    catalog = runtime().skill_catalog()
    rows = [_row(entry) for entry in [*catalog.entries.values(), *catalog.shadowed]]
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo(f"No skills. Add one to {catalog.root_of('user')} (`hermes skills new NAME`, "
                   "`hermes skills install PATH`).")
        return
    echo_table([Column("NAME"), Column("SOURCE"), Column("DESCRIPTION", shrink=True)],
               [[row["name"], row["source"], row["description"]] for row in rows],
               details=[[*([f"shadowed by {row['shadowed_by']}"] if row["shadowed_by"] else []),
                         *([f"problem: {row['problem']}"] if row["problem"] else []),
                         *([] if row["available"] else ["not for this platform"])] for row in rows])


@skills.command("show")
@click.argument("name")
@click.option("--file", "file_path", metavar="PATH", help="One of the skill's files instead of its SKILL.md body.")
@click.option("--json", "as_json", is_flag=True, help="What skill_view returns, as JSON.")
def show(name: str, file_path: str | None, as_json: bool) -> None:
    """Show a skill's body and its files (what the model's skill_view gets)."""
    from ..errors import SkillError
    from ..skills.view import view_skill

    try:
        viewed = view_skill(runtime().skill_catalog(), name, file_path, listing="`hermes skills list`")
    except SkillError as exc:
        raise UserError(str(exc)) from None
    if as_json:
        echo_json(viewed)
        return
    click.echo(viewed["content"].rstrip("\n"))
    for group, files in (viewed.get("linked_files") or {}).items():
        click.echo(f"\n{group}: {', '.join(files)}")
    for variable in viewed.get("missing_required_environment_variables", ()):
        click.echo(f"needs ${variable} (not set)", err=True)


@skills.command("validate")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (the exit status is the same).")
def validate(path: Path, as_json: bool) -> None:
    """Check a skill folder (or every skill below PATH) against the Agent Skills standard. Exit 1 if invalid."""
    from ..skills.validation import validate_skill

    reports = [validate_skill(folder) for folder in skill_folders(path)]
    if not reports:
        raise UserError(f"{path}: no SKILL.md here or below")
    if as_json:
        echo_json([{"path": str(r.document), "name": r.name, "valid": r.valid, "errors": [str(p) for p in r.errors],
                    "warnings": [str(p) for p in r.warnings]} for r in reports])
    else:
        for report in reports:
            for problem in report.errors:
                click.echo(str(problem))
            for problem in report.warnings:
                click.echo(f"warning: {problem}")
            if report.valid:
                click.echo(f"{report.document}: valid")
    if not all(report.valid for report in reports):
        raise click.exceptions.Exit(1)


def skill_folders(path: Path) -> list[Path]:
    """The skill at ``path`` (a folder with SKILL.md, or the file), else every skill folder below it."""
    from ..skills.document import SKILL_DOCUMENT
    from ..skills.sources import scan_root

    if path.name == SKILL_DOCUMENT or (path / SKILL_DOCUMENT).exists() or (path / SKILL_DOCUMENT).is_symlink():
        return [path]
    return [Path(found.folder) for found in scan_root(path)]


@skills.command("new")
@click.argument("name")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Where to create the skill's folder.")
@click.option("--description", default=None, help="What the skill does and when to use it.")
def new(name: str, directory: Path, description: str | None) -> None:
    """Create a skill folder NAME with a SKILL.md that passes `hermes skills validate`."""
    from ..skills.validation import name_problems

    problems = name_problems(name)
    if problems:
        raise UserError(f"invalid skill name: {'; '.join(problems)}")
    folder = directory / name
    if folder.exists():
        raise UserError(f"{folder} already exists")
    text = description or f"What {name} does, and when an agent should use it."
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKELETON.format(name=name, description=_yaml_text(text),
                                                     title=name.replace("-", " ").capitalize()), encoding="utf-8")
    click.echo(f"created {folder / 'SKILL.md'}; check it with `hermes skills validate {folder}`")


def _yaml_text(text: str) -> str:
    import json

    return json.dumps(" ".join(text.split()), ensure_ascii=False)  # a JSON string is a YAML string


@skills.command("install")
@click.argument("source")
@click.option("--force", is_flag=True, help="Replace a skill of the same name.")
def install(source: str, force: bool) -> None:
    """Install skills into $HERMES_HOME/skills: from a folder, a .zip, or an index id (ID, or ID:SKILL for one of
    its skills; the plugin's wheel is downloaded and read, never installed). Validated first; scripts never run."""
    from ..errors import SkillError
    from ..skills.install import InstalledSkill, install_from_wheel, install_skill

    user_root = HermesHome.from_env().skills_dir
    installed: list[InstalledSkill]
    try:
        if Path(source).exists() or Path(source).suffix == ".zip" or "/" in source or "\\" in source:
            installed = [install_skill(Path(source), user_root, force=force)]
        else:
            from ..errors import WheelError
            from ..index.wheelmeta import download_wheel

            entry, folders = _index_skills(source)
            try:
                with download_wheel(f"{entry.distribution}=={entry.version}") as wheel:
                    installed = install_from_wheel(wheel, folders, user_root, force=force)
            except WheelError as exc:
                raise SkillError(str(exc)) from None
    except SkillError as exc:
        raise UserError(str(exc)) from None
    for skill in installed:
        for warning in skill.warnings:
            click.echo(f"warning: {warning}")
        click.echo(f"{'replaced' if skill.replaced else 'installed'} skill {skill.name!r} in {skill.folder}")


def _index_skills(source: str) -> tuple[Any, list[str]]:
    """The index entry of ``ID`` (or ``ID:SKILL``) and the wheel folders of the skills to install."""
    from ..index.catalog import load_index

    plugin_id, _, wanted = source.partition(":")
    entry = load_index(home=HermesHome.from_env()).get(plugin_id)
    if entry is None:
        raise UserError(f"{source!r} is neither a file, a folder nor a plugin of the index "
                        "(`hermes plugins search` finds plugins)")
    skills = [skill for skill in entry.skills if not wanted or skill.name == wanted]
    if not skills:
        listed = ", ".join(skill.name for skill in entry.skills)
        raise UserError(f"plugin {plugin_id!r} ships no skill {wanted!r} (its skills: {listed})" if wanted and listed
                        else f"the index lists no skills for plugin {plugin_id!r}")
    return entry, [skill.path for skill in skills]
