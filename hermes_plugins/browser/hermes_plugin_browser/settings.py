"""The pack's settings: the ``browser:`` section of config.yaml (Hermes Agent's keys where it has them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

SANDBOX_MODES: Final = ("auto", "bwrap", "chromium", "off")


class SettingsError(Exception):
    """A ``browser:`` setting has an invalid value."""


@dataclass(frozen=True)
class BrowserSettings:
    """``browser:`` in config.yaml."""

    #: ``browser.allow_private`` (or Hermes Agent's ``allow_private_urls``): reach loopback and private addresses.
    #: Link-local and cloud-metadata addresses stay refused.
    allow_private: bool = False
    #: ``browser.executable``: the Chromium to start (default: ``chromium``, ``chromium-browser`` or
    #: ``google-chrome`` on PATH).
    executable: str | None = None
    #: ``browser.cdp_url``: connect to this running Chromium over CDP instead of starting one.
    cdp_url: str | None = None
    #: ``browser.sandbox``: ``auto`` (Chromium's own sandbox inside bubblewrap where bubblewrap works, else its own
    #: alone, never as root), ``bwrap`` (bubblewrap or nothing), ``chromium`` (its own alone) or ``off``
    #: (``--no-sandbox``: only for pages you trust).
    sandbox: str = "auto"
    #: ``browser.navigation_timeout``: seconds a navigation may take.
    navigation_timeout: float = 30.0
    #: ``browser.command_timeout`` (Hermes Agent's key): seconds a click, key press or evaluation may take.
    command_timeout: float = 30.0
    #: ``browser.max_snapshot_chars``: longest snapshot returned; a longer one is cut, and says so.
    max_snapshot_chars: int = 15_000
    #: ``browser.dialog_timeout`` (Hermes Agent's ``dialog_timeout_s``): seconds a JavaScript dialog waits for
    #: browser_dialog before it is dismissed (and the session's next result says so).
    dialog_timeout: float = 60.0

    def __post_init__(self) -> None:
        if self.sandbox not in SANDBOX_MODES:
            raise SettingsError(f"browser.sandbox must be one of {', '.join(SANDBOX_MODES)}, not {self.sandbox!r}")
        for name in ("navigation_timeout", "command_timeout", "dialog_timeout"):
            if not getattr(self, name) > 0:
                raise SettingsError(f"browser.{name} must be a positive number of seconds, not {getattr(self, name)}")
        if self.max_snapshot_chars < 100:
            raise SettingsError(f"browser.max_snapshot_chars must be 100 or more, not {self.max_snapshot_chars}")


def parse_settings(section: dict[str, Any]) -> BrowserSettings:
    """The settings from the ``browser:`` section (a dict); raises :class:`SettingsError`."""
    defaults = BrowserSettings()
    try:
        return BrowserSettings(
            allow_private=bool(section.get("allow_private", section.get("allow_private_urls", False))),
            executable=str(section["executable"]) if section.get("executable") else None,
            cdp_url=str(section["cdp_url"]) if section.get("cdp_url") else None,
            sandbox=str(section.get("sandbox", defaults.sandbox) if section.get("sandbox") is not False else "off"),
            navigation_timeout=float(section.get("navigation_timeout", defaults.navigation_timeout)),
            command_timeout=float(section.get("command_timeout", defaults.command_timeout)),
            max_snapshot_chars=int(section.get("max_snapshot_chars", defaults.max_snapshot_chars)),
            dialog_timeout=float(section.get("dialog_timeout", section.get("dialog_timeout_s",
                                                                           defaults.dialog_timeout))),
        )
    except (TypeError, ValueError) as exc:
        raise SettingsError(f"invalid browser section in config.yaml: {exc}") from None
