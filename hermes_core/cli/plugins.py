"""``hermes plugins ...``: list, inspect, install, enable and check plugins."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ._common import LazyGroup, UserError, echo_json, home, runtime

if TYPE_CHECKING:
    from ..discovery import PluginCandidate
    from ..records import PluginRecord
    from ..runtime import Runtime

__all__ = ["plugins"]

ALWAYS_SHOWN = ("loaded", "declared", "error")


@click.group(cls=LazyGroup, lazy={
    "new": ("hermes_core.cli.scaffold:new", "Create a plugin project (a pip-installable package) from the template."),
    "search": ("hermes_core.cli.index:search_command", "Search the plugin index by id, tool name, tag and summary."),
})
def plugins() -> None:
    """Find, install, enable and inspect plugins."""


def describe(rt: Runtime, record: PluginRecord) -> dict[str, Any]:
    """The JSON record of one plugin (the stable shape of ``plugins list --json``)."""
    refused = [{"tool": r.tool, "toolset": r.toolset, "reason": r.reason}
               for r in rt.registry.refusals if r.plugin == record.id and record.active]
    return {
        "id": record.id, "version": record.version, "source": record.source, "state": record.state,
        "reason": record.reason or None, "distribution": record.distribution, "module": record.module,
        "path": record.path, "manifest": record.manifest_path, "tools": record.tools, "hooks": record.hooks,
        "imported": record.imported, "import_ms": _ms(record.import_ms), "register_ms": _ms(record.register_ms),
        "refused_tools": refused, "warnings": record.warnings,
    }


def _ms(value: float | None) -> float | None:
    return round(value, 2) if value is not None else None


@plugins.command("list")
@click.option("--all", "show_all", is_flag=True, help="Also disabled, not enabled and shadowed plugins.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_plugins(show_all: bool, as_json: bool) -> None:
    """List plugins: id, version, source, state, tools, hooks, load time and any problem."""
    rt = runtime()
    rows = [describe(rt, r) for r in rt.plugins if show_all or r.state in ALWAYS_SHOWN]
    if as_json:
        echo_json(rows)
        return
    if not rows:
        hidden = len(rt.plugins)
        click.echo("No plugins loaded." + (f" {hidden} more with --all." if hidden else
                                          " Install one with `hermes plugins install NAME`."))
        return
    for row in rows:
        took = (row["import_ms"] or 0) + (row["register_ms"] or 0)
        timing = f" {took:.1f} ms" if row["imported"] else " (not imported)"
        shown = timing if row["state"] in ("loaded", "declared") else ""
        click.echo(f"{row['id']} {row['version'] or '?'} [{row['source']}] {row['state']}{shown}")
        if row["tools"]:
            click.echo(f"    tools: {', '.join(row['tools'])}")
        if row["hooks"]:
            click.echo(f"    hooks: {', '.join(row['hooks'])}")
        if row["reason"]:
            click.echo(f"    reason: {row['reason']}")
        for refusal in row["refused_tools"]:
            click.echo(f"    refused tool {refusal['tool']}: {refusal['reason']}")
        for warning in row["warnings"]:
            click.echo(f"    warning: {warning}")


@plugins.command("info")
@click.argument("plugin_id")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def info(plugin_id: str, as_json: bool) -> None:
    """Everything about one plugin: manifest, distribution, files, tools, hooks and config."""
    rt = runtime()
    record = rt.plugin(plugin_id)
    if record is None:
        _index_info(plugin_id, as_json)
        return
    data = describe(rt, record)
    data["manifest_data"] = record.manifest.model_dump(mode="json", exclude_unset=True) if record.manifest else None
    data["tool_availability"] = {name: {"available": a.available, "reason": a.reason or None}
                                 for name in record.tools for a in [rt.registry.check(name)]}
    data["requires_env"] = [{"name": env.name, "set": bool(os.environ.get(env.name)), "secret": env.secret,
                             "description": env.description}
                            for env in (record.manifest.requires_env if record.manifest else [])]
    entry = rt.config.plugins.entries.get(plugin_id)
    data["config"] = entry.model_dump() if entry else None
    data["enabled"] = record.state not in ("disabled", "not enabled")
    if as_json:
        echo_json(data)
        return
    manifest = record.manifest
    click.echo(f"{record.id} {record.version or ''}".rstrip())
    if manifest and manifest.description:
        click.echo(f"  {manifest.description}")
    for label, value in (("source", record.source), ("state", record.state), ("reason", record.reason),
                         ("distribution", record.distribution), ("module", record.module),
                         ("path", record.path), ("manifest", record.manifest_path)):
        if value:
            click.echo(f"  {label}: {value}")
    for name, availability in data["tool_availability"].items():
        status = "available" if availability["available"] else f"unavailable: {availability['reason']}"
        click.echo(f"  tool {name}: {status}")
    for hook in record.hooks:
        click.echo(f"  hook {hook}")
    for env in data["requires_env"]:
        click.echo(f"  env {env['name']}: {'set' if env['set'] else 'NOT SET'}"
                   f"{' — ' + env['description'] if env['description'] else ''}")
    if data["config"]:
        click.echo(f"  config: {data['config']}")
    for warning in record.warnings:
        click.echo(f"  warning: {warning}")


def _index_info(plugin_id: str, as_json: bool) -> None:
    from ..index import load_index
    from .index import show_entry

    entry = load_index(home=home()).get(plugin_id)
    if entry is None:
        raise UserError(f"no plugin {plugin_id!r} is installed or listed in the plugin index; "
                        "`hermes plugins search WORDS` finds plugins")
    show_entry(entry, as_json)


@plugins.command("install")
@click.argument("spec")
@click.option("-U", "--upgrade", is_flag=True, help="Upgrade to the newest version.")
@click.option("-e", "--editable", is_flag=True, help="Install a local project in editable mode.")
@click.option("--pre", is_flag=True, help="Allow pre-releases.")
@click.option("-f", "--find-links", "find_links", metavar="DIR", multiple=True, help="Look for wheels here too.")
@click.option("--index-url", metavar="URL", help="Use this package index instead of PyPI.")
def install(spec: str, upgrade: bool, editable: bool, pre: bool, find_links: tuple[str, ...],
            index_url: str | None) -> None:
    """Install a plugin: a requirement, a path, a wheel, or an id from the plugin index."""
    from ..installer import InstallerError, check_environment, pip, plugin_distributions
    from ..runtime import Runtime

    try:
        check_environment()
    except InstallerError as exc:
        raise UserError(str(exc)) from None
    requirement = _requirement_for(spec)
    before = {pid: d.version for pid, d in plugin_distributions().items()}
    args = ["install", *(["-U"] if upgrade else []), *(["--pre"] if pre else []),
            *(f"--find-links={d}" for d in find_links), *([f"--index-url={index_url}"] if index_url else []),
            *(["-e"] if editable else []), requirement]
    click.echo(f"Installing {requirement} with pip ...", err=True)
    if pip(args) != 0:
        raise UserError(f"pip could not install {requirement!r} (its output is above)")
    importlib.invalidate_caches()
    fresh = Runtime()
    fresh.load_plugins()
    changed = [r for r in fresh.plugins if r.source == "pip" and r.state != "shadowed"
               and (r.id not in before or before[r.id] != r.version or r.id == spec)]
    if not changed:
        click.echo(f"Installed {requirement}, but it provides no Hermes plugin "
                   "(no `hermes_agent.plugins` entry point).")
        return
    for record in changed:
        if record.state == "error":
            click.echo(f"Installed plugin {record.id} {record.version}, but it failed to load: {record.reason}")
        elif record.active:
            tools = ", ".join(record.tools) or "no tools"
            click.echo(f"Installed plugin {record.id} {record.version}: {tools}")
        else:
            click.echo(f"Installed plugin {record.id} {record.version} ({record.state}: {record.reason}); "
                       f"`hermes plugins enable {record.id}` turns it on")


def _requirement_for(spec: str) -> str:
    if os.path.exists(spec) or any(c in spec for c in "=<>@[/") or spec.endswith((".whl", ".tar.gz")):
        return spec
    from ..index import PluginIndexError, load_index

    try:
        entry = load_index(home=home()).get(spec)
    except PluginIndexError as exc:  # an unreadable index must not stop a plain `pip install NAME`
        click.echo(f"warning: {exc}; installing {spec!r} as a plain requirement", err=True)
        entry = None
    return entry.requirement if entry is not None else spec


@plugins.command("uninstall")
@click.argument("plugin_id")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
def uninstall(plugin_id: str, yes: bool) -> None:
    """Uninstall the distribution that provides a plugin (broken plugins too)."""
    from ..installer import InstallerError, check_environment, pip, plugin_distributions

    dist = plugin_distributions().get(plugin_id)
    if dist is None:
        folder = next((r for r in runtime().plugins if r.id == plugin_id and r.source != "pip"), None)
        if folder is not None:
            raise UserError(f"{plugin_id!r} is a {folder.source} plugin at {folder.path}; remove that folder")
        raise UserError(f"no installed distribution provides plugin {plugin_id!r}; see `hermes plugins list --all`")
    name = dist.metadata["Name"]
    if not yes:
        click.confirm(f"Uninstall {name} {dist.version} (plugin {plugin_id})?", abort=True)
    try:
        check_environment()
    except InstallerError as exc:
        raise UserError(str(exc)) from None
    if pip(["uninstall", "-y", name]) != 0:
        raise UserError(f"pip could not uninstall {name} (its output is above)")
    click.echo(f"Uninstalled {name}; plugin {plugin_id} is gone.")


def _require_known(plugin_id: str) -> None:
    if plugin_id not in {r.id for r in runtime().plugins}:
        raise UserError(f"no plugin {plugin_id!r} is installed; see `hermes plugins list --all`")


@plugins.command("enable")
@click.argument("plugin_id")
def enable(plugin_id: str) -> None:
    """Enable a plugin: drop it from plugins.disabled, and add it to an allow-list if one exists."""
    _require_known(plugin_id)

    def change(document: Any) -> None:
        section = document.setdefault("plugins", {})
        if plugin_id in (section.get("disabled") or []):
            section["disabled"].remove(plugin_id)
        if section.get("enabled") is not None and plugin_id not in section["enabled"]:
            section["enabled"].append(plugin_id)

    runtime().home.edit_config(change)
    click.echo(f"Enabled {plugin_id}.")


@plugins.command("disable")
@click.argument("plugin_id")
def disable(plugin_id: str) -> None:
    """Disable a plugin (it is never imported while disabled)."""
    _require_known(plugin_id)

    def change(document: Any) -> None:
        section = document.setdefault("plugins", {})
        disabled = section.setdefault("disabled", [])
        if plugin_id not in disabled:
            disabled.append(plugin_id)

    runtime().home.edit_config(change)
    click.echo(f"Disabled {plugin_id}.")


@plugins.command("freeze")
def freeze() -> None:
    """Print requirement lines that `pip install -r` turns back into the installed plugins."""
    from ..installer import freeze_lines

    for line in freeze_lines():
        click.echo(line)


@plugins.command("validate")
@click.argument("target")
@click.option("--imports", is_flag=True, help="Also import every handler and check_fn (runs plugin code).")
def validate(target: str, imports: bool) -> None:
    """Validate a plugin's manifest (a folder, a plugin.yaml, a project, or an installed id). Exit 1 if invalid."""
    candidate = _validation_candidate(target)
    manifest = candidate.manifest
    if candidate.error or manifest is None:
        problem = (candidate.error or "").removeprefix("invalid manifest: ") or "; ".join(candidate.warnings)
        click.echo(f"invalid: {problem or 'no plugin.yaml'}")
        raise click.exceptions.Exit(1)
    problems = [f"warning: {w}" for w in candidate.warnings]
    if imports:
        from ..loader import reference_problems

        problems += reference_problems(candidate)
    errors = [p for p in problems if not p.startswith("warning:")]
    for problem in problems:
        click.echo(problem)
    if errors:
        raise click.exceptions.Exit(1)
    tools = len(manifest.tools or [])
    click.echo(f"{candidate.manifest_path}: valid ({tools} declared tool{'s' if tools != 1 else ''}, "
               f"{len(manifest.toolsets)} toolset{'s' if len(manifest.toolsets) != 1 else ''})")


def _validation_candidate(target: str) -> PluginCandidate:
    from ..discovery import candidate_for_validation

    path = Path(target)
    if path.exists():
        candidate = candidate_for_validation(path)
        if candidate is None or candidate.manifest_path is None:
            raise UserError(f"{target}: no plugin.yaml found")
        return candidate
    record = runtime().plugin(target)
    if record is None:
        raise UserError(f"{target!r} is neither a path nor an installed plugin id")
    if record.manifest_path is None:
        raise UserError(f"plugin {target!r} has no plugin.yaml")
    return record.candidate


@plugins.command("doctor")
@click.option("--strict", is_flag=True, help="Exit non-zero when any problem is found.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def doctor(strict: bool, as_json: bool) -> None:
    """Check every plugin: state, import time, missing env vars and binaries, refused tools, shadowing.

    Unset variables of a plugin's requires_env are notes; --strict fails only on problems.
    """
    rt = runtime()
    report = []
    for record in rt.plugins:
        problems: list[str] = []
        if record.state == "error":
            problems.append(f"failed to load: {record.reason}")
        if record.state == "shadowed":
            problems.append(record.reason)
        problems += [f"refused tool {r.tool}: {r.reason}" for r in rt.registry.refusals if r.plugin == record.id]
        # requires_env is information, not a gate: an unset variable is a note; an unavailable tool a problem
        notes = [f"environment variable {env.name} is not set" + (f" ({env.description})" if env.description else "")
                 for env in (record.manifest.requires_env if record.manifest else []) if not os.environ.get(env.name)]
        for name in record.tools:
            availability = rt.registry.check(name)
            if not availability.available:
                problems.append(f"tool {name} unavailable: {availability.reason}")
        problems += [f"warning: {w}" for w in record.warnings]
        report.append({**describe(rt, record), "problems": problems, "notes": notes})
    config_problem = None
    try:
        rt.config  # noqa: B018 - read to report a problem with it
    except Exception as exc:  # the report must still come out
        config_problem = str(exc)
    if as_json:
        echo_json({"plugins": report, "config_error": config_problem})
    else:
        if config_problem:
            click.echo(f"config: {config_problem}")
        for row in report:
            took = (row["import_ms"] or 0) + (row["register_ms"] or 0)
            timing = f", import+register {took:.1f} ms" if row["imported"] else ""
            mark = "!!" if row["problems"] else "ok"
            click.echo(f"[{mark}] {row['id']} ({row['source']}, {row['state']}{timing})")
            for problem in row["problems"]:
                click.echo(f"     - {problem}")
            for note in row["notes"]:
                click.echo(f"       note: {note}")
        if not report:
            click.echo("No plugins found.")
    if strict and (config_problem or any(row["problems"] for row in report)):
        raise click.exceptions.Exit(1)
