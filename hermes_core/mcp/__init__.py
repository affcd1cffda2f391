"""MCP in Hermes: ``client`` puts MCP servers' tools in the registry, ``server`` serves the registry's tools.

Importing this package does not import the ``mcp`` SDK; ``client`` and ``server`` import it when used.
"""

from __future__ import annotations

from .naming import MAX_TOOL_NAME, tool_name, toolset_name

__all__ = ["MAX_TOOL_NAME", "tool_name", "toolset_name"]
