"""Shim of Hermes Agent's ``tools.registry``: a ``registry`` whose changes and lookups go to the runtime that
loads or calls the plugin, and the ``tool_error`` / ``tool_result`` helpers."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from ...calls.dispatch import tool_error
from ...tools.registry import ToolEntry
from . import host

__all__ = ["ToolEntry", "registry", "tool_error", "tool_result"]


def tool_result(data: Any = None, **kwargs: Any) -> str:
    """``data`` (or the keyword arguments) as JSON text."""
    return json.dumps(data if data is not None else kwargs, ensure_ascii=False)


class RegistryFacade:
    """Hermes Agent's ``registry`` object, acting for the plugin whose code uses it.

    ``register`` goes through that plugin's ``ctx.register_tool`` (conflict policy and rollback included);
    ``deregister`` removes only that plugin's own tools; ``dispatch`` runs the full call path, hooks included.
    """

    def register(self, name: str, toolset: str, schema: dict[str, Any], handler: Callable[..., Any],
                 check_fn: Callable[[], Any] | None = None, requires_env: list[Any] | None = None,
                 is_async: bool = False, description: str = "", emoji: str = "",
                 max_result_size_chars: int | float | None = None, dynamic_schema_overrides: Any = None,
                 override: bool = False) -> None:
        limit = int(max_result_size_chars) if isinstance(max_result_size_chars, int | float) and \
            max_result_size_chars != float("inf") else None
        host().register_tool(name=name, toolset=toolset, schema=schema, handler=handler, check_fn=check_fn,
                             requires_env=requires_env, is_async=is_async, description=description, emoji=emoji,
                             max_result_size_chars=limit, override=override)

    def deregister(self, name: str) -> None:
        host().unregister_tool(name)

    def dispatch(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        return host().dispatch_tool(name, args, **kwargs)

    @property
    def _generation(self) -> int:
        """Bumped by Hermes Agent on each change (plugins bump it to refresh cached definitions)."""
        return host().registry.generation

    @_generation.setter
    def _generation(self, value: int) -> None:
        # Hermes builds definitions on each call: a bump only asks for fresh availability checks
        host().registry.invalidate_checks()

    # -- lookups ------------------------------------------------------------------------------

    @property
    def _tools(self) -> dict[str, ToolEntry]:
        """A snapshot of the tools by name (some plugins read Hermes Agent's private table)."""
        return {entry.name: entry for entry in host().registry.entries()}

    def get_entry(self, name: str) -> ToolEntry | None:
        return host().registry.get(name)

    def get_all_tool_names(self) -> list[str]:
        return sorted(host().registry.names())

    def get_schema(self, name: str) -> dict[str, Any] | None:
        entry = self.get_entry(name)
        return entry.schema if entry else None

    def get_toolset_for_tool(self, name: str) -> str | None:
        entry = self.get_entry(name)
        return entry.toolset if entry else None

    def get_emoji(self, name: str, default: str = "⚡") -> str:
        entry = self.get_entry(name)
        return entry.emoji if entry and entry.emoji else default

    def get_tool_to_toolset_map(self) -> dict[str, str]:
        return {entry.name: entry.toolset for entry in host().registry.entries()}

    def get_registered_toolset_names(self) -> list[str]:
        return sorted(host().registry.toolsets())

    def get_tool_names_for_toolset(self, toolset: str) -> list[str]:
        return sorted(host().registry.toolsets().get(toolset, []))

    def is_toolset_available(self, toolset: str) -> bool:
        return host().registry.is_toolset_available(toolset)

    def get_definitions(self, tool_names: Iterable[str], quiet: bool = False) -> list[dict[str, Any]]:
        """OpenAI definitions of the available tools among ``tool_names``."""
        return host().registry.get_definitions(sorted(tool_names))


registry = RegistryFacade()
