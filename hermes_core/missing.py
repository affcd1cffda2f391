"""Why a tool is not in the registry, when Hermes can tell: its plugin is switched off or failed, it is a
project plugin's and project plugins are not enabled, its MCP server is not ready, or it is a tool of a plugin
the bundled plugin index lists and that is not installed.

Read from the plugin records, the names of the project's plugin folders, the MCP servers' statuses and the
bundled index: nothing is imported, and no file of a project plugin is read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .mcp.naming import PREFIX, sanitize
from .plugins.manifest import PluginManifest

if TYPE_CHECKING:
    from .plugins.records import PluginRecord

__all__ = ["declared_tools", "why_missing"]

_SHOWN = 5  # project plugin folders named in an explanation


def declared_tools(manifest: PluginManifest | None) -> set[str]:
    """The tools a manifest says its plugin provides (its ``tools:`` and ``provides_tools``)."""
    if manifest is None:
        return set()
    return {*(tool.name for tool in manifest.tools or []), *manifest.provides_tools}


def why_missing(name: str, records: Iterable[PluginRecord], servers: Mapping[str, Any],
                project_plugins: Path | None) -> str | None:
    """Why tool ``name`` is not registered, or None when nothing explains it.

    ``servers`` maps each configured MCP server's name to its status (``state``, ``last_error``, ``skipped``);
    ``project_plugins`` is the project's plugin folder when project plugins are not enabled (None when they are).
    """
    for record in records:
        if record.active or name not in declared_tools(record.manifest):
            continue
        plugin = f"its plugin {record.id!r}"
        if record.state == "disabled":
            fix = "" if "HERMES_SAFE_MODE" in record.reason else f"; `hermes plugins enable {record.id}` enables it"
            return f"{plugin} is disabled ({record.reason}){fix}"
        if record.state == "not enabled":
            return f"{plugin} is not enabled ({record.reason})"
        if record.state == "error":
            return f"{plugin} failed to load: {record.reason}"
    mcp = _mcp_reason(name, servers)
    if mcp:
        return mcp
    project = _project_reason(name, project_plugins) if project_plugins is not None else None
    return project or _index_reason(name, {record.id for record in records})


def _index_reason(name: str, known: set[str]) -> str | None:
    """The plugins of the bundled index that provide ``name`` and are not installed, with the command that
    installs one (never the configured index: an unknown tool must not wait for the network)."""
    from .errors import PluginIndexError
    from .index.catalog import bundled_index_path, load_index

    try:
        index = load_index(bundled_index_path())
    except PluginIndexError:
        return None
    providers = [entry for entry in index if name in entry.tool_names and entry.id not in known]
    if not providers:
        return None
    first = providers[0]
    others = f" (also provided by {', '.join(repr(e.id) for e in providers[1:])})" if providers[1:] else ""
    pack = "Hermes pack" if first.first_party else "plugin"
    return (f"it is a tool of the {pack} {first.id!r} ({first.distribution}), which is not installed{others}; "
            f"`hermes plugins install {first.id}` installs it")


def _mcp_reason(name: str, servers: Mapping[str, Any]) -> str | None:
    for server, status in servers.items():
        prefix = f"{PREFIX}{sanitize(server)}__"
        if not name.startswith(prefix):
            continue
        where = f"its MCP server {server!r}"
        if status.state == "unavailable":
            return f"{where} failed to start: {status.last_error or 'no reason given'}"
        if status.state in ("disabled", "sdk-missing", "not-started"):
            return f"{where} is not running: {status.last_error or 'disabled in config.yaml'}"
        if status.state == "connecting":
            return f"{where} is still connecting"
        skipped = {f"{prefix}{sanitize(tool)}": reason for tool, reason in status.skipped.items()}
        if name in skipped:
            return f"{where} offers it, but it was not registered: {skipped[name]}"
        return f"{where} offers no such tool ({len(status.tools)} tools: `hermes mcp list` shows them)"
    return None


def _project_reason(name: str, folder: Path) -> str | None:
    """The project's plugin folders, by name only: their files are not read while project plugins are off (a
    planted FIFO or ``/dev/zero`` link would hang or exhaust the call)."""
    try:
        with os.scandir(folder) as entries:
            names = sorted(entry.name for entry in entries if entry.is_dir(follow_symlinks=False))
    except OSError:
        return None
    if not names:
        return None
    shown = ", ".join(repr(plugin) for plugin in names[:_SHOWN]) + (", ..." if len(names) > _SHOWN else "")
    return (f"it may belong to one of this project's plugins ({shown}, in {folder}), and project plugins run only "
            "when HERMES_ENABLE_PROJECT_PLUGINS=1 is set")
