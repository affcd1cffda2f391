"""A discovery cache under ``$HERMES_HOME/cache/``: validated manifests as plain data.

The cache is valid while the interpreter, ``sys.path``, the folders on it, the ``entry_points.txt`` files
and every manifest and plugin folder it saw keep their paths and modification times: installing,
removing or editing a plugin changes one of those, so it is seen at once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import sys
from importlib.metadata import distributions
from pathlib import Path
from typing import Any

from .config import hermes_home
from .discovery import PluginRecord, discover_candidates, plugin_roots
from .manifest import PluginManifest

__all__ = ["cache_enabled", "cached_candidates"]

log = logging.getLogger(__name__)

FORMAT = 1


def cache_enabled() -> bool:
    return os.environ.get("HERMES_NO_CACHE", "").strip().lower() not in {"1", "true", "yes", "on"}


def cached_candidates(cwd: Path | None = None) -> list[PluginRecord]:
    """Like :func:`discover_candidates`, from the cache when nothing it depends on changed."""
    if not cache_enabled():
        return discover_candidates(cwd)
    roots = [str(root) for root, _ in plugin_roots(cwd)]
    key = hashlib.sha256(json.dumps([FORMAT, sys.executable, sys.path, roots]).encode()).hexdigest()[:24]
    path = hermes_home() / "cache" / f"discovery-{key}.json"
    stored = _read(path)
    if stored is not None and stored["stamps"] == _stamps(stored["watched"]):
        return [_record(data) for data in stored["records"]]
    records = discover_candidates(cwd)
    watched = _watched(records, roots)
    _write(path, {"stamps": _stamps(watched), "watched": watched,
                  "records": [_plain(record) for record in records]})
    return records


def _watched(records: list[PluginRecord], roots: list[str]) -> list[str]:
    files = [p for p in sys.path if p] + roots
    files += [str(Path(dist._path) / "entry_points.txt")  # type: ignore[attr-defined]
              for dist in distributions() if hasattr(dist, "_path") and dist.read_text("entry_points.txt")]
    for record in records:
        files += [p for p in (record.manifest_path, record.path if record.source != "pip" else None) if p]
    return sorted(set(files))


def _stamps(paths: list[str]) -> list[int | None]:
    stamps: list[int | None] = []
    for path in paths:
        try:
            stamps.append(os.stat(path).st_mtime_ns)
        except OSError:
            stamps.append(None)
    return stamps


def _plain(record: PluginRecord) -> dict[str, Any]:
    data = dataclasses.asdict(record)
    data["manifest"] = record.manifest.model_dump(mode="json", exclude_unset=True) if record.manifest else None
    return data


def _record(data: dict[str, Any]) -> PluginRecord:
    manifest = data.pop("manifest")
    record = PluginRecord(**data)
    record.manifest = PluginManifest.model_validate(manifest) if manifest is not None else None
    return record


def _read(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write(path: Path, data: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        log.debug("discovery cache not written: %s", exc)
