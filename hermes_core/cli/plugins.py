"""``hermes plugins ...``: list, inspect, install, enable and check plugins."""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..plugins.contributions import NO_GATEWAY
from ..plugins.selection import truthy
from ._common import LazyGroup, UserError, echo_json, home, runtime
from .completion import enabled_plugin_ids, index_ids, installed_plugin_ids, plugin_ids, switched_off_plugin_ids
from .table import Column, echo_table, state_colour

if TYPE_CHECKING:
    from ..index.installer import InstallTarget
    from ..plugins.discovery import PluginCandidate
    from ..plugins.records import PluginRecord
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
    contributed = rt.contributions.of_plugin(record.id) if record.active else {key: [] for key in CONTRIBUTIONS}
    return {
        "id": record.id, "version": record.version, "source": record.source, "state": record.state,
        "reason": record.reason or None, "distribution": record.distribution, "module": record.module,
        "path": record.path, "manifest": record.manifest_path, "tools": record.tools, "hooks": record.hooks,
        **{key: contributed[key] for key in CONTRIBUTIONS},
        "imported": record.imported, "import_ms": _ms(record.import_ms), "register_ms": _ms(record.register_ms),
        "refused_tools": refused, "warnings": record.warnings, "hook_problems": rt.hooks.problems_of(record.id),
        "backends": sorted(name for name, backend in rt.contributions.backends.items()
                           if backend.plugin == record.id and record.active),
    }


#: What a plugin contributes besides tools and hooks: record key -> label in the text listings.
CONTRIBUTIONS = {"commands": "slash commands", "cli_commands": "CLI commands", "skills": "skills",
                 "middleware": "middleware", "web_search_providers": "web search providers",
                 "platforms": "messaging platforms", "memory_providers": "memory providers"}


def _contribution_lines(row: dict[str, Any]) -> list[str]:
    """``label: a, b`` for each kind of contribution the record has (slash commands shown as ``/name``)."""
    lines = []
    for key, label in CONTRIBUTIONS.items():
        if row[key]:
            names = [f"/{name}" for name in row[key]] if key == "commands" else row[key]
            lines.append(f"{label}: {', '.join(names)}" + (f" ({NO_GATEWAY})" if key == "platforms" else ""))
    return lines


def backend_report(rt: Runtime, record: PluginRecord) -> list[dict[str, Any]]:
    """The execution backends of ``record``: availability (its check runs: this may import plugin code)."""
    selected = rt.config.terminal.backend
    report = []
    for name in describe(rt, record)["backends"]:
        backend = rt.contributions.backends[name]
        availability = backend.availability()
        report.append({"name": name, "description": backend.description, "selected": name == selected,
                       "available": availability.available, "reason": availability.reason or None})
    return report


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
                                          " Install one with `hermes plugins install ID`."))
        return
    echo_table([Column("ID"), Column("VERSION"), Column("SOURCE"), Column("STATE", colour=state_colour),
                Column("LOAD"), Column("TOOLS", shrink=True)],
               [[row["id"], row["version"] or "?", row["source"], _state_cell(row), _load_time(row),
                 ", ".join(row["tools"])] for row in rows],
               details=[_details(row) for row in rows])


def _details(row: dict[str, Any]) -> list[str]:
    """What a row of ``plugins list`` cannot hold."""
    return [*([f"hooks: {', '.join(row['hooks'])}"] if row["hooks"] else []), *_contribution_lines(row),
            *([f"reason: {row['reason']}"] if row["reason"] else []),
            *(f"refused tool {r['tool']}: {r['reason']}" for r in row["refused_tools"]),
            *row["hook_problems"],
            *(f"warning: {warning}" for warning in row["warnings"])]


def _state_cell(row: dict[str, Any]) -> str:
    """The state, and how many warnings the plugin has: "loaded" alone means it loaded without a word."""
    count = len(row["warnings"])
    return f"{row['state']}, {count} warning{'s' if count > 1 else ''}" if count else row["state"]


def _load_time(row: dict[str, Any]) -> str:
    if row["state"] not in ("loaded", "declared"):
        return "-"
    if not row["imported"]:
        return "not imported"
    return f"{(row['import_ms'] or 0) + (row['register_ms'] or 0):.1f} ms"


@plugins.command("info")
@click.argument("plugin_id", shell_complete=plugin_ids)
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
    data["backend_availability"] = backend_report(rt, record)
    data["skill_descriptions"] = {name: rt.skills[name].description for name in data["skills"]}
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
    for line in _contribution_lines({**data, "skills": []}):
        click.echo(f"  {line}")
    for name, description in data["skill_descriptions"].items():
        click.echo(f"  skill {name}{': ' + description if description else ''}")
    if manifest and manifest.requires_hermes:
        checked = "not checked: a Hermes Agent version" if record.candidate.foreign_manifest else "checked"
        click.echo(f"  requires_hermes: {manifest.requires_hermes} ({checked})")
    for backend in data["backend_availability"]:
        status = "available" if backend["available"] else f"unavailable: {backend['reason']}"
        selected = " (selected: terminal.backend)" if backend["selected"] else ""
        click.echo(f"  backend {backend['name']}{selected}: {status}")
    for env in data["requires_env"]:
        click.echo(f"  env {env['name']}: {'set' if env['set'] else 'NOT SET'}"
                   f"{' — ' + env['description'] if env['description'] else ''}")
    if data["config"]:
        click.echo(f"  config: {data['config']}")
    for warning in record.warnings:
        click.echo(f"  warning: {warning}")
    for problem in data["hook_problems"]:
        click.echo(f"  {problem}")


def _index_info(plugin_id: str, as_json: bool) -> None:
    from ..index.catalog import load_index
    from .index import show_entry

    entry = load_index(home=home()).get(plugin_id)
    if entry is None:
        project = Path.cwd() / ".hermes" / "plugins" / plugin_id
        if project.is_dir() and not truthy(os.environ.get("HERMES_ENABLE_PROJECT_PLUGINS")):
            raise UserError(f"{plugin_id!r} is a project plugin ({project}), and project plugins load only when "
                            "HERMES_ENABLE_PROJECT_PLUGINS=1 is set")
        raise UserError(f"no plugin {plugin_id!r} is installed or listed in the plugin index; "
                        "`hermes plugins search WORDS` finds plugins")
    show_entry(entry, as_json)


@plugins.command("install")
@click.argument("spec", shell_complete=index_ids)
@click.option("--pip", "as_pip", is_flag=True,
              help="Hand SPEC to pip as it is, even a bare name the plugin index does not list.")
@click.option("-U", "--upgrade", is_flag=True, help="Upgrade to the newest version.")
@click.option("--force-reinstall", is_flag=True,
              help="Reinstall the plugin's distribution even when this version is installed (not its dependencies).")
@click.option("-e", "--editable", is_flag=True, help="Install a local project in editable mode.")
@click.option("--pre", is_flag=True, help="Allow pre-releases.")
@click.option("-f", "--find-links", "find_links", metavar="DIR", multiple=True, help="Look for wheels here too.")
@click.option("--index-url", metavar="URL", help="Use this package index instead of PyPI.")
@click.option("-v", "--verbose", is_flag=True, help="Show pip's output as it comes.")
def install(spec: str, as_pip: bool, upgrade: bool, force_reinstall: bool, editable: bool, pre: bool,
            find_links: tuple[str, ...], index_url: str | None, verbose: bool) -> None:
    """Install a plugin: an id from the plugin index, or a path, a URL or a pinned requirement (NAME==1.0).

    A bare NAME the index does not list is refused (pip would install whatever PyPI project has that
    name); --pip installs it anyway. What pip installs without providing a plugin is uninstalled again.
    Each step prints one line on stderr; pip's own output only with -v (or when pip fails).
    """
    from packaging.utils import canonicalize_name

    from ..index.installer import InstallerError, changed, check_environment, describe_versions, snapshot
    from ..runtime import Runtime

    try:
        check_environment()
        target = _install_target(spec, as_pip or editable)
    except InstallerError as exc:
        raise UserError(str(exc)) from None
    if target.requirement != spec:
        _step(f"{spec}: the plugin index says {target.requirement}")
    before = snapshot()
    args = ["install", *(["-U"] if upgrade else []), *(["--force-reinstall", "--no-deps"] if force_reinstall else []),
            *(["--pre"] if pre else []), *(f"--find-links={d}" for d in find_links),
            *([f"--index-url={index_url}"] if index_url else []), *(["-e"] if editable else []), target.requirement,
            *target.also]
    needs = f" and the packs it needs ({' '.join(target.also)})" if target.also else ""
    _step(f"Installing {target.requirement}{needs} with pip" + ("" if verbose else " (-v shows pip's output)"))
    _run_pip(args, verbose, f"pip could not install {target.requirement!r}")
    importlib.invalidate_caches()
    after = snapshot()
    touched = set(changed(before, after))
    _step(f"pip installed {describe_versions(sorted(touched), after)}" if touched else "pip changed nothing")
    if target.distribution:
        touched.add(canonicalize_name(target.distribution))
    from ..index.installsources import record_install

    record_install(home().root, {name: after[name] for name in touched if name in after}, find_links)
    _step("Loading the plugins it provides")
    fresh = Runtime()
    fresh.load_plugins()
    records = [r for r in fresh.plugins if r.source == "pip" and r.state != "shadowed" and r.distribution
               and canonicalize_name(r.distribution) in touched]
    if not records:
        _roll_back(target, before, after, verbose)
    for record in records:
        _report_installed(record, before.get(canonicalize_name(record.distribution or "")), force_reinstall,
                          _needs(fresh, record))


def _needs(rt: Runtime, record: PluginRecord) -> list[str]:
    """``tool (why it is unavailable)`` for each of the plugin's tools that needs setting up first (a key...)."""
    needs = []
    for tool in record.tools:
        availability = rt.registry.check(tool)
        if not availability.available:
            needs.append(f"{tool} ({availability.reason or 'unavailable'})")
    return needs


def _step(message: str) -> None:
    """One line of progress, on stderr (stdout says what was done)."""
    click.echo(click.style("· ", fg="cyan") + message, err=True)


def _run_pip(args: list[str], verbose: bool, failure: str) -> None:
    """Run pip (its output shown only when ``verbose``, or when it fails); a failure is a user error."""
    from ..index.installer import pip

    run = pip(args, show_output=verbose)
    if run.returncode != 0:
        if run.output:
            click.echo(run.output.rstrip(), err=True)
        raise UserError(f"{failure} (its output is above)")


def _install_target(spec: str, as_pip: bool) -> InstallTarget:
    from ..index.installer import install_target

    if as_pip:
        return install_target(spec, None, as_pip=True)
    from ..index.catalog import PluginIndexError, load_index

    try:
        return install_target(spec, load_index(home=home()))
    except PluginIndexError as exc:
        return install_target(spec, None, index_problem=str(exc))


def _roll_back(target: InstallTarget, before: dict[str, str], after: dict[str, str], verbose: bool) -> None:
    """Nothing pip installed provides a plugin: uninstall what this command added, and say so."""
    from ..index.installer import changed, describe_versions, newly_installed, pip

    added = newly_installed(before, after)
    upgraded = [name for name in changed(before, after) if name in before]
    what = f"{target.requirement} provides no Hermes plugin (no `hermes_agent.plugins` entry point)"
    if not added and not upgraded:
        raise UserError(f"{what}; it was already installed, nothing was changed")
    if added:
        _step(f"Rolling back: uninstalling {describe_versions(added, after)}")
        if pip(["uninstall", "-y", *added], show_output=verbose).returncode != 0:
            raise UserError(f"{what}; rolling back failed: uninstall {describe_versions(added, after)} by hand")
    undone = f"rolled back: uninstalled {describe_versions(added, after)}" if added else "nothing to uninstall"
    kept = f"; pip also upgraded {describe_versions(upgraded, after)}, which stays" if upgraded else ""
    raise UserError(f"{what}; {undone}{kept}")


def _report_installed(record: PluginRecord, version_before: str | None, force_reinstall: bool,
                      needs: list[str]) -> None:
    name = f"plugin {record.id} {record.version}"
    if version_before is None:
        head = f"Installed {name}"
    elif version_before != record.version:
        head = f"Installed {name} (was {version_before})"
    elif force_reinstall:
        head = f"Reinstalled {name}"
    else:
        head = f"{name.capitalize()} was already installed; pip changed nothing (--force-reinstall reinstalls it)"
    if record.state == "error":
        click.echo(f"{head}, but it failed to load: {record.reason}")
    elif record.active:
        click.echo(f"{head}: {', '.join(record.tools) or 'no tools'}"
                   + (f"; not available until set up: {'; '.join(needs)}" if needs else ""))
    else:
        click.echo(f"{head} ({record.state}: {record.reason}); `hermes plugins enable {record.id}` turns it on")


@plugins.command("uninstall")
@click.argument("plugin_ids", nargs=-1, required=True, metavar="PLUGIN_ID...", shell_complete=installed_plugin_ids)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("-v", "--verbose", is_flag=True, help="Show pip's output as it comes.")
def uninstall(plugin_ids: tuple[str, ...], yes: bool, verbose: bool) -> None:
    """Uninstall the distributions that provide these plugins (broken plugins too), after one confirmation.

    Every id is checked before anything is uninstalled: an id no distribution provides changes nothing.
    """
    from packaging.utils import canonicalize_name

    from ..index.installer import InstallerError, check_environment, plugin_distributions

    installed = plugin_distributions()
    chosen: dict[str, tuple[str, str, list[str]]] = {}  # distribution -> (name, version, plugin ids)
    for plugin_id in dict.fromkeys(plugin_ids):
        dist = installed.get(plugin_id)
        if dist is None:
            folder = next((r for r in runtime().plugins if r.id == plugin_id and r.source != "pip"), None)
            if folder is not None:
                raise UserError(f"{plugin_id!r} is a {folder.source} plugin at {folder.path}; remove that folder")
            raise UserError(f"no installed distribution provides plugin {plugin_id!r}; "
                            "see `hermes plugins list --all`")
        name = dist.metadata["Name"]
        chosen.setdefault(canonicalize_name(name), (name, dist.version, []))[2].append(plugin_id)
    described = [f"{name} {version} (plugin{'s' if len(ids) > 1 else ''} {', '.join(ids)})"
                 for name, version, ids in chosen.values()]
    if not yes:
        click.confirm(f"Uninstall {'; '.join(described)}?", abort=True)
    try:
        check_environment()
    except InstallerError as exc:
        raise UserError(str(exc)) from None
    names = [name for name, _, _ in chosen.values()]
    _step(f"Uninstalling {', '.join(names)} with pip")
    _run_pip(["uninstall", "-y", *names], verbose, f"pip could not uninstall {', '.join(names)}")
    for name, _, ids in chosen.values():
        click.echo(f"Uninstalled {name}; plugin{'s' if len(ids) > 1 else ''} {', '.join(ids)} "
                   f"{'are' if len(ids) > 1 else 'is'} gone.")


def _require_known(plugin_id: str) -> None:
    if plugin_id not in {r.id for r in runtime().plugins}:
        raise UserError(f"no plugin {plugin_id!r} is installed; see `hermes plugins list --all`")


@plugins.command("enable")
@click.argument("plugin_id", shell_complete=switched_off_plugin_ids)
def enable(plugin_id: str) -> None:
    """Enable a plugin: drop it from plugins.disabled, and add it to an allow-list if one exists."""
    _require_known(plugin_id)
    from ..config.model import remove_from_list

    def change(document: Any) -> None:
        section = document.setdefault("plugins", {})
        if plugin_id in (section.get("disabled") or []):
            remove_from_list(section, "disabled", plugin_id)
        if section.get("enabled") is not None and plugin_id not in section["enabled"]:
            section["enabled"].append(plugin_id)

    runtime().home.edit_config(change)
    click.echo(f"Enabled {plugin_id}.")


@plugins.command("disable")
@click.argument("plugin_id", shell_complete=enabled_plugin_ids)
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
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def freeze(as_json: bool) -> None:
    """Print requirement lines that `pip install -r` turns back into the installed plugins.

    A plugin installed with `hermes plugins install --find-links DIR` brings a `--find-links DIR` line; one that
    cannot be installed again (its wheel or folder is gone) is a comment, with a warning on stderr. Directory
    plugins (user, project) are folders, not distributions: they appear as comments.
    """
    from ..index.installer import frozen_plugins

    frozen = frozen_plugins(home().root)
    folders = [r for r in runtime().plugins if r.source != "pip"]
    if as_json:
        echo_json([{"plugins": f.plugins, "source": "pip", "distribution": f.distribution, "version": f.version,
                    "requirement": f.requirement, "find_links": f.find_links, "path": None, "warning": f.warning}
                   for f in frozen]
                  + [{"plugins": [r.id], "source": r.source, "distribution": None, "version": r.version,
                      "requirement": None, "find_links": [], "path": r.path, "warning": None} for r in folders])
        return
    for link in dict.fromkeys(link for item in frozen if item.requirement for link in item.find_links):
        click.echo(f"--find-links {link}")
    for item in frozen:
        if item.requirement:
            click.echo(item.requirement)
        else:
            click.echo(f"# {item.distribution}=={item.version}: {item.warning}")
            click.echo(f"warning: {item.warning}", err=True)
    for record in folders:
        click.echo(f"# {record.source} plugin {record.id}: the folder {record.path} (not a distribution; copy it)")


@plugins.command("validate")
@click.argument("target", shell_complete=plugin_ids)
@click.option("--imports", is_flag=True, help="Also import every handler and check_fn (runs plugin code, not "
                                              "register()), and compare the schemas derived from @tool functions.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (the exit status is the same).")
def validate(target: str, imports: bool, as_json: bool) -> None:
    """Validate a plugin's manifest (a folder, a plugin.yaml, a project, or an installed id). Exit 1 if invalid.

    Also reports drift between plugin.yaml and the plugin's @tool functions (a parameter missing from either
    side, a type or required-ness that differs), read from the source without importing it.
    """
    candidate = _validation_candidate(target)
    manifest = candidate.manifest
    errors: list[str] = []
    warnings = list(candidate.warnings)
    late_warnings: list[str] = []  # the drift's, printed after the errors
    drifted = False
    if candidate.error or manifest is None:
        errors.append((candidate.error or "").removeprefix("invalid manifest: ") or "; ".join(warnings)
                      or "no plugin.yaml")
        warnings = []
    else:
        from ..plugins.manifest import unannotated_tools

        warnings += [f"tool {name}: {missing}, so it counts as one that may change things (it asks under "
                     "approvals.policy `writes` and is left out under `read-only`); add e.g. `annotations: "
                     "{read_only: true}`" for name, missing in unannotated_tools(manifest).items()]
        if imports:
            from ..plugins.loader import reference_problems

            errors += reference_problems(candidate)
        from ..authoring.compile import manifest_drift

        drift, late_warnings = manifest_drift(candidate, imports)
        errors += drift
        errors += skill_problems(candidate)
        drifted = bool(drift or late_warnings)
    tools = len(manifest.tools or []) if manifest else 0
    toolsets = len(manifest.toolsets) if manifest else 0
    if as_json:
        echo_json({"manifest": candidate.manifest_path, "valid": not errors, "errors": errors,
                   "warnings": warnings + late_warnings, "tools": tools, "toolsets": toolsets})
    elif manifest is None or candidate.error:
        click.echo(f"invalid: {errors[0]}")
    else:
        for line in [*(f"warning: {w}" for w in warnings), *errors, *(f"warning: {w}" for w in late_warnings)]:
            click.echo(line)
        if drifted:
            click.echo(f"`hermes plugins compile {target}` updates plugin.yaml from the @tool functions")
        if not errors:
            click.echo(f"{candidate.manifest_path}: valid ({tools} declared tool{'s' if tools != 1 else ''}, "
                       f"{toolsets} toolset{'s' if toolsets != 1 else ''})")
    if errors:
        raise click.exceptions.Exit(1)


def skill_problems(candidate: PluginCandidate) -> list[str]:
    """What is wrong with the skills the manifest's ``skills:`` lists, each naming its file and line."""
    from ..errors import SkillError
    from ..skills.files import resolve_inside
    from ..skills.validation import validate_skill

    problems = []
    for relative in (candidate.manifest_data or {}).get("skills") or ():
        try:
            folder = resolve_inside(Path(candidate.path or "."), relative)
        except SkillError as exc:
            problems.append(f"skill {relative!r}: {exc}")
            continue
        problems += [str(problem) for problem in validate_skill(folder).errors]
    return problems


def _validation_candidate(target: str) -> PluginCandidate:
    from ..plugins.discovery import candidate_for_validation

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


def _runtime_despite_invalid_config() -> tuple[Runtime, str]:
    """A runtime for ``doctor`` when config.yaml is invalid, and what it did about it.

    Which plugins the user disabled is read from the file when that part of it is readable; otherwise no
    plugin is imported at all, so nothing runs that the user may have switched off.
    """
    from dataclasses import dataclass, field

    import yaml

    from ..config.home import HermesHome
    from ..config.model import HermesConfig, PluginsConfig
    from ..runtime import Runtime

    @dataclass(frozen=True)
    class _SalvagedHome(HermesHome):  # defined here: the config models are built only when doctor needs them
        """A home whose invalid config.yaml is replaced by what could be read of it."""

        salvaged: HermesConfig = field(default_factory=HermesConfig)

        def config(self) -> HermesConfig:
            return self.salvaged

        def config_data(self) -> dict[str, Any]:
            return self.salvaged.model_dump(mode="json")

    from ..config.untrusted import TEXT_LIMIT, read_untrusted_text

    root = home().root
    try:
        data = yaml.safe_load(read_untrusted_text(root / "config.yaml", TEXT_LIMIT, follow_symlinks=True)) or {}
        section = data.get("plugins") or {}
        salvaged = HermesConfig(plugins=PluginsConfig.model_validate(
            {key: section[key] for key in ("enabled", "disabled") if key in section}))
    except Exception:  # unreadable, not YAML, or the selection itself is what is invalid
        rt = Runtime(_SalvagedHome(root), environ={**os.environ, "HERMES_SAFE_MODE": "1"})
        rt.load_plugins()
        # not loaded because of the config, whatever the (borrowed) safe mode's reason says
        why = "not loaded: config.yaml is invalid, so which plugins are enabled or disabled cannot be read"
        rt.plugins = [record._replace(selection=record.selection._replace(reason=why))
                      if record.selection.verdict == "disabled" else record for record in rt.plugins]
        return rt, ("plugins.enabled and plugins.disabled cannot be read from it, so no plugin was imported; "
                    "the plugins below are as found on disk")
    rt = Runtime(_SalvagedHome(root, salvaged))
    rt.load_plugins()
    return rt, "plugins.enabled and plugins.disabled were read from it; every other setting is at its default"


@plugins.command("compile")
@click.argument("path", default=".", type=click.Path(path_type=Path))
def compile_command(path: Path) -> None:
    """Write the tools: entries of plugin.yaml from the plugin's @tool functions (default: this folder).

    Imports the modules that hold @tool functions (not register()). Updates entries in place, keeping the
    file's comments, order and the fields the code does not give (check, emoji, ...); creates plugin.yaml
    next to the package's __init__.py when there is none.
    """
    from ..authoring.compile import CompileError, compile_manifest

    try:
        result = compile_manifest(path)
    except CompileError as exc:
        raise UserError(str(exc)) from None
    done = [f"added {', '.join(result.added)}" if result.added else "",
            f"updated {', '.join(result.updated)}" if result.updated else "",
            f"{len(result.unchanged)} unchanged" if result.unchanged else ""]
    summary = "; ".join(part for part in done if part)
    verb = "created" if result.created else "up to date" if not result.changed else "updated"
    click.echo(f"{result.manifest_path}: {verb}" + (f" ({summary})" if summary else ""))
    for name in result.stale:
        click.echo(f"warning: tool {name}: its handler does not exist in the plugin's code; remove the entry or "
                   "restore the function", err=True)


@plugins.command("doctor")
@click.option("--strict", is_flag=True, help="Exit non-zero when any problem is found.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def doctor(strict: bool, as_json: bool) -> None:
    """Check every plugin: state, import time, missing env vars and binaries, refused tools, shadowing.

    Also says when the `hermes` on PATH is another package's (Hermes Agent installs one; `hermes-tools`
    is this CLI too). An unset variable of a plugin's requires_env is noted when it makes a tool unavailable;
    --strict fails only on problems. An invalid config.yaml is reported first, and the report of every plugin
    still follows.
    """
    from ..config.model import ConfigError

    config_problem = fallback = None
    try:
        home().config()
    except ConfigError as exc:  # the report must still come out, the config problem first
        config_problem = str(exc)
    if config_problem is None:
        rt = runtime()
    else:
        rt, fallback = _runtime_despite_invalid_config()
    report = []
    for record in rt.plugins:
        problems: list[str] = []
        if record.state == "error":
            problems.append(f"failed to load: {record.reason}")
        if record.state == "shadowed":
            problems.append(record.reason)
        problems += [f"refused tool {r.tool}: {r.reason}" for r in rt.registry.refusals if r.plugin == record.id]
        unavailable = {name: a.reason for name in record.tools if not (a := rt.registry.check(name)).available}
        problems += [f"tool {name} unavailable: {reason}" for name, reason in unavailable.items()]
        # requires_env is information, not a gate: an unset variable is worth a note only when it is why a tool
        # is unavailable (an optional one, such as HERMES_WORKSPACE, is not noted on every run)
        notes = [_env_note(env) for env in (record.manifest.requires_env if record.manifest else [])
                 if not os.environ.get(env.name) and any(_names(env.name, reason) for reason in unavailable.values())]
        notes += [f"tool {name}: {a.reason}" for name in record.tools
                  if name not in unavailable and (a := rt.registry.check(name)).available and a.reason]
        problems += [f"warning: {w}" for w in record.warnings]
        for backend in backend_report(rt, record):
            if not backend["available"]:  # a problem only when config.yaml selects it
                (problems if backend["selected"] else notes).append(
                    f"backend {backend['name']} unavailable: {backend['reason']}")
        described = describe(rt, record)
        problems += described["hook_problems"]
        notes += [f"messaging platform {name}: {NO_GATEWAY}" for name in described["platforms"]]
        report.append({**described, "problems": problems, "notes": notes})
    if config_problem is None:
        selected = rt.config.terminal.backend
        if selected not in rt.contributions.backends:
            known = ", ".join(sorted(rt.contributions.backends))
            config_problem = (f"terminal.backend: no loaded plugin provides the backend {selected!r} "
                              f"(known: {known})")
    if config_problem is None and rt.config.checkpoints.enabled:
        availability = rt.checkpoints.availability()
        if not availability.available:
            config_problem = f"checkpoints: {availability.reason}"
    from .installation import downgraded_dependencies, other_hermes_scripts  # (importlib.metadata: not at start-up)

    command = hermes_command()
    installation = [*(f"{owner} also installs a `hermes` command: whichever was installed last is the one on "
                      "PATH; `hermes-tools` always runs this one" for owner in other_hermes_scripts()),
                    *downgraded_dependencies()]
    if as_json:
        echo_json({"plugins": report, "config_error": config_problem, "config_fallback": fallback,
                   "hermes_command": command, "installation": installation})
    else:
        if config_problem:
            click.echo(f"config: {config_problem}")
            if fallback:
                click.echo(f"config: {fallback}")
        if command["problem"]:
            click.echo(f"[!!] hermes command: {command['problem']}")
        elif command["note"]:
            click.echo(f"     note: {command['note']}")
        for problem in installation:
            click.echo(f"[!!] installation: {problem}")
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
    if strict and (config_problem or command["problem"] or installation or any(row["problems"] for row in report)):
        raise click.exceptions.Exit(1)


def _names(variable: str, reason: str) -> bool:
    return re.search(rf"\b{re.escape(variable)}\b", reason) is not None


def _env_note(env: Any) -> str:
    detail = ", ".join(part for part in (env.description, env.url) if part)
    return f"environment variable {env.name} is not set" + (f" ({detail})" if detail else "")


def hermes_command() -> dict[str, Any]:
    """Which ``hermes`` the shell runs and whether it is this CLI: Hermes Agent installs a ``hermes`` of its own."""
    import shutil

    path = shutil.which("hermes")
    if path is None:
        return {"path": None, "ours": False, "problem": None,
                "note": "no `hermes` command on PATH; `hermes-tools` runs the same commands"}
    try:
        with open(path, "rb") as script:
            head = script.read(4096)
    except OSError:
        head = b""
    if b"hermes_core.cli" in head:  # pip's console-script wrapper imports the function it runs
        return {"path": path, "ours": True, "problem": None, "note": None}
    return {"path": path, "ours": False, "note": None,
            "problem": f"the `hermes` on PATH ({path}) is not this Hermes: another package, such as Hermes "
                       "Agent, installed a command of that name over it; run `hermes-tools` instead (the same "
                       "commands)"}
