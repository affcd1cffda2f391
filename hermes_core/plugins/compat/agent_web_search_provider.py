"""Shim of Hermes Agent's ``agent.web_search_provider``: the provider base class, and its env lookup."""

from __future__ import annotations

from ...tools.websearch import WebSearchProvider
from .hermes_cli_config import get_env_value

__all__ = ["WebSearchProvider", "get_provider_env"]


def get_provider_env(name: str) -> str:
    """``name`` from the environment or the home's ``.env``, stripped; ``""`` when unset."""
    return (get_env_value(name) or "").strip()
