"""The plugin index: what is published for Hermes, searchable before anything is installed.

The index is one JSON document (``registry-index/index.json``, built from one YAML file per plugin);
a copy ships inside ``hermes_core`` as the default. ``HERMES_INDEX_URL`` or ``index.url`` in
config.yaml point at another one, a file path or an http(s) URL.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from ..config.home import HermesHome
from ..config.untrusted import TEXT_LIMIT, read_untrusted_text
from ..errors import PluginIndexError
from ..plugins.manifest import EnvRequirement, _env_requirement, _specifier

__all__ = [
    "INDEX_FORMAT",
    "INDEX_URL_ENV",
    "IndexEntry",
    "IndexSkill",
    "IndexTool",
    "PluginIndex",
    "PluginIndexError",
    "bundled_index_path",
    "entry_json_schema",
    "index_document",
    "index_source",
    "load_index",
    "parse_index",
]

#: The version of the ``index.json`` layout this core reads and writes.
INDEX_FORMAT: Final = 1
#: The environment variable that points at another index (a file path or an http(s) URL).
INDEX_URL_ENV: Final = "HERMES_INDEX_URL"
#: Seconds to wait for an index served over http(s).
HTTP_TIMEOUT: Final = 15.0

PLUGIN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
TAG = re.compile(r"^[a-z0-9][a-z0-9+.-]{0,47}$")


def _plugin_id(value: str) -> str:
    if not PLUGIN_ID.match(value):
        raise ValueError("must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit")
    return value


def _requirement(value: str) -> str:
    try:
        Requirement(value)
    except InvalidRequirement as exc:
        raise ValueError(f"{value!r} is not a pip requirement: {exc}") from None
    return value


def _version(value: str) -> str:
    try:
        Version(value)
    except InvalidVersion:
        raise ValueError(f"{value!r} is not a PEP 440 version") from None
    return value


def _url(value: str) -> str:
    if not value.startswith(("https://", "http://")):
        raise ValueError("must be an http(s) URL")
    return value


def _tag(value: str) -> str:
    if not TAG.match(value):
        raise ValueError(f"{value!r}: tags are lower-case words joined by '-' (letters, digits, '+', '.')")
    return value


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class IndexTool(_Model):
    """A tool the plugin provides, as its manifest describes it."""

    name: str = Field(description="The name the model calls the tool by.")
    description: str = Field("", description="What the tool does (empty when the manifest only names it).")


def _skill_name(value: str) -> str:
    from ..skills.validation import name_problems

    problems = name_problems(value)
    if problems:
        raise ValueError("; ".join(problems))
    return value


def _wheel_folder(value: str) -> str:
    parts = value.split("/")
    if not value or value.startswith("/") or any(part in ("", ".", "..") or ":" in part for part in parts):
        raise ValueError(f"{value!r} is not a relative folder inside the wheel")
    return value


class IndexSkill(_Model):
    """A skill the plugin ships: a folder of its wheel with a ``SKILL.md`` (the Agent Skills standard)."""

    name: Annotated[str, AfterValidator(_skill_name)] = Field(
        description="The skill's name under the standard's rules; Hermes offers it as `<plugin id>:<name>`.")
    description: str = Field(min_length=1, max_length=1024, description="What the skill is for, from its front "
                                                                        "matter.")
    path: Annotated[str, AfterValidator(_wheel_folder)] = Field(
        description="Its folder inside the wheel, e.g. `my_plugin/skills/guide`: what `hermes skills install ID` "
                    "copies.")


class IndexEntry(_Model):
    """One plugin in the index: facts read from its published wheel, without installing or importing it."""

    id: Annotated[str, AfterValidator(_plugin_id)] = Field(
        description="The plugin id: the entry-point name, used by `plugins.enabled` and `plugins.disabled`.")
    distribution: str = Field(description="The distribution (PyPI project) that ships the plugin.")
    requirement: Annotated[str, AfterValidator(_requirement)] = Field(
        description="What `hermes plugins install ID` passes to pip, e.g. `hermes-tools-web` or `pkg>=1.2`.")
    version: Annotated[str, AfterValidator(_version)] = Field(
        description="The version of the distribution the facts below were read from.")
    summary: str = Field("", description="One line on what the plugin does.")
    homepage: Annotated[str, AfterValidator(_url)] | None = Field(None, description="The project's home page.")
    repository: Annotated[str, AfterValidator(_url)] | None = Field(None, description="Where its source lives.")
    license: str | None = Field(None, description="Its license, as the distribution declares it.")
    author: str | None = Field(None, description="Who publishes it.")
    tags: list[Annotated[str, AfterValidator(_tag)]] = Field(
        default_factory=list, description="Search keywords: the distribution's keywords plus any added by hand.")
    first_party: bool = Field(False, description="One of the packs maintained with Hermes under `hermes_plugins/`.")
    toolsets: list[str] = Field(default_factory=list, description="Toolsets it contributes to or defines.")
    tools: list[IndexTool] = Field(default_factory=list, description="Tools it provides.")
    hooks: list[str] = Field(default_factory=list, description="Hooks it implements.")
    skills: list[IndexSkill] = Field(default_factory=list, description="Skills it ships (`hermes skills install "
                                                                       "ID` installs them without the plugin).")
    requires_env: list[Annotated[EnvRequirement, BeforeValidator(_env_requirement)]] = Field(
        default_factory=list, description="Environment variables it uses (information, not a gate).")
    requires_hermes: Annotated[str, AfterValidator(_specifier)] | None = Field(
        None, description="The PEP 440 specifier its manifest sets for the Hermes core version.")
    entry_point: str = Field(description="The entry point's value: the module Hermes imports to load it.")
    entry_point_group: Literal["hermes_agent.plugins", "hermes.plugins"] = Field(
        "hermes_agent.plugins", description="The entry-point group it is registered in.")
    notes: list[str] = Field(default_factory=list, description="What fetching it found worth knowing "
                                                               "(deprecated group, no manifest, ...).")

    @model_validator(mode="after")
    def _requirement_names_distribution(self) -> IndexEntry:
        name = Requirement(self.requirement).name
        if canonicalize_name(name) != canonicalize_name(self.distribution):
            raise ValueError(f"requirement {self.requirement!r} installs {name!r}, "
                             f"not the distribution {self.distribution!r}")
        return self

    @property
    def tool_names(self) -> list[str]:
        return [tool.name for tool in self.tools]


@dataclass(frozen=True)
class _Field:
    """How much a query term matching one field of an entry is worth."""

    exact: float
    prefix: float
    partial: float


#: Field weights for search: an exact id or tool name beats a tag, a tag beats the summary.
_WEIGHTS: Final = {
    "id": _Field(12, 8, 6),
    "tool": _Field(10, 6, 5),
    "distribution": _Field(8, 5, 4),
    "tag": _Field(6, 4, 3),
    "summary": _Field(3, 2, 1.5),
    "tool_description": _Field(1, 0.75, 0.5),
}
#: Bonuses for the whole query matching exactly.
_EXACT_ID: Final = 100.0
_EXACT_TOOL: Final = 90.0
_EXACT_TAG: Final = 30.0

_WORD = re.compile(r"[a-z0-9_]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _parts(name: str) -> set[str]:
    """The words of an identifier such as ``web_extract`` or ``github-app``."""
    return set(re.findall(r"[a-z0-9]+", name.lower()))


def _term_score(term: str, fields: dict[str, list[str]]) -> float:
    best = 0.0
    for kind, values in fields.items():
        weight = _WEIGHTS[kind]
        for value in values:
            if value == term:
                best = max(best, weight.exact)
            elif value.startswith(term):
                best = max(best, weight.prefix)
            elif term in value:
                best = max(best, weight.partial)
    return best


def score(entry: IndexEntry, query: str) -> float:
    """How well ``entry`` matches ``query`` (0 = not at all); every term must match somewhere."""
    phrase = " ".join(query.lower().split())
    if not phrase:
        return 0.0
    tool_names = [name.lower() for name in entry.tool_names]
    fields = {
        "id": [entry.id.lower(), *_parts(entry.id)],
        "tool": [*tool_names, *(w for name in tool_names for w in _parts(name))],
        "distribution": [entry.distribution.lower()],
        "tag": [tag.lower() for tag in entry.tags] + [ts.lower() for ts in entry.toolsets]
               + [hook.lower() for hook in entry.hooks],
        "summary": sorted(_words(entry.summary)),
        "tool_description": sorted({w for tool in entry.tools for w in _words(tool.description)}),
    }
    total = 0.0
    for term in phrase.split():
        points = _term_score(term, fields)
        if not points:
            return 0.0
        total += points
    joined = {phrase, phrase.replace(" ", "_"), phrase.replace(" ", "-")}
    if joined & {entry.id.lower()}:
        total += _EXACT_ID
    if joined & set(tool_names):
        total += _EXACT_TOOL
    if joined & set(fields["tag"]):
        total += _EXACT_TAG
    if " " in phrase and phrase in entry.summary.lower():
        total += _WEIGHTS["summary"].exact * 2
    return total


@dataclass
class PluginIndex:
    """The plugins an index lists, by id, and where the index was read from."""

    entries: dict[str, IndexEntry]
    source: str = "(in memory)"
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, entries: Iterable[IndexEntry], source: str = "(in memory)") -> PluginIndex:
        return cls({entry.id: entry for entry in sorted(entries, key=lambda e: e.id)}, source)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[IndexEntry]:
        return iter(self.entries.values())

    def get(self, plugin_id: str) -> IndexEntry | None:
        """The entry for ``plugin_id``; a case-insensitive id or a distribution name that is unambiguous also works."""
        if plugin_id in self.entries:
            return self.entries[plugin_id]
        folded = plugin_id.casefold()
        matches = [e for e in self.entries.values() if e.id.casefold() == folded]
        if not matches:
            name = canonicalize_name(plugin_id)
            matches = [e for e in self.entries.values() if canonicalize_name(e.distribution) == name]
        return matches[0] if len(matches) == 1 else None

    def search(self, query: str) -> list[tuple[float, IndexEntry]]:
        """Entries matching ``query``, best first (over id, tool names, tags, summary); an empty query lists all."""
        if not query.strip():
            return [(0.0, entry) for entry in self.entries.values()]
        scored = [(score(entry, query), entry) for entry in self.entries.values()]
        return sorted(((s, e) for s, e in scored if s > 0), key=lambda pair: (-pair[0], pair[1].id))


def bundled_index_path() -> Path:
    """The index shipped inside ``hermes_core`` (the default)."""
    return Path(str(resources.files("hermes_core") / "data" / "index.json"))


def index_source(home: HermesHome | None = None) -> tuple[str, str]:
    """Where the index comes from, and which setting said so: ``$HERMES_INDEX_URL``, then ``index.url`` of the
    home's config.yaml (relative to it), then the bundled copy."""
    from_env = os.environ.get(INDEX_URL_ENV, "").strip()
    if from_env:
        return from_env, INDEX_URL_ENV
    url = home.config().index.url if home is not None else None
    if home is not None and url and url.strip():
        url = url.strip()
        if not _is_url(url) and not Path(url).expanduser().is_absolute():
            url = str(home.root / url)
        return url, f"index.url in {home.config_file}"
    return str(bundled_index_path()), "the index bundled with hermes-tools"


def load_index(source: str | Path | None = None, home: HermesHome | None = None) -> PluginIndex:
    """Read the index from ``source`` (default: :func:`index_source` of ``home``); raises
    :class:`PluginIndexError`."""
    origin = "the command line"
    if source is None:
        source, origin = index_source(home)
    source = str(source)
    where = source if origin == "the command line" else f"{source} (from {origin})"
    text = _read(source, where)
    return parse_index(text, where)


def _is_url(source: str) -> bool:
    return source.startswith(("http://", "https://", "file://"))


def _read(source: str, where: str) -> str:
    if source.startswith(("http://", "https://")):
        request = urllib.request.Request(source, headers={"User-Agent": "hermes-index", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
                body = response.read(TEXT_LIMIT + 1)  # a server that never stops sending cannot fill the memory
            if len(body) > TEXT_LIMIT:
                raise PluginIndexError(f"cannot read the plugin index at {where}: it is larger than {TEXT_LIMIT} bytes")
            return body.decode("utf-8")
        except urllib.error.HTTPError as exc:
            raise PluginIndexError(f"cannot read the plugin index at {where}: HTTP {exc.code} {exc.reason}") from None
        except urllib.error.URLError as exc:
            raise PluginIndexError(f"cannot read the plugin index at {where}: {exc.reason}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise PluginIndexError(f"cannot read the plugin index at {where}: {exc}") from None
    if source.startswith("file://"):
        source = urllib.request.url2pathname(source.removeprefix("file://"))
    path = Path(source).expanduser()
    if path.is_dir():
        path = path / "index.json"
    try:
        return read_untrusted_text(path, TEXT_LIMIT, follow_symlinks=True)
    except FileNotFoundError:
        raise PluginIndexError(f"cannot read the plugin index at {where}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PluginIndexError(f"cannot read the plugin index at {where}: {exc}") from None


def parse_index(text: str, where: str = "index.json") -> PluginIndex:
    """Validate the text of an ``index.json``; every problem names the entry it is in."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PluginIndexError(f"{where}: not a plugin index: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("plugins"), list):
        raise PluginIndexError(f"{where}: not a plugin index: expected an object with a 'plugins' list")
    if data.get("format", INDEX_FORMAT) != INDEX_FORMAT:
        raise PluginIndexError(f"{where}: index format {data.get('format')!r} is not supported "
                               f"(this hermes-tools reads format {INDEX_FORMAT}); upgrade hermes-tools")
    entries: dict[str, IndexEntry] = {}
    problems: list[str] = []
    for position, item in enumerate(data["plugins"]):
        label = f"plugins[{position}]" + (f" ({item['id']})" if isinstance(item, dict) and "id" in item else "")
        try:
            entry = IndexEntry.model_validate(item)
        except ValidationError as exc:
            problems += [f"{label}: {'.'.join(map(str, e['loc'])) or '(entry)'}: {e['msg']}" for e in exc.errors()]
            continue
        if entry.id in entries:
            problems.append(f"{label}: duplicate id {entry.id!r}")
            continue
        entries[entry.id] = entry
    if problems:
        raise PluginIndexError(f"{where}: invalid plugin index: " + "; ".join(problems))
    return PluginIndex(dict(sorted(entries.items())), where)


def index_document(entries: Iterable[IndexEntry]) -> str:
    """The stable text of an ``index.json``: entries sorted by id, keys sorted, a final newline."""
    plugins = [entry.model_dump(mode="json") for entry in sorted(entries, key=lambda e: e.id)]
    return json.dumps({"format": INDEX_FORMAT, "plugins": plugins}, indent=2, sort_keys=True,
                      ensure_ascii=False) + "\n"


def entry_json_schema() -> dict[str, Any]:
    """The JSON Schema of one ``registry-index/plugins/<id>.yaml`` file."""
    schema = IndexEntry.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Hermes plugin index entry (registry-index/plugins/<id>.yaml)"
    return schema
