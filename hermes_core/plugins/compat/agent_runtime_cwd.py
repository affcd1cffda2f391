"""Shim of Hermes Agent's ``agent.runtime_cwd``: the workspace of the runtime running the plugin."""

from __future__ import annotations

from pathlib import Path

from . import host_runtime

__all__ = ["resolve_agent_cwd", "resolve_context_cwd"]


def resolve_agent_cwd() -> Path:
    """Where the runtime's tools work and commands start (``workspace``: ``$HERMES_WORKSPACE`` or its start folder)."""
    workspace: Path = host_runtime().workspace
    return workspace


def resolve_context_cwd() -> Path | None:
    return resolve_agent_cwd()
