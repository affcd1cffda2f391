"""The bridge tools of tool search (``tool_search``, ``tool_describe``, ``tool_call``), answered for one scope.

``tool_search`` and ``tool_describe`` read the catalog of the scope's deferrable tools; ``tool_call`` is unwrapped
into a call of the real tool, which the dispatcher then runs as any call of it (hooks see the real name; the scope,
its policy and approvals, and the tool's annotations apply). See :mod:`hermes_core.tools.search`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from ..tools.policies import ToolScope
from ..tools.registry import ToolRegistry
from ..tools.search import (
    BRIDGE_TOOL_NAMES,
    HIT_DESCRIPTION,
    TOOL_CALL,
    TOOL_DESCRIBE,
    TOOL_SEARCH,
    ToolIndex,
    ToolSearchSettings,
    is_deferrable,
)

__all__ = ["ToolBridge"]

#: The longest query a search reads.
QUERY_LIMIT = 1000


def _error(message: str) -> str:
    return json.dumps({"error": message}, ensure_ascii=False)


class ToolBridge:
    """Answers the bridge tools over a registry, for whichever scope a dispatcher runs."""

    names = BRIDGE_TOOL_NAMES

    def __init__(self, registry: ToolRegistry, settings: Callable[[], ToolSearchSettings]) -> None:
        self.registry = registry
        self.settings = settings
        #: One index per scope, made again when the tools or the policy changed.
        self._indexes: dict[int, tuple[ToolScope, int, str, ToolIndex]] = {}
        self._lock = threading.Lock()

    def active(self) -> bool:
        """The bridge answers unless ``tools.tool_search`` is off."""
        return self.settings().enabled != "off"

    def route(self, name: str, raw_args: Any, scope: ToolScope) -> str | tuple[str, Any]:
        """The answer of ``tool_search``/``tool_describe``, or, for ``tool_call``, the real tool's name and
        arguments (or the error that answers the call)."""
        if isinstance(raw_args, str):
            try:
                raw_args = json.loads(raw_args) if raw_args.strip() else {}
            except ValueError as exc:
                return _error(f"{name}: the arguments are not valid JSON: {exc}")
        if not isinstance(raw_args, dict):
            return _error(f"{name}: the arguments must be an object, not {type(raw_args).__name__}")
        if name == TOOL_SEARCH:
            return self.search(raw_args, scope)
        if name == TOOL_DESCRIBE:
            return self.describe(raw_args, scope)
        return self.unwrap(raw_args, scope)

    def deferrable(self, scope: ToolScope) -> list[str]:
        """The scope's offered tools that may stand behind the bridge."""
        return [name for name in scope.names() if is_deferrable(name)]

    def index(self, scope: ToolScope) -> ToolIndex:
        """The search index of ``scope``'s deferrable tools (made once per registry generation and policy)."""
        generation, policy = self.registry.generation, scope.policy()
        with self._lock:
            cached = self._indexes.get(id(scope))
            if cached is not None and cached[0] is scope and cached[1:3] == (generation, policy):
                return cached[3]
        entries = [entry for name in self.deferrable(scope) if (entry := self.registry.get(name)) is not None]
        index = ToolIndex(entries)
        with self._lock:
            if len(self._indexes) >= 32:
                self._indexes.clear()
            self._indexes[id(scope)] = (scope, generation, policy, index)
        return index

    def search(self, args: dict[str, Any], scope: ToolScope) -> str:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return _error("tool_search: 'query' is required: the words of the capability you need")
        query = query.strip()[:QUERY_LIMIT]
        limit = self.settings().limit(args.get("limit"))
        index = self.index(scope)
        hits = [tool for tool in index.search(query, limit * 2) if self.registry.check(tool.name).available][:limit]
        return json.dumps({"query": query, "total_available": len(index.tools), "matches": [
            {"name": tool.name, "toolset": tool.toolset, "plugin": tool.plugin,
             "description": tool.description[:HIT_DESCRIPTION]} for tool in hits]}, ensure_ascii=False)

    def _reachable(self, name: Any, scope: ToolScope, bridge: str) -> str | None:
        """Why ``name`` cannot be reached through the bridge in ``scope``, or None."""
        if not isinstance(name, str) or not name.strip():
            return f"{bridge}: 'name' is required: a tool name tool_search returned"
        if name in BRIDGE_TOOL_NAMES:
            return f"{bridge}: {name!r} is a bridge tool itself"
        if not is_deferrable(name):
            return (f"{bridge}: {name!r} is not behind tool search; if it is in your tool list, call it directly")
        if name not in self.registry or name not in scope.names([name]):
            return f"{bridge}: {name!r} is not available here; use tool_search to find the tools you can call"
        availability = self.registry.check(name)
        if not availability.available:
            return f"{bridge}: {name!r} is unavailable: {availability.reason}"
        return None

    def describe(self, args: dict[str, Any], scope: ToolScope) -> str:
        name = args.get("name")
        problem = self._reachable(name, scope, TOOL_DESCRIBE)
        entry = self.registry.get(str(name)) if problem is None else None
        if entry is None:
            return _error(problem or f"{TOOL_DESCRIBE}: {name!r} is gone")
        schema = entry.schema
        return json.dumps({"name": entry.name, "description": schema.get("description") or "",
                           "parameters": schema.get("parameters") or {"type": "object", "properties": {}}},
                          ensure_ascii=False)

    def unwrap(self, args: dict[str, Any], scope: ToolScope) -> str | tuple[str, Any]:
        name = args.get("name")
        problem = self._reachable(name, scope, TOOL_CALL)
        if problem is not None:
            return _error(problem)
        arguments = args.get("arguments")
        return str(name), {} if arguments is None else arguments
