"""``hermes index ...``: maintain the plugin index; and ``search_command``, mounted as ``hermes plugins search``."""

from __future__ import annotations

import shlex
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..index.catalog import IndexEntry, PluginIndex, PluginIndexError, load_index

if TYPE_CHECKING:
    from ..index.build import IndexLayout
from ._common import UserError, echo_json, home
from .completion import index_ids
from .table import Column, clip, echo_table

__all__ = ["describe_entry", "entry_record", "index", "search_command", "show_entry"]


def _load(index_url: str | None) -> PluginIndex:
    try:
        return load_index(index_url, home())
    except PluginIndexError as exc:
        raise UserError(str(exc)) from None


def installed_version(entry: IndexEntry) -> str | None:
    """The installed version of the entry's distribution, if any (read from metadata; nothing is imported)."""
    try:
        return distribution(entry.distribution).version
    except PackageNotFoundError:
        return None


def entry_record(entry: IndexEntry, score: float | None = None) -> dict[str, Any]:
    """The JSON shape of one index entry in ``search --json`` and ``show --json``."""
    record = entry.model_dump(mode="json")
    record["installed"] = installed_version(entry)
    if score is not None:
        record["score"] = round(score, 2)
    return record


def _pip_requirement(entry: IndexEntry) -> str:
    """What ``hermes plugins install`` hands pip for ``entry``: a first-party pack's folder in the repository
    hermes-tools comes from (the packs are not on the package index yet), else the index's requirement."""
    from ..index.installer import install_target

    target = install_target(entry.id, PluginIndex.of([entry], source="info"))
    return shlex.join([target.requirement, *target.also])


def describe_entry(entry: IndexEntry) -> list[str]:
    """Human-readable lines about a plugin that may not be installed (``hermes plugins info`` uses them)."""
    installed = installed_version(entry)
    lines = [f"{entry.id} {entry.version}" + (" (first-party)" if entry.first_party else ""),
             f"  {entry.summary}" if entry.summary else "",
             f"  distribution: {entry.distribution}" + (f" (installed: {installed})" if installed else
                                                        " (not installed)"),
             f"  install:      hermes plugins install {entry.id}   (pip install {_pip_requirement(entry)})"]
    for label, value in (("homepage", entry.homepage), ("repository", entry.repository),
                         ("license", entry.license), ("author", entry.author),
                         ("requires", f"hermes {entry.requires_hermes}" if entry.requires_hermes else None),
                         ("tags", ", ".join(entry.tags)), ("toolsets", ", ".join(entry.toolsets)),
                         ("hooks", ", ".join(entry.hooks))):
        if value:
            lines.append(f"  {label + ':':<13} {value}")
    if entry.tools:
        lines.append(f"  tools ({len(entry.tools)}):")
        width = max(len(tool.name) for tool in entry.tools)
        lines += [f"    {tool.name:<{width}}  {clip(tool.description, 100)}".rstrip() for tool in entry.tools]
    if entry.skills:
        lines.append(f"  skills ({len(entry.skills)}; hermes skills install {entry.id}):")
        width = max(len(skill.name) for skill in entry.skills)
        lines += [f"    {skill.name:<{width}}  {clip(skill.description, 100)}" for skill in entry.skills]
    if entry.requires_env:
        lines.append("  environment:")
        for env in entry.requires_env:
            detail = " ".join(part for part in (env.description, f"<{env.url}>" if env.url else "",
                                                "(secret)" if env.secret else "") if part)
            lines.append(f"    {env.name}" + (f"  {detail}" if detail else ""))
    lines += [f"  note: {note}" for note in entry.notes]
    measured = entry.compatibility
    if measured is not None:
        lines.append(f"  with hermes:  {measured.status}" + (f": {measured.reason}" if measured.reason else "") +
                     f" (measured {measured.date}, hermes-tools {measured.hermes_tools})")
    return [line for line in lines if line]


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def show_entry(entry: IndexEntry, as_json: bool) -> None:
    """Print one entry, as text or JSON."""
    if as_json:
        echo_json(entry_record(entry))
    else:
        click.echo("\n".join(describe_entry(entry)))


_INDEX_OPTION = click.option("--index", "index_url", metavar="PATH|URL",
                             help="Read this index instead of HERMES_INDEX_URL, index.url or the bundled one.")


@click.command("search")
@click.argument("query", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True, help="Show at most this many.")
@_INDEX_OPTION
def search_command(query: tuple[str, ...], as_json: bool, limit: int, index_url: str | None) -> None:
    """Search the plugin index by id, tool name, tag and summary (installed or not)."""
    plugin_index = _load(index_url)
    text = " ".join(query)
    results = plugin_index.search(text)[:limit]
    if as_json:
        echo_json([entry_record(entry, score) for score, entry in results])
        return
    if not results:
        click.echo(f"No plugin in the index matches {text!r}.")
        return
    echo_table([Column("ID"), Column("VERSION"), Column("INSTALLED", colour=lambda v: "green" if v else None),
                Column("WITH HERMES"), Column("SUMMARY", shrink=True)],
               [[entry.id, entry.version, installed_version(entry) or "",
                 entry.compatibility.status if entry.compatibility else "", entry.summary] for _, entry in results])
    click.echo("\n`hermes plugins info ID` for details, `hermes plugins install ID` to install.")


@click.group()
def index() -> None:
    """Maintain the plugin index (registry-index/)."""


_ROOT_OPTION = click.option("--root", type=click.Path(file_okay=False, path_type=Path),
                            help="The registry-index/ folder (default: found in the current folder or above).")


def _layout(root: Path | None) -> IndexLayout:
    from ..index.build import find_layout

    try:
        return find_layout(root)
    except PluginIndexError as exc:
        raise UserError(str(exc)) from None


@index.command("fetch")
@click.argument("packages", nargs=-1, required=True, metavar="PACKAGE[==VERSION]...")
@_ROOT_OPTION
@click.option("--find-links", "find_links", multiple=True, metavar="DIR|URL", help="Passed to pip download.")
@click.option("--index-url", metavar="URL", help="Passed to pip download.")
@click.option("--no-index", is_flag=True, help="Passed to pip download: only --find-links.")
@click.option("--first-party/--third-party", default=None,
              help="Mark the entries first-party (default: a folder under hermes_plugins/ is, anything else not).")
@click.option("--force", is_flag=True, help="Replace an entry whose id belongs to another distribution.")
def fetch_command(packages: tuple[str, ...], root: Path | None, find_links: tuple[str, ...], index_url: str | None,
                  no_index: bool, first_party: bool | None, force: bool) -> None:
    """Write index entries from plugins' wheels, downloaded with pip and read without installing them.

    PACKAGE is a requirement (NAME or NAME==VERSION), a .whl file, or a project folder (built with pip wheel).
    """
    from ..index.build import fetch
    from ..index.wheelmeta import WheelError

    layout = _layout(root)
    failed = 0
    for spec in packages:
        click.echo(f"Fetching {spec} ...", err=True)
        try:
            written = fetch(spec, layout, find_links=find_links, index_url=index_url, no_index=no_index,
                            first_party=first_party, force=force)
        except (WheelError, PluginIndexError) as exc:
            click.echo(f"Error: {exc}", err=True)
            failed += 1
            continue
        for path, entry in written:
            facts = [_count(len(entry.tools), "tool"), _count(len(entry.hooks), "hook")]
            click.echo(f"wrote {layout.display(path)} ({entry.distribution} {entry.version}: {', '.join(facts)})")
    if failed:
        raise UserError(f"{failed} of {len(packages)} could not be fetched")
    click.echo("Run `hermes index build` to update index.json.", err=True)


@index.command("validate")
@_ROOT_OPTION
def validate_command(root: Path | None) -> None:
    """Check every entry file, unique ids, first-party entries against their packs, and the built files."""
    from ..index.build import read_entries, validate_index

    layout = _layout(root)
    problems = validate_index(layout)
    if problems:
        for problem in problems:
            click.echo(problem, err=True)
        raise UserError(f"the index has {len(problems)} problem{'s' if len(problems) > 1 else ''}")
    entries, _ = read_entries(layout)
    click.echo(f"{layout.display(layout.root)}: {len(entries)} entries, all valid.")


@index.command("build")
@_ROOT_OPTION
def build_command(root: Path | None) -> None:
    """Write index.json (sorted and stable), its copy bundled with hermes-tools, and the entry schema."""
    from ..index.build import build_index, read_entries

    layout = _layout(root)
    try:
        changed = build_index(layout)
    except PluginIndexError as exc:
        raise UserError(str(exc)) from None
    entries, _ = read_entries(layout)
    for path in changed:
        click.echo(f"wrote {layout.display(path)}")
    click.echo(f"{_count(len(entries), 'entry', 'entries')}; {_count(len(changed), 'file')} changed.")


@index.command("show")
@click.argument("plugin_id", shell_complete=index_ids)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@_INDEX_OPTION
def show_command(plugin_id: str, as_json: bool, index_url: str | None) -> None:
    """Show what the index knows about one plugin."""
    plugin_index = _load(index_url)
    entry = plugin_index.get(plugin_id)
    if entry is None:
        raise UserError(f"{plugin_id!r} is not in the plugin index ({plugin_index.source}); "
                        "try `hermes plugins search`")
    show_entry(entry, as_json)
