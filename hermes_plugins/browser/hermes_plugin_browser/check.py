"""The tools' check: available when Playwright and a Chromium that can run safely here are found."""

from __future__ import annotations

import importlib.util

from hermes_core.plugin import tool_context

from .chromium import INSTALL_COMMAND, ChromiumNotFound, bwrap_problem, euid, find_chromium
from .settings import parse_settings

__all__ = ["available"]


def available() -> bool:
    """True, or raises with the reason and what to install (shown by ``hermes tools list`` and ``doctor``)."""
    settings = parse_settings(tool_context().section("browser"))
    if importlib.util.find_spec("playwright") is None:
        raise ChromiumNotFound("Playwright's Python package is missing: pip install playwright "
                               f"(and Chromium from your distribution: {INSTALL_COMMAND}; never `playwright install`)")
    if settings.cdp_url:
        return True
    find_chromium(settings.executable)
    if settings.sandbox == "off":
        return True
    problem = bwrap_problem() if settings.sandbox != "chromium" else "browser.sandbox is chromium"
    if problem and (settings.sandbox == "bwrap" or euid() == 0):
        raise ChromiumNotFound(f"Chromium cannot run sandboxed here: {problem}; run Hermes as an ordinary user, "
                               "or set browser.sandbox: off in config.yaml to run it without its sandbox "
                               "(only for pages you trust)")
    return True
