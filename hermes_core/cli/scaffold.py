"""``hermes plugins new``: a new plugin project from the template."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import UserError, require_extra

__all__ = ["new"]


@click.command("new")
@click.argument("name")
@click.option("--no-input", is_flag=True, help="Ask nothing: take the template's defaults for what is not given.")
@click.option("-o", "--output-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Where to create the project's directory.")
@click.option("--toolset", metavar="T", help="Toolset of the example tool (default: the plugin's name).")
@click.option("--with-hook", is_flag=True, help="Include a pre_tool_call hook example.")
@click.option("--with-skill", is_flag=True, help="Ship a skill (SKILL.md) declared in plugin.yaml.")
@click.option("--overwrite", is_flag=True, help="Render into the project's directory even if it exists.")
def new(name: str, no_input: bool, output_dir: Path, toolset: str | None, with_hook: bool, with_skill: bool,
        overwrite: bool) -> None:
    """Create the plugin project NAME: a pip-installable package with a tool, tests, CI and a README.

    NAME is the plugin's id, e.g. `weather`; the project is created in ./hermes-plugin-NAME.
    """
    require_extra("cookiecutter", "scaffold", "plugins new")
    from ..authoring.scaffold import ScaffoldError, render

    try:
        project = render(name, output_dir, no_input=no_input, toolset=toolset, with_hook=with_hook,
                         with_skill=with_skill, overwrite=overwrite)
    except ScaffoldError as exc:
        raise UserError(str(exc)) from None
    shown = _relative(project)
    click.echo(f"Created the plugin project {shown}/")
    click.echo("Next:")
    click.echo(f"  cd {shown}")
    click.echo('  pip install -e ".[test]"')
    click.echo("  pytest")
    click.echo("  hermes tools list")


def _relative(path: Path) -> Path:
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path
