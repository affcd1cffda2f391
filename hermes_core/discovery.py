"""Find candidate plugins in the three sources, read their manifests and select them — importing nothing."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Literal

import yaml

from .config import HermesConfig, hermes_home
from .manifest import ManifestError, PluginManifest, load_manifest

__all__ = [
    "ENTRY_POINT_GROUP",
    "LEGACY_ENTRY_POINT_GROUP",
    "PluginRecord",
    "discover_candidates",
    "plugin_roots",
    "project_plugins_enabled",
    "select",
]

ENTRY_POINT_GROUP = "hermes_agent.plugins"
LEGACY_ENTRY_POINT_GROUP = "hermes.plugins"
TRUTHY = frozenset({"1", "true", "yes", "on"})
SOURCE_RANK = {"project": 0, "user": 1, "pip": 2}

Source = Literal["pip", "user", "project"]
State = Literal["loaded", "declared", "disabled", "not enabled", "shadowed", "error", "pending"]


@dataclass
class PluginRecord:
    """Everything known about one plugin candidate; discovery never raises, it records."""

    id: str
    source: Source
    module: str
    attr: str | None = None
    path: str | None = None
    manifest_path: str | None = None
    distribution: str | None = None
    dist_version: str | None = None
    manifest: PluginManifest | None = None
    state: State = "pending"
    reason: str = ""
    warnings: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)
    import_ms: float | None = None
    register_ms: float | None = None
    imported: bool = False

    @property
    def version(self) -> str | None:
        return self.dist_version or (self.manifest.version if self.manifest else None)

    @property
    def active(self) -> bool:
        return self.state in ("loaded", "declared")

    def fail(self, reason: str) -> None:
        self.state, self.reason = "error", reason


def project_plugins_enabled() -> bool:
    """``HERMES_ENABLE_PROJECT_PLUGINS`` is one of ``1 true yes on`` (any case, stripped)."""
    return os.environ.get("HERMES_ENABLE_PROJECT_PLUGINS", "").strip().lower() in TRUTHY


def slug(plugin_id: str) -> str:
    """The module-name form of a plugin id (``my-plugin`` → ``my_plugin``)."""
    return plugin_id.replace("-", "_").replace(".", "_")


def plugin_roots(cwd: Path | None = None) -> list[tuple[Path, Source]]:
    """The plugin folders to scan: the user's always, the project's only when opted in."""
    roots: list[tuple[Path, Source]] = [(hermes_home() / "plugins", "user")]
    if project_plugins_enabled():
        roots.append(((cwd or Path.cwd()) / ".hermes" / "plugins", "project"))
    return roots


def discover_candidates(cwd: Path | None = None) -> list[PluginRecord]:
    """Every candidate from pip and the plugin folders, manifests read, not yet selected."""
    records = pip_candidates()
    for root, source in plugin_roots(cwd):
        records += directory_candidates(root, source)
    for record in records:
        read_manifest(record)
    return records


def pip_candidates() -> list[PluginRecord]:
    """Plugins installed as distributions, from their entry points (nothing is imported)."""
    records: list[PluginRecord] = []
    found: set[str] = set()
    for group in (ENTRY_POINT_GROUP, LEGACY_ENTRY_POINT_GROUP):
        for ep in entry_points(group=group):
            record = record_from_entry_point(ep, group)
            if group == LEGACY_ENTRY_POINT_GROUP and record.id in found:
                continue
            found.add(record.id)
            records.append(record)
    return records


def record_from_entry_point(ep: EntryPoint, group: str) -> PluginRecord:
    module, _, attr = ep.value.partition(":")
    dist = ep.dist
    record = PluginRecord(id=ep.name, source="pip", module=module.strip(), attr=attr.strip() or None,
                          distribution=dist.metadata["Name"] if dist else None,
                          dist_version=dist.version if dist else None)
    if group == LEGACY_ENTRY_POINT_GROUP:
        record.warnings.append(f"deprecated: entry-point group {group!r}; use {ENTRY_POINT_GROUP!r}")
    if record.attr:
        record.warnings.append(f"deprecated: entry-point value {ep.value!r} names a callable; "
                               f"Hermes Agent expects a module that has `register` ({module!r})")
    package_dir = locate_package(record.module)
    if package_dir is not None:
        record.path = str(package_dir)
        if (package_dir / "plugin.yaml").is_file():
            record.manifest_path = str(package_dir / "plugin.yaml")
    return record


def locate_package(module: str) -> Path | None:
    """The folder of package ``module`` found without importing it (``None`` for single-file modules)."""
    top, *rest = module.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    locations = list(spec.submodule_search_locations)
    for part in rest:
        locations = [str(Path(loc) / part) for loc in locations if (Path(loc) / part).is_dir()]
        if not locations:
            return None
    return Path(locations[0])


def directory_candidates(root: Path, source: Source) -> list[PluginRecord]:
    """``<root>/<id>/`` folders holding ``plugin.yaml`` and/or ``__init__.py``."""
    try:
        children = sorted(root.iterdir())
    except OSError:
        return []
    records = []
    for child in children:
        if not child.is_dir() or child.name.startswith((".", "_")):
            continue
        manifest = child / "plugin.yaml"
        if not manifest.is_file() and not (child / "__init__.py").is_file():
            continue
        records.append(PluginRecord(id=child.name, source=source, module=f"hermes_plugins.{slug(child.name)}",
                                    path=str(child), manifest_path=str(manifest) if manifest.is_file() else None))
    return records


def read_manifest(record: PluginRecord) -> None:
    """Parse the record's manifest; problems are recorded, never raised."""
    if record.manifest_path is None:
        if record.source != "pip":
            record.warnings.append("no plugin.yaml; the plugin is imported to learn what it provides")
        return
    try:
        record.manifest = load_manifest(Path(record.manifest_path))
    except ManifestError as exc:
        if record.source == "pip" and not _declares_tools(Path(record.manifest_path)):
            # Hermes Agent never reads a plugin.yaml shipped in a wheel, so published plugins ship them in
            # shapes of their own; such a plugin loads through register(ctx), as it does there.
            record.warnings.append(f"plugin.yaml ignored, as Hermes Agent ignores it: {exc}")
            return
        record.fail(f"invalid manifest: {exc}")
        return
    apply_manifest_warnings(record)


def _declares_tools(path: Path) -> bool:
    """The manifest has a ``tools:`` list, so it is written for Hermes and must be valid."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and "tools" in data


def apply_manifest_warnings(record: PluginRecord) -> None:
    manifest = record.manifest
    assert manifest is not None
    for name in manifest.unknown_fields:
        record.warnings.append(f"unknown manifest field {name!r} ignored")
    if manifest.name and manifest.name != record.id and slug(manifest.name) != slug(record.id):
        record.warnings.append(f"manifest name {manifest.name!r} differs from the plugin id {record.id!r}; "
                               "the id is used")


def select(records: list[PluginRecord], config: HermesConfig) -> list[PluginRecord]:
    """Rank sources (project > user > pip) and apply the selection rules before anything is imported."""
    records = sorted(records, key=lambda r: (r.id, SOURCE_RANK[r.source]))
    winners: dict[str, PluginRecord] = {}
    for record in records:
        winner = winners.get(record.id)
        if winner is not None:
            record.state = "shadowed"
            record.reason = f"shadowed by the {winner.source} plugin at {winner.path or winner.module}"
            continue
        winners[record.id] = record
        excluded = _exclusion(record.id, config)
        if excluded is not None:
            record.state, record.reason = excluded
    return records


def _exclusion(plugin_id: str, config: HermesConfig) -> tuple[State, str] | None:
    if os.environ.get("HERMES_SAFE_MODE", "").strip().lower() in TRUTHY:
        return "disabled", "HERMES_SAFE_MODE is set: no plugins run"
    if plugin_id in config.plugins.disabled:
        return "disabled", "listed in plugins.disabled"
    only = os.environ.get("HERMES_LOAD_PLUGINS")
    if only is not None:
        wanted = {name.strip() for name in only.split(",") if name.strip()}
        if plugin_id not in wanted:
            return "not enabled", "not listed in HERMES_LOAD_PLUGINS"
    elif config.plugins.enabled is not None and plugin_id not in config.plugins.enabled:
        return "not enabled", "not listed in the plugins.enabled allow-list"
    return None


def debug_enabled() -> bool:
    return os.environ.get("HERMES_PLUGINS_DEBUG", "").strip().lower() in TRUTHY

