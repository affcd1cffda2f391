"""``hermes toolsets list|show``."""

from __future__ import annotations

from typing import Any

import click

from ..tools.toolsets import HERMES_AGENT_TOOLSETS, LEGACY_TOOLSETS, PRESETS
from ._common import UserError, echo_json, runtime
from .completion import toolset_names
from .table import Column, echo_table

__all__ = ["toolsets"]


@click.group()
def toolsets() -> None:
    """List toolsets and what they resolve to."""


def _kind(name: str) -> str:
    rt = runtime()
    if name in PRESETS:
        return "preset"
    if name in LEGACY_TOOLSETS:
        return "legacy"
    if name in rt.toolsets.aliases():
        return "alias"
    if rt.toolsets.declared(name):
        return "composite"
    if name in HERMES_AGENT_TOOLSETS and name not in rt.registry.toolsets():
        return "hermes-agent"
    return "toolset"


def _describe(name: str) -> dict[str, Any]:
    rt = runtime()
    declared = rt.toolsets.declared(name)
    preset = PRESETS.get(name) or HERMES_AGENT_TOOLSETS.get(name)
    includes = sorted({i for t in declared for i in t.includes} | set(preset.includes if preset else ()))
    description = next((t.description for t in declared if t.description), preset.description if preset else "")
    return {"name": name, "kind": _kind(name), "description": description, "tools": rt.resolve_toolset(name),
            "includes": includes, "legacy_names": rt.toolsets.legacy_names_for(name),
            "alias_of": rt.toolsets.aliases().get(name), "left_out": rt.toolsets.left_out(name)}


@toolsets.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_toolsets(as_json: bool) -> None:
    """List every toolset that has at least one installed tool."""
    rows = [_describe(name) for name in runtime().toolsets.names()]
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo("No toolsets: no tools are installed.")
        return
    echo_table([Column("NAME"), Column("KIND"), Column("TOOLS", align=">"), Column("DESCRIPTION", shrink=True)],
               [[row["name"], row["kind"], str(len(row["tools"])), row["description"]] for row in rows])


@toolsets.command("show")
@click.argument("name", shell_complete=toolset_names)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def show_toolset(name: str, as_json: bool) -> None:
    """Show the tools a toolset resolves to, what it includes, the legacy names that map to it and, for a name of
    Hermes Agent's, which of its tools are left out and why."""
    if not runtime().toolsets.is_known(name):
        raise UserError(f"unknown toolset {name!r}; see `hermes toolsets list`")
    row = _describe(name)
    if as_json:
        echo_json(row)
        return
    click.echo(f"{row['name']} ({row['kind']}){': ' + str(row['description']) if row['description'] else ''}")
    for key in ("tools", "includes", "legacy_names"):
        values = row[key]
        click.echo(f"  {key.replace('_', ' ')}: {', '.join(values) if values else '-'}")
    if row["left_out"]:  # what Hermes Agent's toolset of this name has and this one does not
        click.echo(f"  left out ({len(row['left_out'])} of Hermes Agent's tools):")
        for reason, tools in _grouped(row["left_out"]).items():
            click.echo(f"    {', '.join(tools)}: {reason}")


def _grouped(left_out: dict[str, str]) -> dict[str, list[str]]:
    """Tools by the reason they are left out."""
    grouped: dict[str, list[str]] = {}
    for tool, reason in left_out.items():
        grouped.setdefault(reason, []).append(tool)
    return grouped
