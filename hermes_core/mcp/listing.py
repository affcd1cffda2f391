"""Each MCP server's last successful tool listing, kept in the home's cache so that listing tools never
waits for a server (nor imports the ``mcp`` SDK).

One file per server, ``cache/mcp-<server>.json``: the tools as the server listed them (MCP's wire form of
``Tool``), under a digest of the server's configuration, so that editing the server's entry in
config.yaml makes the listing stale at once. A file that cannot be read, or holds anything but what
this module writes, counts as no listing.

A server never listed whose first connection failed gets a failure record in the same file instead (the error
and when), so that for :data:`FAILURE_BACKOFF` seconds later commands do not wait for it again: a dead server
costs one ``connect_timeout``, not one per command.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..config.cachefile import code_key, write_json
from ..config.untrusted import TEXT_LIMIT, read_untrusted_bytes
from .naming import sanitize

__all__ = ["FAILURE_BACKOFF", "ListingCache", "config_digest"]

log = logging.getLogger(__name__)

#: The code whose change makes a stored listing stale: what a listed tool holds (the client) and this.
_CODE = ("mcp/listing.py", "mcp/client.py")
#: Seconds a failed first connection of a server never listed is not retried by listings (``hermes mcp list``
#: and a call of one of its tools still connect).
FAILURE_BACKOFF = 300.0


def config_digest(config: Mapping[str, Any]) -> str:
    """A digest of one server's configuration (plain data); a listing stored under another is stale."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:24]


class ListingCache:
    """The tool listings of a home's MCP servers."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, server: str) -> Path:
        return self.folder / f"mcp-{sanitize(server)}.json"

    @staticmethod
    def _stamp(server: str, config: Mapping[str, Any]) -> dict[str, str]:
        """What a record is valid for: this code, the server and its configuration."""
        return {"format": code_key(*_CODE), "server": server, "config": config_digest(config)}

    def _ours(self, stored: Any, server: str, config: Mapping[str, Any]) -> bool:
        return isinstance(stored, dict) and self._stamp(server, config).items() <= stored.items()

    def load(self, server: str, config: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        """The tools of ``server``'s last listing under ``config``, or None (never listed, or stale)."""
        try:
            stored = json.loads(read_untrusted_bytes(self.path(server), TEXT_LIMIT))
            if self._ours(stored, server, config) and isinstance(stored["tools"], list) \
                    and all(isinstance(tool, dict) and isinstance(tool.get("name"), str) for tool in stored["tools"]):
                return stored["tools"]
        except FileNotFoundError:
            return None
        except Exception as exc:  # any shape but ours counts as no listing
            log.debug("MCP listing cache of %r ignored: %s: %s", server, type(exc).__name__, exc)
        return None

    def failure(self, server: str, config: Mapping[str, Any]) -> tuple[str, float] | None:
        """The error of ``server``'s failed first connection under ``config`` and its age in seconds, while that
        is under :data:`FAILURE_BACKOFF`; else None."""
        try:
            stored = json.loads(self.path(server).read_bytes())
            if self._ours(stored, server, config) and isinstance(stored["error"], str) \
                    and isinstance(stored["failed_at"], (int, float)):
                age = time.time() - stored["failed_at"]
                return (stored["error"], age) if 0 <= age < FAILURE_BACKOFF else None
        except FileNotFoundError:
            return None
        except Exception as exc:  # any shape but ours counts as no record
            log.debug("MCP failure record of %r ignored: %s: %s", server, type(exc).__name__, exc)
        return None

    def store_failure(self, server: str, config: Mapping[str, Any], error: str) -> None:
        """Record that ``server`` (never listed) failed its first connection with ``error``."""
        try:
            write_json(self.path(server), {**self._stamp(server, config), "failed_at": time.time(), "error": error})
        except OSError as exc:
            log.debug("MCP failure record of %r not written: %s", server, exc)

    def store(self, server: str, config: Mapping[str, Any], tools: list[dict[str, Any]]) -> None:
        """Keep ``tools`` as ``server``'s last listing (failures to write are logged, never raised)."""
        try:
            write_json(self.path(server), {**self._stamp(server, config), "listed_at": time.time(), "tools": tools})
        except OSError as exc:
            log.debug("MCP listing cache of %r not written: %s", server, exc)
