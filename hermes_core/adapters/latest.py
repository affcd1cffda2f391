"""Framework tools that follow the registry, for the frameworks that take a list made once: the OpenAI Agents SDK's
``Agent(tools=...)``, LangChain's ``bind_tools`` and LangGraph's ``ToolNode``, llm's ``tools=`` (pydantic-ai's
``HermesToolset`` reads the registry on every step by itself).

``Latest(function_tools, runtime)()`` is ``function_tools(runtime)``, made again only when the tools may have
changed: a plugin loaded, an MCP server listed, a tool gone (the registry's ``generation``), or the policy. Call it
before each run and hand what it returns to the framework; in between it costs a comparison.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from ..host.views import ToolApi

__all__ = ["Latest"]

Made = TypeVar("Made")


class Latest(Generic[Made]):
    """``make(tools, **options)``, remade when the tools ``tools`` (a ``Runtime`` or a view) offers may have
    changed, else the same object: ``Latest(function_tools, runtime)``, ``Latest(langchain_tools, view,
    toolsets=["file"])``, or a function of yours that builds an agent or a graph from a view.

    Each call first lists the MCP servers never listed yet (once each, as ``get_tool_definitions`` does). Whether a
    tool's ``check_fn`` passes is read when the list is made; a call of a tool unavailable since is refused with
    an error the model reads.
    """

    def __init__(self, make: Callable[..., Made], tools: ToolApi, **options: Any) -> None:
        self.make = make
        self.tools = tools
        self.options = options
        self._lock = threading.Lock()
        self._made: tuple[tuple[int, str], Made] | None = None

    def _key(self) -> tuple[int, str]:
        return self.tools.registry.generation, self.tools.policy

    def __call__(self) -> Made:
        self.tools.list_new_mcp_servers()
        made = self._made
        if made is not None and made[0] == self._key():
            return made[1]
        with self._lock:  # one make at a time: threads that find it stale wait for it rather than make it too
            key = self._key()  # read before making: a tool registered meanwhile is picked up by the next call
            made = self._made
            if made is None or made[0] != key:
                made = self._made = (key, self.make(self.tools, **self.options))
            return made[1]

    def __repr__(self) -> str:
        return f"Latest({getattr(self.make, '__name__', self.make)!r}, {self.tools!r})"
