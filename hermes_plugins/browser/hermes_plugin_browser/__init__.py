"""Hermes browser pack: Hermes Agent's ten browser tools on the system's headless Chromium.

The tools are declared in plugin.yaml (listed without importing this pack); ``register`` only adds the
session-end hook that closes a session's browser context. Playwright is imported on the first browser call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_core import PluginContext

__all__ = ["register"]


def register(ctx: PluginContext) -> None:
    """Close an agent session's context (its cookies and pages) when the session ends."""

    def on_session_end(session_id: str | None = None, **_: Any) -> None:
        from .browser import STATE_KEY, BrowserService

        home = ctx.home
        if home is not None:
            browser = ctx.state(STATE_KEY, lambda: BrowserService(home.root / "tmp"))
            browser.end_session(str(session_id or "default"))

    ctx.register_hook("on_session_end", on_session_end)
