"""``hermes tools list|show|call``."""

from __future__ import annotations

import functools
import json
import sys
from typing import Any

import click

from ..host.views import select_names
from ..runtime import Runtime
from ..state.agent import OneCall
from ..tools.registry import ToolAnnotations, ToolEntry
from ._common import UserError, echo_json, home, list_timeout, not_answered, runtime, waiting_for_servers
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
    """List tools with their toolset, what they may do (read-only, destructive, writes, or - when they do not
    say) and their availability. Under `approvals.policy: read-only` only read-only tools are available."""
    rt = runtime()
    if rt.mcp is not None:  # servers never listed: waited for at most mcp.list_timeout
        timeout = list_timeout(rt)
        not_answered(rt.mcp.list_new(timeout, waiting_for_servers(timeout)), timeout)
    names, unknown = select_names(rt.registry, rt.toolsets, _split(enabled), _split(disabled))
    if unknown:
        raise UserError(f"unknown toolset {', '.join(repr(u) for u in unknown)}; "
                        "see `hermes toolsets list` for the known ones")
    rows: list[dict[str, Any]] = []
    for name in names:
        entry = rt.registry.get(name)
        if entry is None:
            continue
        row = _row(rt, entry)
        if row["available"] or show_all:
            rows.append(row)
    for server in rt.mcp.status() if rt.mcp is not None else ():
        if server.state == "connecting" and not server.tools:  # it did not answer within its connect_timeout
            click.echo(f"note: MCP server '{server.name}' is still connecting: its tools are not listed yet "
                       "(`hermes mcp list` shows its state)", err=True)
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo("No tools. Install a tool pack, e.g. `hermes plugins install file` (hermes-tools-file).")
        return
    columns = [Column("NAME"), Column("TOOLSET"), Column("DOES"), Column("DESCRIPTION", shrink=True)]
    if show_all:
        columns.insert(3, Column("STATUS", shrink=True, colour=state_colour))
    echo_table(columns, [[row["name"], row["toolset"], ToolAnnotations.of(row["annotations"]).label(),
                          *([_status(row["available"], row["reason"])] if show_all else []), row["description"]]
                         for row in rows])


def _status(available: bool, reason: str | None) -> str:
    return "available" if available else f"unavailable: {reason}"


def _unavailable(rt: Runtime, entry: ToolEntry) -> str | None:
    """Why the model is not offered ``entry`` now (its checks, or the approval policy), or None when it is."""
    availability = rt.registry.check(entry.name)
    return availability.reason or "unavailable" if not availability.available else rt.scope.refusal(entry)


def _row(rt: Runtime, entry: ToolEntry) -> dict[str, Any]:
    """What `tools list --json` prints of one tool."""
    reason = _unavailable(rt, entry)
    return {"name": entry.name, "toolset": entry.toolset, "plugin": entry.plugin, "available": reason is None,
            "reason": reason, "annotations": entry.annotations.as_dict(),
            "description": entry.description.split("\n")[0]}


def _entry_or_fail(name: str) -> Any:
    rt = runtime()
    entry = rt.registry.get(name)
    if entry is None:  # it may be the tool of an MCP server never listed: list those, once
        rt.list_new_mcp_servers()
        entry = rt.registry.get(name)
    if entry is None:
        explained, close = rt.dispatcher.unknown_tool(name)
        known = close or explained != repr(name)  # it says why, or what is close
        raise UserError(f"unknown tool {explained}" + ("" if known else "; see `hermes tools list --all`"))
    return entry


@tools.command("show")
@click.argument("name", shell_complete=tool_names)
@click.option("--json", "as_json", is_flag=True,
              help="Everything about the tool: its annotations, availability and definition (unavailable too).")
def show_tool(name: str, as_json: bool) -> None:
    """Print a tool's definition exactly as the model sees it."""
    rt = runtime()
    entry = _entry_or_fail(name)
    row = _row(rt, entry)
    definition = None if not row["available"] else \
        next((d for d in rt.get_tool_definitions(quiet_mode=True) if d["function"]["name"] == name), None)
    if as_json:
        echo_json({**row, "description": entry.description, "parallel_safe": entry.parallel_safe,
                   "path_args": list(entry.path_args), "definition": definition})
        return
    if definition is None:
        raise UserError(f"tool {name!r} is unavailable: {row['reason']}")
    echo_json(definition)


def _parse_arg(item: str, properties: dict[str, Any]) -> tuple[str, Any]:
    """``key=value``: the value as JSON when it parses, else as text; text whenever the tool's schema takes only
    text there (``content=true`` is the text "true")."""
    key, sep, raw = item.partition("=")
    if not sep or not key:
        raise UserError(f"--arg {item!r} must look like key=value")
    declared = properties.get(key, {}).get("type") if isinstance(properties.get(key), dict) else None
    if declared == "string" or declared == ["string"]:
        return key, raw
    try:
        return key, json.loads(raw)
    except ValueError:
        return key, raw


@tools.command("call")
@click.argument("name", shell_complete=tool_names)
@click.argument("arguments", required=False)
@click.option("--arg", "pairs", multiple=True, metavar="KEY=VALUE",
              help="One argument; VALUE is read as JSON when it parses, else as text. Repeatable.")
@click.option("--session", "session", metavar="NAME",
              help="Run the call in this named session, kept alive between commands (its browser page, terminal "
                   "folder, todo list, recorded calls); default: a new one for this call.")
def call_tool(name: str, arguments: str | None, pairs: tuple[str, ...], session: str | None) -> None:
    """Call a tool through the full call path (hooks included) and print its result.

    ARGUMENTS is a JSON object; --arg adds or overrides single arguments. The call runs in a session of its own,
    unless --session names one: then a small daemon of this home keeps that session alive, so the next
    `tools call --session NAME` sees the page the last one opened (`hermes tools end NAME` ends it; it ends by
    itself after 15 idle minutes). The call and its result are recorded in the session store (`hermes sessions`,
    under NAME) unless sessions.record is off. On a terminal, a call outside a named session that asks the user
    (clarify) prompts, and a long one shows its progress; otherwise questions are refused and nothing is drawn.
    """
    runtime(for_tool=name)  # loads first only what this call needs: one tool among thousands
    entry = _entry_or_fail(name)
    args: dict[str, Any] = {}
    if arguments:
        try:
            args = json.loads(arguments)
        except ValueError as exc:
            raise UserError(f"ARGUMENTS is not valid JSON ({exc}); quote it, e.g. '{{\"path\": \"a.txt\"}}'") \
                from None
        if not isinstance(args, dict):
            raise UserError("ARGUMENTS must be a JSON object, e.g. '{\"path\": \"a.txt\"}'")
    properties = (entry.schema.get("parameters") or {}).get("properties") or {}
    args.update(_parse_arg(item, properties if isinstance(properties, dict) else {}) for item in pairs)
    from . import sessiond  # (off the start-up path of the other commands)

    if session is not None and sessiond.supported():
        try:
            result = sessiond.call_in_session(home().root, session, name, args)
        except sessiond.SessionDaemonError as exc:
            raise UserError(f"session {session!r}: {exc}") from None
        _print_result(result)
        return
    from .interaction import TerminalProgress, terminal_question  # (only a call draws or prompts)

    rt = runtime()
    # on a terminal, the tool's questions are prompts and its progress a spinner; piped, neither
    stderr = getattr(sys.stderr, "inner", sys.stderr)  # (the sanitised stream would show the spinner's \r)
    progress = TerminalProgress(stderr) if stderr.isatty() else None
    rt.set_user_callback(functools.partial(terminal_question, progress=progress))
    rt.set_progress_callback(progress)
    try:
        with rt.session(platform="cli", session_id=session) as session_id:  # plugins' per-session state
            result = rt.handle_function_call(name, args, session_id=session_id)
            rt.agent_state.record_calls(session_id, [OneCall(name, args, "cli-call")], [result], source="cli")
    finally:
        if progress is not None:
            progress.clear()
    _print_result(result)


def _print_result(result: str) -> None:
    """Print a call's result; exit 1 when it is an error."""
    click.echo(result)
    try:
        decoded = json.loads(result)
    except ValueError:
        return
    if isinstance(decoded, dict) and "error" in decoded:
        raise click.exceptions.Exit(1)


@tools.command("end")
@click.argument("session")
def end(session: str) -> None:
    """End the named session `tools call --session NAME` keeps alive (its browser, terminal), and its daemon."""
    from . import sessiond

    try:
        ended = sessiond.supported() and sessiond.end_session(home().root, session)
    except sessiond.SessionDaemonError as exc:
        raise UserError(str(exc)) from None
    click.echo(f"session {session!r} ended" if ended else f"no session {session!r} is running")
