"""Shim of Hermes Agent's ``tools.approval_context`` (newer releases moved ``_get_approval_mode`` there)."""

from __future__ import annotations

from .tools_approval import _get_approval_mode

__all__ = ["_get_approval_mode"]
