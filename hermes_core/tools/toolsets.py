"""Toolsets: named groups of tools, composites, presets, aliases and the legacy ``*_tools`` names."""

from __future__ import annotations

import threading
from collections.abc import Iterable

from ..errors import ToolsetCycleError, UnknownToolsetError
from .presets import HERMES_AGENT_TOOLSETS, NOT_SHIPPED, PRESETS, Toolset
from .registry import ToolRegistry

__all__ = [
    "HERMES_AGENT_TOOLSETS",
    "LEGACY_TOOLSETS",
    "NOT_SHIPPED",
    "PRESETS",
    "Toolset",
    "ToolsetCycleError",
    "Toolsets",
    "UnknownToolsetError",
]

#: Legacy toolset names of Hermes Agent, mapped to the tools they meant.
LEGACY_TOOLSETS: dict[str, tuple[str, ...]] = {
    "web_tools": ("web_search", "web_extract"),
    "terminal_tools": ("terminal",),
    "vision_tools": ("vision_analyze",),
    "image_tools": ("image_generate",),
    "skills_tools": ("skills_list", "skill_view", "skill_manage"),
    "browser_tools": (
        "browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_scroll",
        "browser_back", "browser_press", "browser_get_images", "browser_vision", "browser_console",
    ),
    "cronjob_tools": ("cronjob",),
    "file_tools": ("read_file", "write_file", "patch", "search_files"),
    "tts_tools": ("text_to_speech",),
}

ALL_NAMES = frozenset({"all", "*"})


class Toolsets:
    """Everything that names a group of tools, resolved against one registry."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self._declared: dict[str, list[Toolset]] = {}
        self._aliases: dict[str, tuple[str, str]] = {}  # alias -> (target, source)
        self._lock = threading.Lock()

    def define(self, toolset: Toolset) -> None:
        """Add a declared toolset (several sources may contribute to one name)."""
        with self._lock:
            self._declared.setdefault(toolset.name, []).append(toolset)

    def add_alias(self, alias: str, target: str, source: str = "core") -> None:
        """Let ``alias`` name toolset ``target``, on behalf of ``source`` (forgotten with it)."""
        with self._lock:
            self._aliases[alias] = (target, source)

    def remove_source(self, source: str) -> None:
        """Forget the toolsets and aliases one source (a plugin, an MCP server) declared."""
        with self._lock:
            for name in list(self._declared):
                kept = [t for t in self._declared[name] if t.source != source]
                if kept:
                    self._declared[name] = kept
                else:
                    del self._declared[name]
            for alias in [a for a, (_, owner) in self._aliases.items() if owner == source]:
                del self._aliases[alias]

    def declared(self, name: str) -> list[Toolset]:
        return list(self._declared.get(name, ()))

    def aliases(self) -> dict[str, str]:
        """Alias to the toolset it names."""
        return {alias: target for alias, (target, _) in self._aliases.items()}

    def names(self) -> list[str]:
        """Every toolset name with at least one installed tool, declared composites included."""
        names = set(self.registry.toolsets()) | set(self._declared)
        names |= {n for n in (*PRESETS, *HERMES_AGENT_TOOLSETS, *LEGACY_TOOLSETS) if self.resolve(n)}
        return sorted(names)

    def is_known(self, name: str) -> bool:
        return (name in ALL_NAMES or name in self._aliases or name in self._declared or name in PRESETS
                or name in HERMES_AGENT_TOOLSETS or name in LEGACY_TOOLSETS or name in self.registry.toolsets())

    def resolve(self, name: str) -> list[str]:
        """The registered tools of ``name``, composites expanded; raises for unknown names and cycles."""
        found: dict[str, None] = {}
        self._expand(name, [], found)
        return list(found)

    def resolve_many(self, names: Iterable[str]) -> tuple[list[str], list[str]]:
        """Union of several toolsets, and the names that are unknown."""
        found: dict[str, None] = {}
        unknown: list[str] = []
        for name in names:
            try:
                self._expand(name, [], found)
            except UnknownToolsetError:
                unknown.append(name)
        return list(found), unknown

    def legacy_names_for(self, name: str) -> list[str]:
        """Legacy names whose installed tools all belong to toolset ``name`` (and are not none)."""
        members = set(self.resolve(name))
        installed = set(self.registry.names())
        return [legacy for legacy, tools in LEGACY_TOOLSETS.items()
                if (present := set(tools) & installed) and present <= members]

    def left_out(self, name: str) -> dict[str, str]:
        """Tools Hermes Agent's toolset ``name`` has that it does not resolve to here, each with why."""
        core = PRESETS.get(name) or HERMES_AGENT_TOOLSETS.get(name)
        if core is None:
            return {}
        resolved = set(self.resolve(name))
        missing = {tool: "not installed: no installed plugin provides it"
                   for tool in core.tools if tool not in resolved}
        for included in core.includes:
            missing.update(self.left_out(included))
        return {**missing, **{tool: f"not shipped: {NOT_SHIPPED[tool]}" for tool in core.omitted
                              if tool not in resolved}}

    def _expand(self, name: str, stack: list[str], found: dict[str, None]) -> None:
        if name in stack:
            raise ToolsetCycleError([*stack[stack.index(name):], name])
        if name in ALL_NAMES:
            found.update(dict.fromkeys(self.registry.names()))
            return
        if name in self._aliases:
            self._expand(self._aliases[name][0], [*stack, name], found)
            return
        if not self.is_known(name):
            raise UnknownToolsetError(name)
        registered = self.registry
        for entry in registered.entries():
            if entry.toolset == name:
                found[entry.name] = None
        core = PRESETS.get(name) or HERMES_AGENT_TOOLSETS.get(name)
        composites = [*self._declared.get(name, ()), *([core] if core else [])]
        for toolset in composites:
            found.update(dict.fromkeys(t for t in toolset.tools if t in registered))
            for included in toolset.includes:
                try:
                    self._expand(included, [*stack, name], found)
                except UnknownToolsetError:
                    continue  # an included toolset whose plugin is not installed contributes nothing
        if name in LEGACY_TOOLSETS:
            found.update(dict.fromkeys(t for t in LEGACY_TOOLSETS[name] if t in registered))
