"""Shim of Hermes Agent's ``hermes_cli.plugins``: a read-only view of the plugins and hooks of the runtime running
the plugin; a forced rediscovery reloads the runtime's plugins (``Runtime.reload_plugins``), nothing else here loads
or registers anything."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field
from typing import Any

from . import host_runtime

__all__ = ["LoadedPlugin", "PluginManagerView", "discover_plugins", "get_plugin_manager", "has_hook", "invoke_hook"]


@dataclass(frozen=True)
class LoadedPlugin:
    """One plugin as Hermes Agent's manager describes it."""

    name: str
    module: types.ModuleType | None = None
    tools_registered: list[str] = field(default_factory=list)
    hooks_registered: list[str] = field(default_factory=list)
    commands_registered: list[str] = field(default_factory=list)
    enabled: bool = False
    error: str | None = None
    version: str | None = None
    source: str = ""


class PluginManagerView:
    """Hermes Agent's ``PluginManager``, read-only: ``_plugins``, ``list_plugins()``, ``has_hook`` and
    ``invoke_hook`` over the runtime's records and hooks. ``_cli_ref`` is ``None``: Hermes has no interactive CLI
    session object to offer."""

    _cli_ref = None

    @property
    def _plugins(self) -> dict[str, LoadedPlugin]:
        runtime = host_runtime()
        plugins = {}
        for record in runtime.plugins:
            commands = runtime.contributions.of_plugin(record.id)["commands"] if record.active else []
            plugins[record.id] = LoadedPlugin(
                record.id, sys.modules.get(record.module) if record.imported else None, record.tools, record.hooks,
                commands, record.active, None if record.active else record.reason, record.version, record.source)
        return plugins

    @property
    def _hooks(self) -> dict[str, list[Any]]:
        hooks = host_runtime().hooks
        return {name: [impl.function for impl in hooks.implementations(name)] for name in sorted(hooks.active)}

    def list_plugins(self) -> list[dict[str, Any]]:
        return [{"name": p.name, "key": p.name, "version": p.version, "source": p.source, "enabled": p.enabled,
                 "tools": len(p.tools_registered), "hooks": len(p.hooks_registered),
                 "commands": len(p.commands_registered), "error": p.error}
                for _, p in sorted(self._plugins.items())]

    def has_hook(self, hook_name: str) -> bool:
        return hook_name in host_runtime().hooks.active

    def invoke_hook(self, hook_name: str, **kwargs: Any) -> list[Any]:
        return [value for _impl, value in host_runtime().hooks.call(hook_name, **kwargs) if value is not None]

    def discover_and_load(self, force: bool = False) -> None:
        discover_plugins(force)


_manager = PluginManagerView()


def get_plugin_manager() -> PluginManagerView:
    return _manager


def discover_plugins(force: bool = False) -> None:
    """Plugins are discovered and loaded when the runtime starts; with ``force``, again: the runtime reloads
    those that changed, loads new ones and unloads those gone (``Runtime.reload_plugins``)."""
    if force:
        host_runtime().reload_plugins()


def has_hook(hook_name: str) -> bool:
    return _manager.has_hook(hook_name)


def invoke_hook(hook_name: str, **kwargs: Any) -> list[Any]:
    return _manager.invoke_hook(hook_name, **kwargs)
