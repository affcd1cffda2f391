"""``hermes memory show|edit|pending|approve|reject``: the persistent memory of the home (``memories/MEMORY.md`` and
``USER.md``), the same files the ``memory`` tool writes and ``runtime.memory_prompt()`` reads, and the writes staged
for approval (``memory.write_approval``)."""

from __future__ import annotations

from typing import Any

import click

from ..config.cachefile import write_atomically
from ..state.memory import ENTRY_DELIMITER, TARGETS, MemoryFiles
from ..state.pending import PendingWrites, apply_pending
from ..state.threats import scan_for_threats
from ._common import UserError, echo_json, home

__all__ = ["memory"]


def _files() -> MemoryFiles:
    hermes = home()
    return MemoryFiles.of(hermes.root, hermes.config_data().get("memory") or {})


@click.group()
def memory() -> None:
    """Show and edit the agent's persistent memory."""


@memory.command("show")
@click.option("--target", type=click.Choice(TARGETS), help="Only MEMORY.md (memory) or USER.md (user).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def show_memory(target: str | None, as_json: bool) -> None:
    """The entries of each memory file, with its usage of its character limit."""
    files = _files()
    report: dict[str, dict[str, Any]] = {}
    for name in [target] if target else TARGETS:
        entries = files.entries(name)
        used, limit = files.usage(name, entries)
        report[name] = {"file": str(files.path(name)), "entries": entries, "chars": used, "limit": limit,
                        "flagged": {entry[:80]: found for entry in entries if (found := scan_for_threats(entry))}}
    if as_json:
        echo_json(report)
        return
    for name, shown in report.items():
        click.echo(f"{name} ({shown['file']}): {len(shown['entries'])} entries, {shown['chars']:,}/"
                   f"{shown['limit']:,} chars")
        for entry in shown["entries"]:
            flag = " [kept out of the prompt: " + ", ".join(shown["flagged"][entry[:80]]) + "]" \
                if entry[:80] in shown["flagged"] else ""
            click.echo("  - " + entry.replace("\n", "\n    ") + flag)


@memory.command("edit")
@click.option("--target", type=click.Choice(TARGETS), default="memory", show_default=True,
              help="MEMORY.md (memory) or USER.md (user).")
def edit_memory(target: str) -> None:
    """Edit a memory file in $EDITOR: one entry per paragraph block, entries separated by a line holding only §."""
    files = _files()
    path = files.path(target)
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    edited = click.edit(before, extension=".md", require_save=True)
    if edited is None:
        click.echo("not changed")
        return
    entries = [entry.strip() for entry in edited.replace("\r\n", "\n").split(ENTRY_DELIMITER) if entry.strip()]
    with files.locked(target):
        now = path.read_text(encoding="utf-8") if path.exists() else ""
        if now != before:
            raise UserError(f"{path} changed while you edited it (the memory tool wrote to it); nothing was "
                            "written: run the edit again")
        write_atomically(path, ENTRY_DELIMITER.join(entries))
    used, limit = files.usage(target, entries)
    click.echo(f"{path}: {len(entries)} entries, {used:,}/{limit:,} chars")
    if used > limit:
        click.echo(f"warning: over the limit of {limit:,} characters: the memory tool refuses to add until "
                   "entries are removed", err=True)
    for entry in entries:
        if scan_for_threats(entry):
            click.echo(f"warning: kept out of the system prompt (looks like an injection): {entry[:80]}", err=True)


@memory.command("pending")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def pending_memory(as_json: bool) -> None:
    """The memory writes staged for approval (memory.write_approval: true, with nobody to ask at the time)."""
    records = PendingWrites(home().root).list()
    if as_json:
        echo_json(records)
        return
    if not records:
        click.echo("no memory writes are waiting for approval")
    for record in records:
        click.echo(f"{record.get('id')}  {record.get('summary')}")


@memory.command("approve")
@click.argument("pending_id")
def approve_memory(pending_id: str) -> None:
    """Apply a staged memory write (with the memory tool's limits and checks) and forget it."""
    pending = PendingWrites(home().root)
    record = pending.get(pending_id)
    if record is None:
        raise UserError(f"no staged memory write {pending_id!r}: see `hermes memory pending`")
    result = apply_pending(_files(), record["payload"])
    if result.get("success") is not True:
        raise UserError(f"{pending_id} was not applied (it stays staged): {result.get('error')}")
    pending.discard(pending_id)
    click.echo(f"applied {pending_id}: {record.get('summary')}")


@memory.command("reject")
@click.argument("pending_id")
def reject_memory(pending_id: str) -> None:
    """Forget a staged memory write without applying it."""
    if not PendingWrites(home().root).discard(pending_id):
        raise UserError(f"no staged memory write {pending_id!r}: see `hermes memory pending`")
    click.echo(f"rejected {pending_id}")
