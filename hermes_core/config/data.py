"""``config.yaml`` as plain data, validated once per content and kept in the home's cache.

Start-up paths (listing plugins and tools, ``--help``) need a few settings but not the pydantic models:
building those costs more than everything else such a command does. The first read of a given content
validates it with :class:`~hermes_core.config.model.HermesConfig` and stores the result (defaults filled in)
as JSON in ``cache/config-<checksum>.json``, beside the text it was validated from; later reads of the
same text load that file. An invalid file is never cached, so it is reported every time; a cache file
of any other shape, of another text, or written by other code (another release, or models that changed since: a
new key, a new default) is ignored and rewritten.

The checksum (a CRC-32: ``zlib`` loads in a fraction of the time ``hashlib`` takes) only names the file;
a hit compares the stored text with the file's whole, so two texts sharing a checksum cannot be mistaken
for one another.
"""

from __future__ import annotations

import json
import logging
import zlib
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .cachefile import code_key, write_json
from .untrusted import TEXT_LIMIT, read_untrusted_bytes

__all__ = ["ENTRY_KEYS", "PLUGINS_KEYS", "config_data", "override_granted", "plugin_settings"]

log = logging.getLogger(__name__)

_PREFIX = "config-"
#: The code whose change makes a cached content stale: the models (their keys, defaults and validators) and this.
_CODE = ("config/model.py", "config/data.py")
#: The keys of a ``plugins.entries.<id>`` mapping that are Hermes's own (the fields of ``PluginEntryConfig``).
ENTRY_KEYS = frozenset({"allow_tool_override", "settings"})
#: The keys of ``plugins`` that are Hermes's own (any other is a plugin's settings block).
PLUGINS_KEYS = frozenset({"enabled", "disabled", "entries", "hook_timeout", "max_abandoned_hooks", "load_timeout",
                           "post_hooks", "exit_timeout"})

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
    """What ``plugin_id`` reads as its settings in config data: its ``plugins.<id>`` block (Hermes Agent's
    layout), under the keys of its ``plugins.entries.<id>`` beside Hermes's own, with ``settings`` over them (as
    ``HermesConfig.plugin_settings`` does on the models); ``{}`` when it has neither."""
    block = data["plugins"].get(plugin_id) if plugin_id not in PLUGINS_KEYS else None
    entry = data["plugins"]["entries"].get(plugin_id) or {}
    return {**(block or {}), **{key: value for key, value in entry.items() if key not in ENTRY_KEYS},
            **(entry.get("settings") or {})}


def override_granted(data: dict[str, Any], plugin_id: str) -> bool:
    """``plugins.entries.<id>.allow_tool_override`` is true in config data."""
    return bool(data["plugins"]["entries"].get(plugin_id, {}).get("allow_tool_override"))


def _read(config_file: Path, cache_dir: Path) -> dict[str, Any]:
    try:
        text = read_untrusted_bytes(config_file, TEXT_LIMIT, follow_symlinks=True)
    except (FileNotFoundError, NotADirectoryError):
        text = None
    except OSError as exc:
        raise ConfigError(f"{config_file}: cannot read: {exc.strerror or exc}") from None
    try:
        document = text.decode("utf-8") if text is not None else None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{config_file}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    key = [code_key(*_CODE), document]  # what a cache file of this content holds beside the data
    path = cache_dir / f"{_PREFIX}{zlib.crc32(json.dumps(key).encode()):08x}.json"
    try:
        stored = json.loads(read_untrusted_bytes(path, TEXT_LIMIT))
        if stored["key"] == key and isinstance(stored["data"], dict):
            return stored["data"]
    except Exception:  # missing, unreadable, another text's, or not what this module writes: validate again
        pass
    from .model import parse_config

    data = parse_config(document or "", config_file).model_dump(mode="json")
    _write(path, {"key": key, "data": data})
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
