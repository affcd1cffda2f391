"""Middleware: callbacks plugins put around a tool call (Hermes Agent's ``register_middleware`` kinds)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["MIDDLEWARE_KINDS", "Middleware"]

MIDDLEWARE_KINDS = frozenset({"tool_request", "tool_execution", "llm_request", "llm_execution"})

#: Middleware by kind: ``(plugin id, callback)`` in registration order.
Middleware = dict[str, list[tuple[str, Callable[..., Any]]]]
