"""Shim of Hermes Agent's ``agent.memory_provider``: the ``MemoryProvider`` base class memory-provider plugins
subclass; ``ctx.register_memory_provider(provider)`` adds one to the runtime loading the plugin."""

from __future__ import annotations

from ...state.providers import MemoryProvider

__all__ = ["MemoryProvider"]
