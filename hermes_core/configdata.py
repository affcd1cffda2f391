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

__all__ = ["config_data"]

log = logging.getLogger(__name__)

FORMAT = 4
_PREFIX = "config-"


def config_data(config_file: Path, cache_dir: Path) -> dict[str, Any]:
    """The validated content of ``config_file`` (defaults when it is missing) as JSON-compatible data.

    Raises :class:`~hermes_core.config.ConfigError` for a file that cannot be read or is invalid.
    """
    try:
        text = config_file.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        text = None
    except OSError as exc:
        from .config import ConfigError

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
    from .config import ConfigError, parse_config

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
