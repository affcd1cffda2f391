"""Web search providers: the backends plugins register for ``web_search`` (Hermes Agent's provider protocol).

A provider has a ``name``, ``is_available()`` (cheap, no network) and ``search(query, limit)`` returning
``{"success": True, "data": {"web": [{"title", "url", "description", "position"}, ...]}}`` or
``{"success": False, "error": str}``; it may also ``extract(urls, **kwargs)``. Subclassing
:class:`WebSearchProvider` is optional: any object with that shape is accepted.
"""

from __future__ import annotations

import abc
from typing import Any, NamedTuple

__all__ = ["RegisteredWebSearchProvider", "WebSearchProvider", "web_search_provider_problem"]


class WebSearchProvider(abc.ABC):
    """Base class of a web search (and extract) backend, as Hermes Agent's ``agent.web_search_provider`` has it."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Short stable identifier (``brave-free``, ``ollama-cloud``): lower case, no spaces."""

    @property
    def display_name(self) -> str:
        """Human-readable label; defaults to :attr:`name`."""
        return self.name

    @abc.abstractmethod
    def is_available(self) -> bool:
        """Whether the provider can serve calls now (credentials set, ...); must not touch the network."""

    def supports_search(self) -> bool:
        return True

    def supports_extract(self) -> bool:
        return False

    def search(self, query: str, limit: int = 5) -> dict[str, Any]:
        """``{"success": True, "data": {"web": [...]}}`` or ``{"success": False, "error": ...}``."""
        raise NotImplementedError(f"{self.name} does not support search (override supports_search)")

    def extract(self, urls: list[str], **kwargs: Any) -> Any:
        """Page contents for ``urls`` (may be ``async``); unknown keyword arguments are ignored."""
        raise NotImplementedError(f"{self.name} does not support extract (override supports_extract)")

    def get_setup_schema(self) -> dict[str, Any]:
        """Metadata for set-up pickers: name, badge, tag and the environment variables it reads."""
        return {"name": self.display_name, "badge": "", "tag": "", "env_vars": []}


class RegisteredWebSearchProvider(NamedTuple):
    """A provider in a runtime's ``web_search_providers`` table, with the plugin that registered it."""

    name: str
    provider: Any
    plugin: str | None

    def searches(self) -> bool:
        """It implements search (its ``supports_search()``, or a ``search`` method when it has no such flag)."""
        supports = getattr(self.provider, "supports_search", None)
        try:
            return bool(supports()) if callable(supports) else callable(getattr(self.provider, "search", None))
        except Exception:
            return False


def web_search_provider_problem(provider: Any) -> str | None:
    """Why ``provider`` is not a usable web search provider, or ``None`` when it is one."""
    try:
        name = provider.name
    except Exception as exc:
        return f"its name raised {type(exc).__name__}: {exc}"
    if not isinstance(name, str) or not name.strip():
        return f"its name must be a non-empty string, not {name!r}"
    if not callable(getattr(provider, "is_available", None)):
        return "it has no is_available() method"
    if not any(callable(getattr(provider, method, None)) for method in ("search", "extract")):
        return "it has neither search() nor extract()"
    return None
