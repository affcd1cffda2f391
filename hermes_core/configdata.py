"""``config.yaml`` as plain data, validated once per content and kept in the home's cache.

Start-up paths (listing plugins and tools, ``--help``) need a few settings but not the pydantic models:
building those costs more than everything else such a command does. The first read of a given content
validates it with :class:`~hermes_core.config.HermesConfig` and stores the result (defaults filled in)
as JSON in ``cache/config-<digest>.json``; later reads of the same bytes load that file. An invalid
file is never cached, so it is reported every time; a cache file of any other shape is ignored and
rewritten.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from ._version import __version__
from .cachefile import write_json
from .errors import ConfigError

__all__ = ["ENTRY_KEYS", "config_data", "override_granted", "plugin_settings"]

log = logging.getLogger(__name__)

FORMAT = 5
_PREFIX = "config-"
#: The keys of a ``plugins.entries.<id>`` mapping that are Hermes's own (the fields of ``PluginEntryConfig``).
ENTRY_KEYS = frozenset({"allow_tool_override", "settings"})

#: The last content read of each config file, by the file's identity: (device, inode, mtime, size).
_memo: dict[Path, tuple[tuple[int, int, int, int], dict[str, Any]]] = {}


def config_data(config_file: Path, cache_dir: Path) -> dict[str, Any]:
    """The validated content of ``config_file`` (defaults when it is missing) as JSON-compatible data.

    Raises :class:`~hermes_core.errors.ConfigError` for a file that cannot be read or is invalid. The same
    file unchanged since the last read (same inode, modification time and size) is not read again; treat
    the result as read-only.
    """
    try:
        status = config_file.stat()
        identity = (status.st_dev, status.st_ino, status.st_mtime_ns, status.st_size)
    except OSError:
        identity = None
    remembered = _memo.get(config_file)
    if remembered is not None and remembered[0] == identity:
        return remembered[1]
    data = _read(config_file, cache_dir)
    if identity is not None:
        _memo[config_file] = (identity, data)
    return data


def plugin_settings(data: dict[str, Any], plugin_id: str) -> dict[str, Any]:
    """What ``plugin_id`` reads as its settings in config data: the keys of its ``plugins.entries.<id>`` beside
    Hermes's own (where plugins written for Hermes Agent keep theirs), with ``settings`` over them (as
    ``PluginEntryConfig.plugin_settings`` does on the models); ``{}`` when it has no entry."""
    entry = data["plugins"]["entries"].get(plugin_id)
    if not entry:
        return {}
    return {**{key: value for key, value in entry.items() if key not in ENTRY_KEYS}, **(entry.get("settings") or {})}


def override_granted(data: dict[str, Any], plugin_id: str) -> bool:
    """``plugins.entries.<id>.allow_tool_override`` is true in config data."""
    return bool(data["plugins"]["entries"].get(plugin_id, {}).get("allow_tool_override"))


def _read(config_file: Path, cache_dir: Path) -> dict[str, Any]:
    try:
        text = config_file.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        text = None
    except OSError as exc:
        raise ConfigError(f"{config_file}: cannot read: {exc.strerror}") from None
    digest = hashlib.sha256(b"\0".join([str(FORMAT).encode(), __version__.encode(), b"-" if text is None else
                                        b"+" + text])).hexdigest()[:24]
    path = cache_dir / f"{_PREFIX}{digest}.json"
    try:
        stored = json.loads(path.read_bytes())
        if stored["format"] == FORMAT and isinstance(stored["data"], dict):
            return stored["data"]
    except Exception:  # missing, unreadable, or not what this module writes: validate again
        pass
    from .config import parse_config

    try:
        document = text.decode("utf-8") if text is not None else ""
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{config_file}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    data = parse_config(document, config_file).model_dump(mode="json")
    _write(path, {"format": FORMAT, "data": data})
    return data


def _write(path: Path, stored: dict[str, Any]) -> None:
    """Write the cache file, and remove those of earlier contents."""
    try:
        write_json(path, stored)
        for old in path.parent.glob(f"{_PREFIX}*.json"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError as exc:
        log.debug("config cache not written: %s", exc)
