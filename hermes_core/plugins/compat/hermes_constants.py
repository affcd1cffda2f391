"""Shim of Hermes Agent's ``hermes_constants``: where the home of the runtime running the plugin is."""

from __future__ import annotations

from pathlib import Path

from .hermes_cli_config import home

__all__ = ["get_hermes_home"]


def get_hermes_home() -> Path:
    """The home folder of the runtime that loads or calls this plugin."""
    return home().root
