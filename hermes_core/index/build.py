"""Maintaining the plugin index: write entries from wheels, validate the YAML files, build ``index.json``.

``registry-index/plugins/<id>.yaml`` holds one plugin each; ``hermes index fetch`` writes them from the
plugin's wheel (read as a zip, never installed or imported), ``hermes index validate`` checks them and
``hermes index build`` turns them into ``registry-index/index.json`` and the copy bundled with hermes-tools.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from email.utils import getaddresses
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, Final

import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from pydantic import ValidationError

from ..config.untrusted import read_untrusted_text
from ..config.yamlmodel import load_untrusted_yaml, validate_yaml
from ..plugins.discovery import ENTRY_POINT_GROUP, LEGACY_ENTRY_POINT_GROUP
from ..plugins.manifest import EnvRequirement, ManifestError, _env_requirement, parse_manifest
from .catalog import (
    PLUGIN_ID,
    TAG,
    IndexEntry,
    IndexSkill,
    IndexTool,
    PluginIndexError,
    entry_json_schema,
    index_document,
)
from .wheelmeta import WheelError, WheelInfo, build_wheel, download_wheel, read_wheel

__all__ = [
    "IndexLayout",
    "build_index",
    "entries_from_wheel",
    "fetch",
    "find_layout",
    "load_entry_file",
    "manifest_facts",
    "pack_entry",
    "render_entry_file",
    "validate_index",
]

SCHEMA_FILE: Final = "plugin-entry.schema.json"
#: Project-URL labels (lower-cased, letters and digits only) that name the source repository.
REPOSITORY_LABELS: Final = ("source", "repository", "sourcecode", "code", "github", "gitlab", "git")
HOMEPAGE_LABELS: Final = ("homepage", "home", "website", "documentation", "docs")
CODE_HOSTS: Final = ("https://github.com/", "https://gitlab.com/", "https://codeberg.org/", "https://bitbucket.org/")
#: Fields ``hermes index fetch`` keeps from an existing file when the wheel does not say otherwise.
KEPT_FIELDS: Final = ("homepage", "repository", "compatibility")
#: Fields of a first-party entry that must agree with its pack's pyproject.toml and plugin.yaml.
PACK_FIELDS: Final = ("id", "distribution", "version", "summary", "license", "toolsets", "tools", "hooks",
                      "requires_env", "requires_hermes", "entry_point", "entry_point_group")
NOTE_LIMIT: Final = 300


@dataclass(frozen=True)
class IndexLayout:
    """Where the index's files live: ``registry-index/`` and, inside the Hermes repository, its neighbours."""

    root: Path

    @property
    def plugins_dir(self) -> Path:
        return self.root / "plugins"

    @property
    def index_json(self) -> Path:
        return self.root / "index.json"

    @property
    def schema(self) -> Path:
        return self.root / SCHEMA_FILE

    @property
    def packs_dir(self) -> Path | None:
        """``hermes_plugins/`` beside ``registry-index/``: the first-party packs."""
        packs = self.root.parent / "hermes_plugins"
        return packs if packs.is_dir() else None

    @property
    def bundled_index(self) -> Path | None:
        """``hermes_core/data/index.json`` beside ``registry-index/``: the copy shipped as the default index."""
        core = self.root.parent / "hermes_core"
        return core / "data" / "index.json" if (core / "__init__.py").is_file() else None

    def entry_path(self, plugin_id: str) -> Path:
        return self.plugins_dir / f"{plugin_id}.yaml"

    def display(self, path: Path) -> str:
        """``path`` relative to the repository (or the index) when it is inside it."""
        for base in (self.root.parent, self.root):
            try:
                return str(path.resolve().relative_to(base.resolve()))
            except ValueError:
                continue
        return str(path)


def find_layout(start: Path | None = None) -> IndexLayout:
    """The ``registry-index/`` folder in ``start`` or above it (``start`` may itself be one)."""
    start = (start or Path.cwd()).resolve()
    if (start / "plugins").is_dir() and start.name == "registry-index":
        return IndexLayout(start)
    for folder in (start, *start.parents):
        if (folder / "registry-index").is_dir():
            return IndexLayout(folder / "registry-index")
    raise PluginIndexError(f"no registry-index/ folder in {start} or above it; pass --root")


# -- facts ------------------------------------------------------------------------------------------------------

def _collapse(text: Any) -> str:
    return " ".join(text.split()) if isinstance(text, str) else ""


@dataclass
class ManifestFacts:
    """What a ``plugin.yaml`` says about a plugin, read leniently (published manifests vary)."""

    description: str = ""
    license: str | None = None
    homepage: str | None = None
    tools: list[IndexTool] = field(default_factory=list)
    toolsets: list[str] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)
    requires_env: list[EnvRequirement] = field(default_factory=list)
    requires_hermes: str | None = None
    notes: list[str] = field(default_factory=list)


def _names(value: Any) -> list[str]:
    """Names from a list of strings or ``{name: ...}`` mappings, or from a mapping's keys."""
    if isinstance(value, dict):
        return [key for key in value if isinstance(key, str)]
    if not isinstance(value, list):
        return []
    names = []
    for item in value:
        if isinstance(item, str):
            names.append(item)
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            names.append(item["name"])
    return names


def manifest_facts(data: dict[str, Any]) -> ManifestFacts:
    """Tools, toolsets, hooks and requirements from a parsed ``plugin.yaml`` mapping; never raises."""
    facts = ManifestFacts(description=_collapse(data.get("description")))
    for key in ("license", "homepage"):
        if isinstance(data.get(key), str) and data[key].strip():
            setattr(facts, key, data[key].strip())
    if facts.homepage and not facts.homepage.startswith(("http://", "https://")):
        facts.homepage = None
    provides: dict[str, Any] = data["provides"] if isinstance(data.get("provides"), dict) else {}

    tools: dict[str, str] = {}
    toolsets: set[str] = set()
    for source in (data.get("tools"), data.get("provides_tools"), provides.get("tools")):
        for item in source if isinstance(source, list) else []:
            if isinstance(item, str):
                tools.setdefault(item, "")
            elif isinstance(item, dict) and isinstance(item.get("name"), str):
                described = _collapse(item.get("description"))
                if described or item["name"] not in tools:
                    tools[item["name"]] = described
                if isinstance(item.get("toolset"), str):
                    toolsets.add(item["toolset"])
    facts.tools = [IndexTool(name=name, description=text) for name, text in tools.items()]
    facts.toolsets = sorted(toolsets | set(_names(data.get("toolsets"))))
    facts.hooks = sorted({hook for source in (data.get("provides_hooks"), data.get("hooks"), provides.get("hooks"))
                          for hook in _names(source)})

    envs = data.get("requires_env")
    for item in envs if isinstance(envs, list) else []:
        try:
            facts.requires_env.append(EnvRequirement.model_validate(_env_requirement(item)))
        except ValidationError:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                facts.requires_env.append(EnvRequirement(name=item["name"],
                                                         description=_collapse(item.get("description"))))
    spec = data.get("requires_hermes")
    if isinstance(spec, str) and spec.strip():
        try:
            SpecifierSet(spec)
            facts.requires_hermes = spec.strip()
        except InvalidSpecifier:
            facts.notes.append(f"requires_hermes {spec!r} in plugin.yaml is not a version specifier")
    return facts


def _license(wheel: WheelInfo) -> str | None:
    if expression := wheel.field("license_expression"):
        return expression
    text = wheel.field("license")
    if text and "\n" not in text and len(text) <= 64:
        return text
    classifiers = [c.split("::")[-1].strip() for c in wheel.metadata.get("classifiers", [])
                   if c.startswith("License ::")]
    return classifiers[0] if classifiers else None


def _author(wheel: WheelInfo) -> str | None:
    if author := wheel.field("author"):
        return _collapse(author)
    names = [name for name, _ in getaddresses([wheel.field("author_email") or ""]) if name]
    return ", ".join(names) or None


def _urls(wheel: WheelInfo) -> tuple[str | None, str | None]:
    urls = wheel.project_urls
    homepage = wheel.field("home_page") or next((urls[k] for k in HOMEPAGE_LABELS if k in urls), None)
    repository = next((urls[k] for k in REPOSITORY_LABELS if k in urls), None)
    if repository is None and homepage and homepage.startswith(CODE_HOSTS):
        repository = homepage
    valid = [u if u and u.startswith(("http://", "https://")) else None for u in (homepage, repository)]
    return valid[0], valid[1]


def tags_from_keywords(keywords: str | None) -> list[str]:
    """Search tags from a ``Keywords`` field (comma- or space-separated)."""
    if not keywords:
        return []
    words = keywords.split(",") if "," in keywords else keywords.split()
    tags = []
    for word in words:
        tag = re.sub(r"[\s_/]+", "-", word.strip().lower()).strip("-")
        if TAG.match(tag) and tag not in tags:
            tags.append(tag)
    return sorted(tags)


def _entry_point_notes(ep: EntryPoint) -> list[str]:
    notes = []
    if ep.group == LEGACY_ENTRY_POINT_GROUP:
        notes.append(f"registered in the deprecated entry-point group {LEGACY_ENTRY_POINT_GROUP!r}: Hermes Agent "
                     f"never loads it; Hermes does, with a warning")
    if ep.attr:
        notes.append(f"its entry point names a callable ({ep.value!r}), not a module that has `register`: "
                     f"Hermes Agent never loads it; Hermes does, with a warning")
    return notes


def _manifest_of(wheel: WheelInfo, ep: EntryPoint) -> tuple[ManifestFacts, list[str]]:
    member = wheel.manifest_member(ep)
    if member is None:
        return ManifestFacts(), ["no plugin.yaml in the wheel: its tools and hooks are known only once it is loaded"]
    notes = []
    expected = f"{ep.module.replace('.', '/')}/plugin.yaml"
    if not member.endswith(expected):
        notes.append(f"its plugin.yaml ({member}) is not in the folder of module {ep.module!r}, "
                     "where Hermes looks for it")
    text = wheel.read_text(member)
    try:
        data = load_untrusted_yaml(text)
    except yaml.YAMLError as exc:
        return ManifestFacts(), [*notes, f"its plugin.yaml is not valid YAML: {_collapse(str(exc))[:NOTE_LIMIT]}"]
    if not isinstance(data, dict):
        return ManifestFacts(), [*notes, "its plugin.yaml is not a mapping of fields"]
    try:
        parse_manifest(text, member)
    except ManifestError as exc:
        notes.append(f"its plugin.yaml does not validate as a Hermes manifest: {_collapse(str(exc))[:NOTE_LIMIT]}")
    facts = manifest_facts(data)
    return facts, [*notes, *facts.notes]


def _tools_in_code(wheel: WheelInfo, ep: EntryPoint) -> tuple[list[IndexTool], list[str]]:
    """The tools the package's code registers with a literal name, when no manifest declares them."""
    from .codescan import registered_tool_names

    package = ep.module.split(".")[0]
    members = [m for m in sorted(wheel.members) if m.endswith(".py") and m.startswith(f"{package}/")]
    sources = []
    for member in members:
        try:
            sources.append(wheel.read_text(member))
        except WheelError:
            continue  # too large or not text: no registration code
    names = registered_tool_names(sources)
    if not names:
        return [], []
    return [IndexTool(name=name) for name in names], ["its tools were read from its register_tool calls "
                                                      "(no manifest declares them)"]


def _skills_of(wheel: WheelInfo, ep: EntryPoint, *, sole: bool) -> tuple[list[IndexSkill], list[str]]:
    """The skills in the package of ``ep`` (anywhere in the wheel but its metadata when ``ep`` is its ``sole``
    plugin: stock-analysis-plugin ships them in a top-level ``skills/``): each folder holding a ``SKILL.md``,
    described by its front matter; one that does not validate as an index skill is left out with a note."""
    from ..skills.document import parse_front_matter

    package = ep.module.split(".")[0]
    skills, notes = [], []
    for member in sorted(wheel.members):
        if not member.endswith("/SKILL.md") or member.split("/")[0].endswith((".dist-info", ".data")):
            continue
        if not sole and f"/{package}/" not in f"/{member}":
            continue
        folder = member.removesuffix("/SKILL.md")
        try:
            fields = parse_front_matter(wheel.read_text(member), member).fields
            description = fields.get("description")
            skills.append(IndexSkill(name=fields.get("name"), path=folder,
                                     description=" ".join(description.split()) if isinstance(description, str) else ""))
        except (WheelError, ValidationError) as exc:
            notes.append(f"skill {folder} left out: {_collapse(str(exc))[:NOTE_LIMIT]}")
    return skills, notes


def entries_from_wheel(wheel: WheelInfo, *, first_party: bool = False) -> list[IndexEntry]:
    """One entry per Hermes entry point of ``wheel``, from its metadata and manifests; nothing is imported."""
    plugin_eps = wheel.plugin_entry_points()
    if not plugin_eps:
        raise WheelError(f"{wheel.path.name} declares no {ENTRY_POINT_GROUP!r} (or {LEGACY_ENTRY_POINT_GROUP!r}) "
                         "entry point: it is not a Hermes plugin")
    homepage, repository = _urls(wheel)
    entries = []
    for ep in plugin_eps:
        if not PLUGIN_ID.match(ep.name):
            raise WheelError(f"{wheel.path.name}: entry-point name {ep.name!r} cannot be a plugin id")
        facts, notes = _manifest_of(wheel, ep)
        if not facts.tools:
            facts.tools, found_notes = _tools_in_code(wheel, ep)
            notes += found_notes
        skills, skill_notes = _skills_of(wheel, ep, sole=len(plugin_eps) == 1)
        entries.append(IndexEntry(
            id=ep.name, distribution=wheel.name, requirement=str(canonicalize_name(wheel.name)),
            version=wheel.version, summary=_collapse(wheel.field("summary")) or facts.description,
            homepage=homepage or facts.homepage, repository=repository,
            license=_license(wheel) or facts.license, author=_author(wheel),
            tags=tags_from_keywords(", ".join(wheel.metadata.get("keywords", []))), first_party=first_party,
            toolsets=facts.toolsets, tools=facts.tools, hooks=facts.hooks, skills=skills,
            requires_env=facts.requires_env, requires_hermes=facts.requires_hermes, entry_point=ep.value,
            entry_point_group=ep.group, notes=[*_entry_point_notes(ep), *notes, *skill_notes]))
    return entries


# -- entry files ------------------------------------------------------------------------------------------------

def render_entry_file(entry: IndexEntry, origin: str) -> str:
    """The YAML text of ``registry-index/plugins/<id>.yaml``: fields in model order, empty ones left out."""
    data = {key: value for key, value in entry.model_dump(mode="json", exclude_none=True).items()
            if value != [] and not (key == "entry_point_group" and value == ENTRY_POINT_GROUP)}
    for tool in data.get("tools", []):
        if not tool["description"]:
            del tool["description"]
    for env in data.get("requires_env", []):
        for key, default in (("description", ""), ("url", None), ("secret", False)):
            if env.get(key, default) == default:
                env.pop(key, None)
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110, default_flow_style=False)
    header = (f"# yaml-language-server: $schema=../{SCHEMA_FILE}\n"
              f"# Facts read by `hermes index fetch` from {origin}; `tags` may be added by hand.\n")
    return header + body


def load_entry_file(path: Path) -> IndexEntry:
    """Read and validate one entry file; raises :class:`PluginIndexError` naming the file, line and field."""
    try:
        text = read_untrusted_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise PluginIndexError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    return validate_yaml(text, path, IndexEntry, PluginIndexError, "an index entry", trusted=False)


def _merge_kept(entry: IndexEntry, existing: IndexEntry | None) -> IndexEntry:
    if existing is None:
        return entry
    update: dict[str, Any] = {"tags": sorted(set(entry.tags) | set(existing.tags)),
                              "first_party": entry.first_party or existing.first_party}
    for name in KEPT_FIELDS:
        if getattr(entry, name) is None and getattr(existing, name) is not None:
            update[name] = getattr(existing, name)
    if canonicalize_name(existing.distribution) == canonicalize_name(entry.distribution) \
            and existing.requirement != str(canonicalize_name(existing.distribution)):
        update["requirement"] = existing.requirement  # a hand-tuned requirement (extras, bounds) stays
    return entry.model_copy(update=update)


def write_entry(layout: IndexLayout, entry: IndexEntry, origin: str, *, force: bool = False) -> Path:
    """Write or update ``plugins/<id>.yaml``; an id owned by another distribution is refused unless ``force``."""
    path = layout.entry_path(entry.id)
    existing = None
    if path.exists():
        existing = load_entry_file(path)
        if not force and canonicalize_name(existing.distribution) != canonicalize_name(entry.distribution):
            raise PluginIndexError(f"{layout.display(path)}: the id {entry.id!r} belongs to "
                                   f"{existing.distribution!r}, not {entry.distribution!r} (use --force to replace it)")
    entry = _merge_kept(entry, existing)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_entry_file(entry, origin), encoding="utf-8")
    return path


def _in_packs(layout: IndexLayout, project: Path) -> bool:
    packs = layout.packs_dir
    return packs is not None and project.resolve().parent == packs.resolve()


def fetch(spec: str, layout: IndexLayout, *, find_links: Sequence[str] = (), index_url: str | None = None,
          no_index: bool = False, first_party: bool | None = None, force: bool = False,
          ) -> list[tuple[Path, IndexEntry]]:
    """Get the wheel of ``spec`` (``NAME[==VERSION]``, a ``.whl`` file or a project folder), write its entries."""
    local = Path(spec)
    if spec.endswith(".whl") and local.is_file():
        return _fetch_wheel(local, local.name, layout, bool(first_party), force)
    looks_like_path = "/" in spec or spec.startswith(".") or local.is_absolute()
    if looks_like_path and local.is_dir() and ((local / "pyproject.toml").is_file() or (local / "setup.py").is_file()):
        is_pack = _in_packs(layout, local) if first_party is None else first_party
        with build_wheel(local) as wheel_path:
            return _fetch_wheel(wheel_path, wheel_path.name, layout, is_pack, force)
    with download_wheel(spec, find_links=find_links, index_url=index_url, no_index=no_index) as wheel_path:
        return _fetch_wheel(wheel_path, wheel_path.name, layout, bool(first_party), force)


def _fetch_wheel(path: Path, origin: str, layout: IndexLayout, first_party: bool,
                 force: bool) -> list[tuple[Path, IndexEntry]]:
    with read_wheel(path) as wheel:
        entries = entries_from_wheel(wheel, first_party=first_party)
    written = []
    for entry in entries:
        file = write_entry(layout, entry, origin, force=force)
        written.append((file, load_entry_file(file)))
    return written


# -- first-party packs ------------------------------------------------------------------------------------------

def pack_entry(pack: Path) -> IndexEntry:
    """The entry a first-party pack's wheel would give, from its ``pyproject.toml`` and ``plugin.yaml`` sources."""
    try:
        project = tomllib.loads((pack / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise PluginIndexError(f"{pack / 'pyproject.toml'}: cannot read the project table: {exc}") from None
    groups = project.get("entry-points", {})
    group = ENTRY_POINT_GROUP if ENTRY_POINT_GROUP in groups else LEGACY_ENTRY_POINT_GROUP
    points = groups.get(group, {})
    if len(points) != 1:
        raise PluginIndexError(f"{pack / 'pyproject.toml'}: expected one {ENTRY_POINT_GROUP!r} entry point, "
                               f"found {len(points)}")
    (plugin_id, value), = points.items()
    ep = EntryPoint(name=plugin_id, value=value, group=group)
    manifest = pack / ep.module.replace(".", "/") / "plugin.yaml"
    try:
        data = load_untrusted_yaml(manifest.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise PluginIndexError(f"{manifest}: cannot read: {exc}") from None
    facts = manifest_facts(data if isinstance(data, dict) else {})
    license_ = project.get("license")
    license_ = license_.get("text") if isinstance(license_, dict) else license_
    return IndexEntry(
        id=plugin_id, distribution=project["name"], requirement=str(canonicalize_name(project["name"])),
        version=str(project.get("version", "0")), summary=_collapse(project.get("description")) or facts.description,
        license=license_ or facts.license, first_party=True, toolsets=facts.toolsets, tools=facts.tools,
        hooks=facts.hooks, requires_env=facts.requires_env, requires_hermes=facts.requires_hermes,
        entry_point=value, entry_point_group=group, notes=_entry_point_notes(ep) + facts.notes)


def _pack_dirs(layout: IndexLayout) -> list[Path]:
    packs = layout.packs_dir
    if packs is None:
        return []
    return sorted(p for p in packs.iterdir() if (p / "pyproject.toml").is_file())


def _disagreements(entry: IndexEntry, expected: IndexEntry) -> list[str]:
    found = []
    for name in PACK_FIELDS:
        have, want = getattr(entry, name), getattr(expected, name)
        if have == want:
            continue
        if name == "tools":
            have_names, want_names = entry.tool_names, expected.tool_names
            if have_names != want_names:
                found.append(f"tools are {have_names}, the manifest declares {want_names}")
            else:
                changed = [t.name for t, w in zip(entry.tools, expected.tools, strict=True) if t != w]
                found.append(f"the descriptions of {', '.join(changed)} differ from the manifest")
        elif name == "requires_env":
            found.append("requires_env differs from the manifest")
        else:
            found.append(f"{name} is {have!r}, the pack says {want!r}")
    return found


# -- validate and build -----------------------------------------------------------------------------------------

def _entry_files(layout: IndexLayout) -> tuple[list[Path], list[str]]:
    problems = []
    if not layout.plugins_dir.is_dir():
        return [], [f"{layout.display(layout.plugins_dir)}: no such folder"]
    files = []
    for path in sorted(layout.plugins_dir.iterdir()):
        if path.suffix == ".yaml":
            files.append(path)
        elif not path.name.startswith("."):
            problems.append(f"{layout.display(path)}: not an entry file (entries are named <id>.yaml)")
    return files, problems


def read_entries(layout: IndexLayout) -> tuple[dict[str, tuple[Path, IndexEntry]], list[str]]:
    """Every valid entry by id, and a problem (naming the file) for each invalid, misnamed or duplicate one."""
    files, problems = _entry_files(layout)
    entries: dict[str, tuple[Path, IndexEntry]] = {}
    seen: dict[str, Path] = {}
    for path in files:
        try:
            entry = load_entry_file(path)
        except PluginIndexError as exc:
            problems.append(str(exc).replace(str(path), layout.display(path)))
            continue
        name = layout.display(path)
        if entry.id != path.stem:
            problems.append(f"{name}: id {entry.id!r} does not match the file name (expected {entry.id}.yaml)")
        key = entry.id.casefold()
        if key in seen:
            problems.append(f"{name}: duplicate id {entry.id!r}, already used by {layout.display(seen[key])}")
            continue
        seen[key] = path
        entries[entry.id] = (path, entry)
    return entries, problems


def _first_party_problems(layout: IndexLayout, entries: dict[str, tuple[Path, IndexEntry]]) -> list[str]:
    problems = []
    packs = {}
    for pack in _pack_dirs(layout):
        try:
            expected = pack_entry(pack)
        except PluginIndexError as exc:
            problems.append(str(exc))
            continue
        packs[expected.id] = (pack, expected)
    for plugin_id, (pack, expected) in sorted(packs.items()):
        fix = f"run `hermes index fetch {layout.display(pack)}` then `hermes index build`"
        if plugin_id not in entries:
            problems.append(f"{layout.display(layout.entry_path(plugin_id))}: missing: the first-party pack "
                            f"{layout.display(pack)} has no index entry; {fix}")
            continue
        path, entry = entries[plugin_id]
        if not entry.first_party:
            problems.append(f"{layout.display(path)}: first_party is false, but {layout.display(pack)} is a "
                            "first-party pack")
        for problem in _disagreements(entry, expected):
            problems.append(f"{layout.display(path)}: disagrees with {layout.display(pack)}: {problem}; {fix}")
    if layout.packs_dir is not None:
        for plugin_id, (path, entry) in sorted(entries.items()):
            if entry.first_party and plugin_id not in packs:
                problems.append(f"{layout.display(path)}: first_party is true, but no pack under "
                                f"{layout.display(layout.packs_dir)} provides the plugin {plugin_id!r}")
    return problems


def _schema_text() -> str:
    return json.dumps(entry_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _outputs(layout: IndexLayout, document: str) -> list[tuple[Path, str]]:
    outputs = [(layout.index_json, document), (layout.schema, _schema_text())]
    if layout.bundled_index is not None:
        outputs.append((layout.bundled_index, document))
    return outputs


def validate_index(layout: IndexLayout, *, check_outputs: bool = True) -> list[str]:
    """Every problem with the index's files, each naming its file; an empty list means valid."""
    entries, problems = read_entries(layout)
    problems += _first_party_problems(layout, entries)
    if check_outputs and not problems:
        document = index_document(entry for _, entry in entries.values())
        for path, text in _outputs(layout, document):
            current = path.read_text(encoding="utf-8") if path.is_file() else None
            if current != text:
                state = "missing" if current is None else "out of date"
                problems.append(f"{layout.display(path)}: {state}; run `hermes index build`")
    return problems


def build_index(layout: IndexLayout) -> list[Path]:
    """Validate the entries and write ``index.json``, its bundled copy and the schema; returns the files changed."""
    problems = validate_index(layout, check_outputs=False)
    if problems:
        raise PluginIndexError("the index has problems, nothing was built:\n  " + "\n  ".join(problems))
    entries, _ = read_entries(layout)
    document = index_document(entry for _, entry in entries.values())
    changed = []
    for path, text in _outputs(layout, document):
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed
