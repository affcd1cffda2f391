"""Where ``hermes plugins install --find-links DIR`` found the distributions it installed.

pip records nothing for a wheel it picks from a ``--find-links`` folder (no ``direct_url.json``), so ``pip
install -r`` of ``name==version`` would look for it on the index only. Hermes keeps the folders, per Python
environment, in ``$HERMES_HOME/install-sources.json``, and ``hermes plugins freeze`` writes them back as
``--find-links`` lines. A record counts only while the installed version is the one recorded.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from packaging.utils import canonicalize_name

from ..config.cachefile import write_json

__all__ = ["SOURCES_FILE", "find_links_of", "record_install"]

log = logging.getLogger(__name__)

SOURCES_FILE = "install-sources.json"


def _key(distribution: str) -> str:
    return f"{sys.prefix}|{canonicalize_name(distribution)}"


def _load(home: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads((home / SOURCES_FILE).read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.debug("%s ignored: %s", home / SOURCES_FILE, exc)
        return {}
    return data if isinstance(data, dict) else {}


def record_install(home: Path, versions: Mapping[str, str], find_links: Iterable[str]) -> None:
    """Note that ``versions`` (distribution -> version) were installed with ``find_links`` (none: from an index,
    a file or a URL, which pip records itself: any older note of those distributions is dropped)."""
    links = [link if "://" in link else str(Path(link).expanduser().resolve()) for link in find_links]
    data = _load(home)
    for name, version in versions.items():
        if links:
            data[_key(name)] = {"version": version, "find_links": links}
        else:
            data.pop(_key(name), None)
    try:
        write_json(home / SOURCES_FILE, data)
    except OSError as exc:
        log.warning("cannot keep where plugins were installed from in %s: %s", home / SOURCES_FILE, exc)


def find_links_of(home: Path, distribution: str, version: str) -> list[str]:
    """The ``--find-links`` folders ``distribution`` ``version`` of this environment was installed from, or []."""
    entry = _load(home).get(_key(distribution))
    if not isinstance(entry, dict) or entry.get("version") != version:
        return []
    links = entry.get("find_links")
    return [link for link in links if isinstance(link, str)] if isinstance(links, list) else []
