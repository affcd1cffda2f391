"""``hermes tools list|show|call``."""

from __future__ import annotations

import json
from typing import Any

import click

from ._common import UserError, echo_json, runtime
from .completion import tool_names, toolset_lists
from .table import Column, echo_table, state_colour

__all__ = ["tools"]


def _split(value: str | None) -> list[str] | None:
    return [part.strip() for part in value.split(",") if part.strip()] if value else None


@click.group()
def tools() -> None:
    """List, show and call tools."""


@tools.command("list")
@click.option("--toolsets", "enabled", metavar="A,B", help="Only the tools of these toolsets.",
              shell_complete=toolset_lists)
@click.option("--disable", "disabled", metavar="A,B", help="Leave out the tools of these toolsets.",
              shell_complete=toolset_lists)
@click.option("--all", "show_all", is_flag=True, help="Include unavailable tools, with the reason.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_tools(enabled: str | None, disabled: str | None, show_all: bool, as_json: bool) -> None:
    """List tools with their toolset, plugin and availability."""
    rt = runtime()
    names, unknown = rt.select_tools(_split(enabled), _split(disabled))
    if unknown:
        raise UserError(f"unknown toolset {', '.join(repr(u) for u in unknown)}; "
                        "see `hermes toolsets list` for the known ones")
    rows: list[dict[str, Any]] = []
    for name in names:
        entry = rt.registry.get(name)
        availability = rt.registry.check(name)
        if entry is None or not (availability.available or show_all):
            continue
        rows.append({"name": name, "toolset": entry.toolset, "plugin": entry.plugin,
                     "available": availability.available, "reason": availability.reason or None,
                     "description": entry.description.split("\n")[0]})
    for server in rt.mcp.status() if rt.mcp is not None else ():
        if server.state == "connecting":  # never listed: this command does not wait for it
            click.echo(f"note: MCP server '{server.name}' is connecting: its tools are not listed yet "
                       "(`hermes mcp list` connects to it)", err=True)
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo("No tools. Install a tool pack, e.g. `hermes plugins install file` (hermes-tools-file).")
        return
    columns = [Column("NAME"), Column("TOOLSET"), Column("DESCRIPTION", shrink=True)]
    if show_all:
        columns.insert(2, Column("STATUS", shrink=True, colour=state_colour))
    echo_table(columns, [[row["name"], row["toolset"],
                          *([_status(row["available"], row["reason"])] if show_all else []), row["description"]]
                         for row in rows])


def _status(available: bool, reason: str | None) -> str:
    return "available" if available else f"unavailable: {reason}"


def _entry_or_fail(name: str) -> Any:
    rt = runtime()
    entry = rt.registry.get(name)
    if entry is None:
        explained, close = rt.dispatcher.unknown_tool(name)
        known = close or explained != repr(name)  # it says why, or what is close
        raise UserError(f"unknown tool {explained}" + ("" if known else "; see `hermes tools list --all`"))
    return entry


@tools.command("show")
@click.argument("name", shell_complete=tool_names)
@click.option("--json", "as_json", is_flag=True, help="Print the definition exactly as the model sees it.")
def show_tool(name: str, as_json: bool) -> None:
    """Show a tool: its toolset, plugin, description and parameters (--json: the definition the model sees)."""
    entry = _entry_or_fail(name)
    rt = runtime()
    definition = next((d for d in rt.get_tool_definitions(quiet_mode=True) if d["function"]["name"] == name), None)
    if definition is None:
        reason = rt.registry.check(name).reason
        raise UserError(f"tool {name!r} is unavailable: {reason}")
    if as_json:
        echo_json(definition)
        return
    function = definition["function"]
    click.echo(click.style(name, bold=True) + f"  (toolset {entry.toolset}, "
               + (f"plugin {entry.plugin})" if entry.plugin else "registered by the host program)"))
    click.echo(function["description"])
    parameters = function["parameters"]
    properties: dict[str, Any] = parameters.get("properties") or {}
    if not properties:
        click.echo("\nNo parameters.")
        return
    required = set(parameters.get("required") or ())
    click.echo()
    echo_table([Column("PARAMETER"), Column("TYPE"), Column("REQUIRED"), Column("DESCRIPTION", shrink=True)],
               [[key, _type_of(schema), "yes" if key in required else "no",
                 str(schema.get("description", "")).split("\n")[0]] for key, schema in properties.items()])


def _type_of(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(map(str, kind))
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array of {_type_of(schema['items'])}"
    if "enum" in schema:
        return " | ".join(json.dumps(value) for value in schema["enum"])
    if kind is None and any(key in schema for key in ("anyOf", "oneOf")):
        return " | ".join(_type_of(option) for option in schema.get("anyOf") or schema.get("oneOf") or [])
    return str(kind or "any")


def _parse_arg(item: str) -> tuple[str, Any]:
    key, sep, raw = item.partition("=")
    if not sep or not key:
        raise UserError(f"--arg {item!r} must look like key=value")
    try:
        return key, json.loads(raw)
    except ValueError:
        return key, raw


@tools.command("call")
@click.argument("name", shell_complete=tool_names)
@click.argument("arguments", required=False)
@click.option("--arg", "pairs", multiple=True, metavar="KEY=VALUE",
              help="One argument; VALUE is read as JSON when it parses, else as text. Repeatable.")
def call_tool(name: str, arguments: str | None, pairs: tuple[str, ...]) -> None:
    """Call a tool through the full call path (hooks included) and print its result.

    ARGUMENTS is a JSON object; --arg adds or overrides single arguments. The call runs in a session of
    its own: plugins' on_session_start hooks fire before it, on_session_end after it.
    """
    _entry_or_fail(name)
    args: dict[str, Any] = {}
    if arguments:
        try:
            args = json.loads(arguments)
        except ValueError as exc:
            raise UserError(f"ARGUMENTS is not valid JSON ({exc}); quote it, e.g. '{{\"path\": \"a.txt\"}}'") \
                from None
        if not isinstance(args, dict):
            raise UserError("ARGUMENTS must be a JSON object, e.g. '{\"path\": \"a.txt\"}'")
    args.update(_parse_arg(item) for item in pairs)
    rt = runtime()
    with rt.session(platform="cli") as session_id:  # plugins set up and tear down per-session state
        result = rt.handle_function_call(name, args, session_id=session_id)
    click.echo(result)
    try:
        decoded = json.loads(result)
    except ValueError:
        return
    if isinstance(decoded, dict) and "error" in decoded:
        raise click.exceptions.Exit(1)
