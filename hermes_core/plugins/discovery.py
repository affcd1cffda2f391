"""Find candidate plugins in the three sources and read their manifests — importing nothing.

Discovery produces immutable :class:`PluginCandidate` records; selection (``selection.py``) and loading
(``loader.py``) produce their own results. A bad plugin never makes discovery raise: its candidate
carries the problem.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .._version import __version__
from ..origin import direct_url

if TYPE_CHECKING:
    from importlib.metadata import Distribution, EntryPoint

    from .manifest import PluginManifest

__all__ = [
    "ENTRY_POINT_GROUP",
    "LEGACY_ENTRY_POINT_GROUP",
    "PluginCandidate",
    "Source",
    "candidate_for_validation",
    "candidate_from_entry_point",
    "candidate_from_folder",
    "candidate_from_module",
    "core_satisfies",
    "discover",
    "folder_candidates",
    "installed_entry_points",
    "outline_of",
    "slug",
]

ENTRY_POINT_GROUP = "hermes_agent.plugins"
LEGACY_ENTRY_POINT_GROUP = "hermes.plugins"
GROUPS = (ENTRY_POINT_GROUP, LEGACY_ENTRY_POINT_GROUP)

Source = Literal["pip", "user", "project"]


@dataclass(frozen=True)
class PluginCandidate:
    """One plugin as found on disk: where it is, its manifest, and what is wrong with it (if anything)."""

    #: The plugin id: the entry-point name, or the folder name.
    id: str
    #: ``pip``, ``user`` or ``project``.
    source: Source
    #: The module to import: the entry point's module, or ``hermes_plugins.<slug>`` for a folder.
    module: str
    #: The callable an entry point named after ``:`` (deprecated), else None for ``register``.
    attr: str | None = None
    #: The package folder (a plugin folder, or the installed package's folder).
    path: str | None = None
    manifest_path: str | None = None
    distribution: str | None = None
    dist_version: str | None = None
    #: The manifest's outline: the validated manifest as plain JSON data, defaults filled in, each declared tool
    #: reduced to ``[name, toolset, checked, description, annotations]`` (:func:`outline_of`): what listing plugins
    #: and tools and loading them read, so they need no pydantic model and no tool's schema; None without a (usable)
    #: plugin.yaml.
    outline: dict[str, Any] | None = None
    #: Why this plugin cannot be loaded at all (an invalid manifest), else None.
    error: str | None = None
    warnings: tuple[str, ...] = ()
    #: The package's ``__init__.py`` defines ``register`` (read with ``ast``, not imported).
    defines_register: bool = False
    #: Whether this core's version satisfies the manifest's ``requires_hermes`` (None: it has none, or it is
    #: not checked: a foreign manifest's).
    requires_hermes_met: bool | None = None
    #: The manifest is in Hermes Agent's format (information, never a gate: its ``requires_hermes`` is not checked).
    foreign_manifest: bool = False
    #: The whole validated manifest as plain data (``PluginManifest.plain()``), or what reads it when first needed
    #: (the discovery cache: a tool's details are read when that tool is first used).
    full_manifest: dict[str, Any] | Callable[[], dict[str, Any] | None] | None = \
        dataclasses.field(default=None, repr=False, compare=False)

    @property
    def manifest_data(self) -> dict[str, Any] | None:
        """The validated manifest as plain JSON data, defaults filled in (``PluginManifest.plain()``); None
        without a (usable) plugin.yaml."""
        try:
            data: dict[str, Any] | None = self.__dict__["_manifest_data"]
        except KeyError:
            source = self.full_manifest
            data = self.__dict__.setdefault("_manifest_data", source() if callable(source) else source)
        return data

    @functools.cached_property
    def manifest(self) -> PluginManifest | None:
        """The manifest as its pydantic model (built on first use from ``manifest_data``)."""
        if self.manifest_data is None:
            return None
        from .manifest import PluginManifest

        return PluginManifest.model_validate(self.manifest_data)

    @property
    def version(self) -> str | None:
        return self.dist_version or (self.outline or {}).get("version")

    def with_id(self, plugin_id: str) -> PluginCandidate:
        """The same candidate under another id (the testing kit and ``validate`` choose ids)."""
        return dataclasses.replace(self, id=plugin_id)


def outline_of(manifest_data: dict[str, Any]) -> dict[str, Any]:
    """A plain manifest with each declared tool reduced to ``[name, toolset, checked, description, annotations]``
    (``checked``: it declares a ``check`` or a ``check_fn``, so its availability must be evaluated; ``annotations``:
    the hints it gives, those left unsaid dropped, or None): all a listing shows of a tool."""
    tools = manifest_data.get("tools")
    return {**manifest_data, "tools": None if tools is None else [
        [tool["name"], tool["toolset"], bool(tool.get("check") or tool.get("check_fn")), tool["description"],
         _said(tool.get("annotations"))] for tool in tools]}


def _said(annotations: dict[str, Any] | None) -> dict[str, Any] | None:
    said = {name: value for name, value in (annotations or {}).items() if value is not None}
    return said or None


def slug(plugin_id: str) -> str:
    """The module-name form of a plugin id (``my-plugin`` → ``my_plugin``)."""
    return plugin_id.replace("-", "_").replace(".", "_")


def installed_entry_points() -> list[EntryPoint]:
    """The entry points of both plugin groups in the installed distributions."""
    from importlib.metadata import entry_points

    return [ep for group in GROUPS for ep in entry_points(group=group)]


def core_satisfies(specifier: str) -> bool:
    """This core's version satisfies the PEP 440 ``specifier`` (pre-releases included)."""
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(specifier).contains(__version__, prereleases=True)


def discover(folders: Iterable[tuple[Path, Source]], eps: Iterable[EntryPoint]) -> list[PluginCandidate]:
    """Every candidate from the entry points and the plugin folders, manifests read, not yet selected."""
    candidates: list[PluginCandidate] = []
    seen: set[str] = set()
    for ep in sorted(eps, key=lambda ep: GROUPS.index(ep.group) if ep.group in GROUPS else len(GROUPS)):
        if ep.group == LEGACY_ENTRY_POINT_GROUP and ep.name in seen:
            continue
        seen.add(ep.name)
        candidates.append(candidate_from_entry_point(ep))
    for root, source in folders:
        candidates += folder_candidates(root, source)
    return candidates


def candidate_from_entry_point(ep: EntryPoint) -> PluginCandidate:
    """The candidate of one entry point; its package is located through its distribution's own files."""
    module, _, attr = ep.value.partition(":")
    module, attr = module.strip(), attr.strip()
    dist = ep.dist
    warnings = []
    if ep.group == LEGACY_ENTRY_POINT_GROUP:
        warnings.append(f"deprecated: entry-point group {ep.group!r}; use {ENTRY_POINT_GROUP!r}")
    if attr:
        warnings.append(f"deprecated: entry-point value {ep.value!r} names a callable; "
                        f"Hermes Agent expects a module that has `register` ({module!r})")
    package = locate_package(module, dist)
    manifest = package / "plugin.yaml" if package is not None and (package / "plugin.yaml").is_file() else None
    candidate = PluginCandidate(id=ep.name, source="pip", module=module, attr=attr or None,
                                path=str(package) if package else None,
                                manifest_path=str(manifest) if manifest else None,
                                distribution=dist.metadata["Name"] if dist else None,
                                dist_version=dist.version if dist else None, warnings=tuple(warnings))
    return _read_manifest(candidate)


def folder_candidates(root: Path, source: Source) -> list[PluginCandidate]:
    """``<root>/<id>/`` folders holding ``plugin.yaml`` and/or ``__init__.py``."""
    try:
        children = sorted(root.iterdir())
    except OSError:
        return []
    found = (candidate_from_folder(child, source) for child in children
             if child.is_dir() and not child.name.startswith((".", "_")))
    return [candidate for candidate in found if candidate is not None]


def candidate_from_folder(folder: Path, source: Source = "user",
                          plugin_id: str | None = None) -> PluginCandidate | None:
    """The candidate of a plugin folder, or None when it holds neither ``plugin.yaml`` nor ``__init__.py``."""
    manifest = folder / "plugin.yaml"
    # a FIFO or a link there is a manifest that fails to load (and says why), not a plugin without one
    has_manifest = os.path.lexists(manifest)
    if not has_manifest and not (folder / "__init__.py").is_file():
        return None
    plugin_id = plugin_id or folder.name
    candidate = PluginCandidate(id=plugin_id, source=source, module=f"hermes_plugins.{slug(plugin_id)}",
                                path=str(folder), manifest_path=str(manifest) if has_manifest else None)
    return _read_manifest(candidate)


def candidate_from_module(module: str, plugin_id: str | None = None,
                          eps: Iterable[EntryPoint] | None = None) -> PluginCandidate:
    """The candidate Hermes makes for an importable package: from its entry point when one names it."""
    if importlib.util.find_spec(module.split(".")[0]) is None:
        raise ModuleNotFoundError(f"no module named {module!r}")
    ep = next((ep for ep in (installed_entry_points() if eps is None else eps)
               if ep.value.partition(":")[0].strip() == module), None)
    if ep is not None:
        candidate = candidate_from_entry_point(ep)
    else:
        package = locate_package(module, None)
        manifest = package / "plugin.yaml" if package and (package / "plugin.yaml").is_file() else None
        name = _manifest_name(manifest) or module.split(".")[0].replace("_", "-")
        candidate = _read_manifest(PluginCandidate(id=name, source="pip", module=module,
                                                   path=str(package) if package else None,
                                                   manifest_path=str(manifest) if manifest else None))
    return candidate.with_id(plugin_id) if plugin_id else candidate


def candidate_for_validation(path: Path) -> PluginCandidate | None:
    """The candidate of a path given to ``hermes plugins validate``: a plugin folder, its ``plugin.yaml``, or a
    distribution project holding one (then the id is the project's entry-point name). None: no manifest there."""
    manifest = path if path.is_file() else _find_manifest(path)
    if manifest is None:
        return None
    folder = manifest.parent
    project = _project_file(folder)
    if project is None:
        return candidate_from_folder(folder, "user")
    plugin_id = _entry_point_id(project, folder.name) or _manifest_name(manifest) or folder.name
    return _read_manifest(PluginCandidate(id=plugin_id, source="pip", module=folder.name, path=str(folder),
                                          manifest_path=str(manifest)))


# -- locating packages without importing them ----------------------------------------------------


def locate_package(module: str, dist: Distribution | None) -> Path | None:
    """The folder of package ``module``: from ``dist``'s own files when there is one (never whatever
    ``sys.path`` resolves first — a folder of that name in the working directory must not win), else
    from the import system's search (an entry point without a distribution)."""
    parts = module.split(".")
    if dist is not None:
        for file in dist.files or ():
            if file.name == "__init__.py" and tuple(file.parts[:-1]) == tuple(parts):
                return Path(str(dist.locate_file(file))).parent
        for base in _distribution_roots(dist):
            folder = base.joinpath(*parts)
            if (folder / "__init__.py").is_file():
                return folder
        return None
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    locations = [Path(location) for location in spec.submodule_search_locations]
    for part in parts[1:]:
        locations = [location / part for location in locations if (location / part).is_dir()]
    return locations[0] if locations else None


def _distribution_roots(dist: Distribution) -> list[Path]:
    """Where ``dist`` keeps its packages: beside its metadata, and for an editable install the folders its
    ``.pth`` files name and its project folder (``direct_url.json``)."""
    roots = [Path(str(dist.locate_file("")))]
    for file in dist.files or ():
        if file.suffix == ".pth":
            try:
                lines = Path(str(dist.locate_file(file))).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            roots += [Path(line.strip()) for line in lines if line.strip() and not line.startswith(("#", "import"))]
    direct = direct_url(dist)
    if direct.get("dir_info", {}).get("editable") and \
            str(direct.get("url", "")).startswith("file://"):
        project = Path(str(direct["url"]).removeprefix("file://"))
        roots += [project, project / "src"]
    return roots


# -- manifests -------------------------------------------------------------------------------------


def _read_manifest(candidate: PluginCandidate) -> PluginCandidate:
    """``candidate`` with its manifest parsed and its warnings added; problems recorded, never raised."""
    defines_register = _defines_register(Path(candidate.path) / "__init__.py") if candidate.path else False
    candidate = dataclasses.replace(candidate, defines_register=defines_register)
    if candidate.manifest_path is None:
        if candidate.source != "pip":
            return _warn(candidate, "no plugin.yaml; the plugin is imported to learn what it provides")
        return candidate
    from .manifest import ManifestError, is_hermes_agent_manifest, load_manifest, manifest_of, parse_foreign_manifest

    path = Path(candidate.manifest_path)
    data, text = _raw_manifest(path)
    warnings: list[str] = []
    try:
        if is_hermes_agent_manifest(data):
            # Hermes Agent reads its manifests leniently (and never the one in a wheel): whatever does not fit
            # ours is dropped with a warning, and the plugin loads through register(ctx), as it does there.
            manifest, warnings = parse_foreign_manifest(data, text, path)
            candidate = dataclasses.replace(candidate, foreign_manifest=True)
        else:  # read and parsed once; a file that could not be is read again for the message that says why
            manifest = manifest_of(data, text, path) if text else load_manifest(path)
    except ManifestError as exc:
        if candidate.source == "pip" and not (isinstance(data, dict) and "tools" in data):
            return _warn(candidate, f"plugin.yaml ignored, as Hermes Agent ignores it: {exc}")
        return dataclasses.replace(candidate, error=f"invalid manifest: {exc}")
    if candidate.foreign_manifest and manifest.requires_hermes:
        warnings.append(f"requires_hermes {manifest.requires_hermes!r} is shown, not checked: this plugin.yaml is in "
                        "Hermes Agent's format, where it names a Hermes Agent version")
    warnings += [f"unknown manifest field {name!r} ignored" for name in manifest.unknown_fields]
    if manifest.declarative and defines_register:
        warnings.append("the manifest declares every tool and no hooks, but the package defines register(): "
                        "Hermes imports it at load and runs register() (its hooks included); list its hooks in "
                        "provides_hooks, or remove register() to keep the plugin lazy")
    if manifest.name and manifest.name != candidate.id and slug(manifest.name) != slug(candidate.id):
        warnings.append(f"manifest name {manifest.name!r} differs from the plugin id {candidate.id!r}; the id is used")
    met = core_satisfies(manifest.requires_hermes) if manifest.requires_hermes and not candidate.foreign_manifest \
        else None
    plain = manifest.plain()
    candidate = dataclasses.replace(candidate, outline=outline_of(plain), full_manifest=plain,
                                    requires_hermes_met=met, warnings=(*candidate.warnings, *warnings))
    candidate.__dict__["manifest"] = manifest  # the model at hand, instead of building it again on first use
    return candidate


def _warn(candidate: PluginCandidate, warning: str) -> PluginCandidate:
    return dataclasses.replace(candidate, warnings=(*candidate.warnings, warning))


def _raw_manifest(path: Path) -> tuple[Any, str]:
    """The parsed YAML of a manifest and its text (``None`` and ``""`` when unreadable: validation says why)."""
    import yaml

    from ..config.untrusted import read_untrusted_text
    from ..config.yamlmodel import load_untrusted_yaml

    try:
        text = read_untrusted_text(path)
        return load_untrusted_yaml(text), text
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None, ""


def _defines_register(init: Path) -> bool:
    """``init`` defines or imports a top-level ``register`` (parsed, never run)."""
    import ast

    from ..config.untrusted import TEXT_LIMIT, read_untrusted_bytes

    try:
        tree = ast.parse(read_untrusted_bytes(init, TEXT_LIMIT, follow_symlinks=True), str(init))
    except (OSError, SyntaxError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "register":
            return True
        if isinstance(node, ast.ImportFrom) and any((alias.asname or alias.name) == "register" for alias in node.names):
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "register" for t in node.targets):
            return True
    return False


def _manifest_name(manifest: Path | None) -> str | None:
    from .manifest import ManifestError, load_manifest

    try:
        return load_manifest(manifest).name if manifest else None
    except ManifestError:
        return None  # the candidate records the problem


def _find_manifest(folder: Path) -> Path | None:
    direct = folder / "plugin.yaml"
    if direct.is_file():
        return direct
    nested = sorted(p for p in folder.glob("*/plugin.yaml") if p.is_file())
    nested = nested or sorted(p for p in folder.glob("src/*/plugin.yaml") if p.is_file())
    return nested[0] if nested else None


def _project_file(package: Path) -> Path | None:
    for parent in (package.parent, package.parent.parent):
        if (parent / "pyproject.toml").is_file():
            return parent / "pyproject.toml"
    return None


def _entry_point_id(pyproject: Path, package: str) -> str | None:
    """The plugin id a project gives ``package`` in its plugin entry points."""
    import tomllib

    from ..config.untrusted import TEXT_LIMIT, read_untrusted_text

    try:
        project = tomllib.loads(read_untrusted_text(pyproject, TEXT_LIMIT, follow_symlinks=True)).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    groups = project.get("entry-points", {})
    for group in GROUPS:
        for plugin_id, value in groups.get(group, {}).items():
            if str(value).split(":")[0].strip() == package:
                return str(plugin_id)
    return None
