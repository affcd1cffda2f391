"""``hermes checkpoints list|diff|restore|prune``: the workspace's checkpoints (``checkpoints: true`` takes them)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..checkpoints.turns import Checkpoints
from ..errors import HermesError
from ._common import UserError, echo_json
from .table import Column, echo_table

__all__ = ["checkpoints"]

T = TypeVar("T")

_WORKSPACE = click.option(
    "--workspace", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="The workspace (default: $HERMES_WORKSPACE, else the current folder).")
_JSON = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


@click.group()
def checkpoints() -> None:
    """List, compare and restore the workspace's checkpoints."""


def _checkpoints(workspace: Path | None) -> Checkpoints:
    from ..runtime import Runtime

    return Runtime(workspace=workspace or os.environ.get("HERMES_WORKSPACE") or Path.cwd()).checkpoints


def _run(action: Callable[[], T]) -> T:
    try:
        return action()
    except HermesError as exc:
        raise UserError(str(exc)) from None


def _changes(entry: Any) -> str:
    if not entry.files_changed:
        return "-"
    return f"{entry.files_changed} file{'s' if entry.files_changed != 1 else ''} +{entry.insertions} -{entry.deletions}"


@checkpoints.command("list")
@_WORKSPACE
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Show at most this many (default: "
                                                                        "checkpoints.max_snapshots).")
@_JSON
def list_checkpoints(workspace: Path | None, limit: int | None, as_json: bool) -> None:
    """List the workspace's checkpoints, newest first, with what changed in each."""
    store = _checkpoints(workspace)
    entries = _run(lambda: store.list(limit))
    if as_json:
        echo_json([entry._asdict() for entry in entries])
        return
    if not entries:
        state = "on" if store.enabled else "off (checkpoints: true in config.yaml turns them on)"
        click.echo(f"No checkpoints of {store.workspace}; checkpoints are {state}.")
        return
    echo_table([Column("ID"), Column("CREATED"), Column("CHANGES"), Column("REASON", shrink=True)],
               [[entry.short_id, entry.created.replace("T", " "), _changes(entry), entry.reason]
                for entry in entries])


@checkpoints.command("diff")
@click.argument("checkpoint_id", metavar="ID")
@_WORKSPACE
@click.option("--stat", "stat_only", is_flag=True, help="Only the files and the number of lines changed.")
@_JSON
def diff_checkpoint(checkpoint_id: str, workspace: Path | None, stat_only: bool, as_json: bool) -> None:
    """Show how the workspace differs from checkpoint ID (from the checkpoint to now)."""
    store = _checkpoints(workspace)
    diff = _run(lambda: store.diff(checkpoint_id))
    if as_json:
        echo_json({"id": diff.id, "stat": diff.stat, **({} if stat_only else {"patch": diff.patch})})
        return
    if not diff.stat:
        click.echo(f"The workspace is as checkpoint {diff.id[:8]} holds it.")
        return
    click.echo(diff.stat)
    if not stat_only:
        click.echo()
        click.echo(diff.patch, nl=not diff.patch.endswith("\n"))


@checkpoints.command("restore")
@click.argument("checkpoint_id", metavar="ID")
@click.option("--path", "path", default=None, help="Restore only this file or folder (inside the workspace).")
@_WORKSPACE
@_JSON
def restore_checkpoint(checkpoint_id: str, path: str | None, workspace: Path | None, as_json: bool) -> None:
    """Make the workspace (or --path of it) as checkpoint ID holds it: its files written back, files made since
    deleted. The workspace as it was is checkpointed first, so the restore can be undone."""
    store = _checkpoints(workspace)
    restored = _run(lambda: store.restore(checkpoint_id, path))
    if as_json:
        echo_json({"id": restored.id, "reason": restored.reason, "path": restored.path,
                   "before": restored.before._asdict()})
        return
    what = "the workspace" if restored.path == "." else restored.path
    click.echo(f"Restored {what} from checkpoint {restored.id[:8]} ({restored.reason}).")
    click.echo(f"What it replaced is checkpoint {restored.before.short_id}: "
               f"`hermes checkpoints restore {restored.before.short_id}` undoes this.")


@checkpoints.command("prune")
@_WORKSPACE
@_JSON
def prune_checkpoints(workspace: Path | None, as_json: bool) -> None:
    """Drop the checkpoints of workspaces that are gone or untouched for checkpoints.retention_days, then the
    oldest while the store is over checkpoints.max_total_size_mb."""
    dropped = _run(_checkpoints(workspace).prune)
    if as_json:
        echo_json({"dropped_workspaces": dropped})
        return
    click.echo(f"Pruned; dropped the checkpoints of {len(dropped)} workspace{'s' if len(dropped) != 1 else ''}"
               + (": " + ", ".join(dropped) if dropped else "."))
