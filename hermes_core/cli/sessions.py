"""``hermes sessions list|show|search|export|prune``: the session store of the home (``state.db``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from ..state.agent import AgentState
from ..state.store import SessionStore
from ._common import UserError, echo_json, home
from .table import Column, echo_table

__all__ = ["sessions"]


def _store() -> SessionStore:
    """The home's store, without loading any plugin (an absent one is made empty)."""
    hermes = home()
    return AgentState(hermes.root, hermes.config_data, {}).sessions


#: What ``list --json`` and ``show --json`` print of a session, and ``show --json`` of each message.
_SESSION_KEYS = ("id", "source", "title", "model", "started_at", "last_active", "message_count", "tool_call_count")
_MESSAGE_KEYS = ("id", "role", "content", "tool_calls", "tool_name", "tool_call_id", "timestamp")


def _when(stamp: Any) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if isinstance(stamp, int | float) else "-"


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False) if content else ""


@click.group()
def sessions() -> None:
    """List, read, search, export and prune recorded sessions."""


@sessions.command("list")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 10_000), help="Sessions to show.")
@click.option("--source", help="Only sessions of this source (cli, mcp, pydantic-ai, ...).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_sessions(limit: int, source: str | None, as_json: bool) -> None:
    """Sessions, the most recently active first."""
    rows = _store().sessions(limit, source=source)
    if as_json:
        echo_json([{**{key: row[key] for key in _SESSION_KEYS}, "preview": row["preview"]} for row in rows])
        return
    if not rows:
        click.echo("No sessions recorded yet.")
        return
    echo_table([Column("ID"), Column("SOURCE"), Column("MESSAGES", align=">"), Column("LAST ACTIVE"),
                Column("TITLE / FIRST MESSAGE", shrink=True)],
               [[row["id"], row["source"], str(row["message_count"]), _when(row["last_active"]),
                 row["title"] or row["preview"]] for row in rows])


@sessions.command("show")
@click.argument("session_id")
@click.option("--json", "as_json", is_flag=True, help="The session and its messages as JSON.")
def show_session(session_id: str, as_json: bool) -> None:
    """A session's messages."""
    exported = _store().export(session_id)
    if exported is None:
        raise UserError(f"no session {session_id!r}; see `hermes sessions list`")
    if as_json:
        stamps = [m["timestamp"] for m in exported["messages"]]
        echo_json({**{key: exported.get(key) for key in _SESSION_KEYS if key != "last_active"},
                   "last_active": max(stamps, default=exported["started_at"]), "ended_at": exported["ended_at"],
                   "messages": [{key: m.get(key) for key in _MESSAGE_KEYS} for m in exported["messages"]]})
        return
    click.echo(f"session {session_id} ({exported['source']}), started {_when(exported['started_at'])}, "
               f"{len(exported['messages'])} messages")
    for message in exported["messages"]:
        calls = message.get("tool_calls") or []
        what = ", ".join(f"{c.get('function', {}).get('name')}({c.get('function', {}).get('arguments')})"
                         for c in calls if isinstance(c, dict))
        label = f"{message['role']}" + (f" [{message['tool_name']}]" if message.get("tool_name") else "")
        click.echo(f"#{message['id']} {label}: {_text(message['content']) or ('calls ' + what if what else '')}")


@sessions.command("search")
@click.argument("query")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000), help="Matches to show.")
@click.option("--role", "roles", multiple=True, help="Only messages of this role (repeatable).")
@click.option("--sort", type=click.Choice(["newest", "oldest"]), help="By time instead of relevance.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def search_sessions(query: str, limit: int, roles: tuple[str, ...], sort: str | None, as_json: bool) -> None:
    """Messages matching QUERY (words, "phrases", OR, NOT, prefix*), best first."""
    rows = _store().search(query, roles=list(roles) or None, limit=limit, sort=sort)
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo("No matches.")
        return
    echo_table([Column("SESSION"), Column("MESSAGE", align=">"), Column("ROLE"), Column("WHEN"),
                Column("MATCH", shrink=True)],
               [[row["session_id"], str(row["id"]), row["role"], _when(row["timestamp"]),
                 " ".join(str(row["snippet"]).split())] for row in rows])


@sessions.command("export")
@click.argument("session_ids", nargs=-1)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to this file instead of standard output.")
def export_sessions(session_ids: tuple[str, ...], output: Path | None) -> None:
    """Sessions as JSON Lines (one session with its messages per line): those named, else all of them."""
    store = _store()
    ids = list(session_ids) or [row["id"] for row in store.sessions(store.session_count() or 1)]
    lines = []
    for session_id in ids:
        exported = store.export(session_id)
        if exported is None:
            raise UserError(f"no session {session_id!r}; see `hermes sessions list`")
        lines.append(json.dumps(exported, ensure_ascii=False))
    text = "".join(line + "\n" for line in lines)
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"exported {len(lines)} session(s) to {output}", err=True)


@sessions.command("prune")
@click.option("--older-than", "days", required=True, type=click.FloatRange(min=0),
              help="Delete sessions last active more than this many days ago.")
@click.option("--source", help="Only sessions of this source.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print the deleted ids as JSON.")
def prune_sessions(days: float, source: str | None, yes: bool, as_json: bool) -> None:
    """Delete old sessions, their messages and their todo lists."""
    if not yes and not as_json:
        click.confirm(f"Delete every session{f' of {source}' if source else ''} inactive for {days:g} days?",
                      abort=True)
    deleted = _store().prune(days, source=source)
    if as_json:
        echo_json({"deleted": deleted})
    else:
        click.echo(f"deleted {len(deleted)} session(s)")
