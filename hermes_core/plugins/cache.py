"""The discovery cache in a home's ``cache/`` folder: candidates with validated manifests, as plain data.

A hit reads JSON and builds :class:`PluginCandidate` records holding that plain data: no YAML parser,
no pydantic model and no ``importlib.metadata`` scan (a miss does all three). The file is JSON lines: the first
line holds the key, the watched files and each candidate with its manifest's outline (the manifest with each tool
reduced to its name, toolset, whether it is checked, description and annotations: the index a load registers
tools by and all a listing shows); line ``2 + i`` holds candidate ``i``'s whole manifest, parsed only when something
needs a tool's schema or handler (a call parses the one plugin it calls).

The cache is valid while the interpreter, ``sys.path``, the folders on it, the ``entry_points.txt`` files
and every manifest and plugin folder it saw keep their paths and modification times: installing,
removing or editing a plugin changes one of those, so it is seen at once. A cache file that cannot be
read, or holds anything but what this module wrote, is ignored and rewritten.

A cache file is named by a CRC-32 of its key (the interpreter, ``sys.path``, the folders, the entry-point source)
and holds the key itself: a hit compares the key whole, so two keys sharing a checksum only take turns at one
file. (A CRC needs ``zlib``, which loads in a fraction of the time ``hashlib`` takes: OpenSSL's library.)
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
import sys
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..config.cachefile import code_key, write_atomically
from ..config.untrusted import TEXT_LIMIT, read_untrusted_bytes
from ..tools.toolnames import TOOL_NAME
from .discovery import PluginCandidate, Source, discover

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = ["DiscoveryCache"]

log = logging.getLogger(__name__)

#: The code whose change makes cached candidates stale: what they hold (discovery, the plain manifest) and this.
_CODE = ("plugins/cache.py", "plugins/discovery.py", "plugins/manifest.py")
#: A cache of thousands of plugins outgrows the limit of other untrusted files.
CACHE_LIMIT = 16 * TEXT_LIMIT


class DiscoveryCache:
    """Discovery results of one home, keyed by the interpreter, ``sys.path``, the plugin folders and the
    entry-point source."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def candidates(self, folders: Sequence[tuple[Path, Source]], entry_points: Callable[[], Sequence[EntryPoint]],
                   source_key: Any = "installed") -> list[PluginCandidate]:
        """Like :func:`~hermes_core.plugins.discovery.discover`, from the cache when nothing it depends on changed.

        ``source_key`` identifies the entry-point source (``"installed"``, or the injected entry points).
        """
        roots = [str(root) for root, _ in folders]
        key = json.dumps([code_key(*_CODE), sys.executable, sys.path, roots, source_key], default=str)
        path = self.folder / f"discovery-{zlib.crc32(key.encode()):08x}.json"
        cached = _load(path, key)
        if cached is not None:
            return cached
        eps = entry_points()
        candidates = discover(folders, eps)
        watched = _watched(candidates, roots, eps if source_key != "installed" else None)
        header = {"key": key, "stamps": _stamps(watched), "watched": watched,
                  "records": [_plain(candidate) for candidate in candidates]}
        _write(path, [json.dumps(header), *(json.dumps(candidate.manifest_data) for candidate in candidates)])
        _prune(self.folder)
        return candidates


def _watched(candidates: list[PluginCandidate], roots: list[str], eps: Sequence[EntryPoint] | None) -> list[str]:
    from importlib.metadata import distributions

    files = [p for p in sys.path if p] + roots
    dists = distributions() if eps is None else [ep.dist for ep in eps if ep.dist is not None]
    files += [str(Path(dist._path) / "entry_points.txt")
              for dist in dists if hasattr(dist, "_path") and dist.read_text("entry_points.txt")]
    for candidate in candidates:
        if candidate.manifest_path:
            files.append(candidate.manifest_path)
        if candidate.path:  # the files discovery reads there, not the folder: importing writes __pycache__ into it
            files += [str(Path(candidate.path) / name) for name in ("plugin.yaml", "__init__.py")]
    return sorted(set(files))


def _stamps(paths: list[str]) -> list[int | None]:
    stamps: list[int | None] = []
    for path in paths:
        try:
            stamps.append(os.stat(path).st_mtime_ns)
        except OSError:
            stamps.append(None)
    return stamps


_FIELDS = tuple(field.name for field in dataclasses.fields(PluginCandidate) if field.name != "full_manifest")


def _plain(candidate: PluginCandidate) -> dict[str, Any]:
    data = {name: getattr(candidate, name) for name in _FIELDS}
    data["warnings"] = list(candidate.warnings)
    return data


def _load(path: Path, key: str) -> list[PluginCandidate] | None:
    """The cached candidates of ``key``, or None when the file is missing, stale, another key's, or not what
    this module writes."""
    try:
        content = read_untrusted_bytes(path, CACHE_LIMIT)
        stored = json.loads(content[:content.find(b"\n")] if b"\n" in content else content)
    except (OSError, ValueError):  # (a UnicodeDecodeError is a ValueError)
        return None
    try:
        if stored["key"] != key or not isinstance(stored["watched"], list) \
                or stored["stamps"] != _stamps([str(p) for p in stored["watched"]]) \
                or content.count(b"\n") != len(stored["records"]):
            return None
        lines = _Lines(content)
        return [_candidate(dict(data), functools.partial(_manifest, path, lines, index + 1))
                for index, data in enumerate(stored["records"])]
    except Exception as exc:  # any shape but ours: ignore it, the caller rewrites it
        log.debug("discovery cache %s ignored: %s: %s", path, type(exc).__name__, exc)
        return None


def _candidate(data: dict[str, Any], manifest: Callable[[], dict[str, Any] | None]) -> PluginCandidate:
    data["warnings"] = tuple(data["warnings"])
    candidate = PluginCandidate(**data, full_manifest=manifest if data.get("outline") is not None else None)
    outline = candidate.outline
    plain_outline = outline is None or (isinstance(outline, dict) and _tool_outlines(outline.get("tools")))
    if not isinstance(candidate.id, str) or candidate.source not in ("pip", "user", "project") or not plain_outline:
        raise ValueError("not a plugin candidate")
    return candidate


#: The types of what :func:`~hermes_core.plugins.discovery.outline_of` makes of a tool.
_TOOL_OUTLINES = frozenset({(str, str, bool, str, dict), (str, str, bool, str, type(None))})


def _tool_outlines(tools: Any) -> bool:
    """``tools`` is None or a list of what :func:`~hermes_core.plugins.discovery.outline_of` makes of each tool."""
    if tools is None:
        return True
    shapes = _TOOL_OUTLINES
    return type(tools) is list and all(type(tool) is list and tuple(map(type, tool)) in shapes for tool in tools) \
        and all(TOOL_NAME.fullmatch(tool[0]) for tool in tools)


class _Lines:
    """The lines of a cache file's content, split when a manifest is first read (a listing reads none)."""

    def __init__(self, content: bytes) -> None:
        self.content = content

    @functools.cached_property
    def lines(self) -> list[bytes]:
        return self.content.split(b"\n")

    def __getitem__(self, line: int) -> bytes:
        return self.lines[line]


def _manifest(path: Path, lines: _Lines, line: int) -> dict[str, Any] | None:
    """The whole manifest a cache line holds; when the line is not one (a file changed under the reader), the
    cache file is removed (the next process discovers again) and the plugin's tools say so when used."""
    try:
        data = json.loads(lines[line])
        if isinstance(data, dict) and isinstance(data.get("tools"), list | None):
            return data
    except ValueError:
        pass
    log.warning("the discovery cache %s holds a manifest Hermes did not write; it is removed", path)
    path.unlink(missing_ok=True)
    return None


#: Discovery cache files a home keeps: one per environment that ran Hermes with it (interpreter, ``sys.path``,
#: Hermes' own code), the most recently written; the others are what earlier versions or removed venvs left.
KEPT_FILES: Final = 8


def _prune(folder: Path) -> None:
    """Remove all but the :data:`KEPT_FILES` discovery cache files last written in ``folder``."""
    try:
        files = sorted(folder.glob("discovery-*.json"), key=lambda file: file.stat().st_mtime_ns, reverse=True)
        for old in files[KEPT_FILES:]:
            old.unlink(missing_ok=True)
    except OSError as exc:  # (one removed by another process meanwhile: the next write prunes again)
        log.debug("discovery cache not pruned: %s", exc)


def _write(path: Path, lines: list[str]) -> None:
    try:
        write_atomically(path, "\n".join(lines))
    except OSError as exc:
        log.debug("discovery cache not written: %s", exc)
