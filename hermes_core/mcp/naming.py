"""Names of MCP tools in the registry: ``mcp__<server>__<tool>``, sanitised, at most 64 characters."""

from __future__ import annotations

import hashlib
import re
from typing import Final

__all__ = ["MAX_TOOL_NAME", "PREFIX", "ToolNames", "log_file_name", "sanitize", "tool_name", "toolset_name"]

#: The longest function name the model APIs accept.
MAX_TOOL_NAME: Final = 64
#: What the registry names of MCP servers' tools start with; ``hermes mcp serve`` serves them without it.
PREFIX: Final = "mcp__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def sanitize(text: str) -> str:
    """``text`` with every character a function name may not hold replaced by ``_``."""
    return _UNSAFE.sub("_", text) or "_"


def _digest(*parts: str) -> str:
    return hashlib.sha1("\0".join(parts).encode()).hexdigest()[:8]


def tool_name(server: str, tool: str, *, salt: str = "") -> str:
    """The registry name of ``tool`` of ``server``; over-long names end in a short hash of the original."""
    name = f"{PREFIX}{sanitize(server)}__{sanitize(tool)}"
    if salt or len(name) > MAX_TOOL_NAME:
        suffix = "_" + _digest(server, tool, salt)
        name = name[: MAX_TOOL_NAME - len(suffix)] + suffix
    return name


def toolset_name(server: str) -> str:
    """The toolset of a server's tools (its alias is the server's own name)."""
    return f"mcp-{server}"


def log_file_name(server: str) -> str:
    """The file under ``$HERMES_HOME/logs`` that receives a server's stderr."""
    return f"mcp-{sanitize(server)}.log"


class ToolNames:
    """One server's map between registry names and the server's own tool names, kept stable across re-lists."""

    def __init__(self, server: str) -> None:
        self.server = server
        self._by_registered: dict[str, str] = {}
        self._by_original: dict[str, str] = {}

    def registered(self, original: str) -> str:
        """The registry name for ``original`` (allocated on first use; sanitising collisions get a hash)."""
        known = self._by_original.get(original)
        if known is not None:
            return known
        name = tool_name(self.server, original)
        salt = 0
        while name in self._by_registered:
            salt += 1
            name = tool_name(self.server, original, salt=str(salt))
        self._by_registered[name] = original
        self._by_original[original] = name
        return name

    def original(self, registered: str) -> str | None:
        """The server's name for a registry name, or None."""
        return self._by_registered.get(registered)

    def forget(self, original: str) -> None:
        name = self._by_original.pop(original, None)
        if name is not None:
            del self._by_registered[name]

    def items(self) -> dict[str, str]:
        """Registry name to original name."""
        return dict(self._by_registered)
