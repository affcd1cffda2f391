"""The pack's settings: ``web.allow_private_networks`` and ``plugins.entries.web.settings``."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_core import ConfigError
from hermes_core.plugin import tool_context

PLUGIN_ID = "web"
BRAVE_BASE_URL = "https://api.search.brave.com"


class SettingsError(Exception):
    """The configuration cannot be read, or a setting has an invalid value."""


@dataclass(frozen=True)
class WebSettings:
    """Limits and providers; every field but the first comes from ``plugins.entries.web.settings``."""

    #: ``web.allow_private_networks``: let web_extract reach loopback and private addresses (never link-local or
    #: cloud metadata).
    allow_private_networks: bool = False
    #: Seconds allowed for a whole web_extract fetch (redirects and body included) or a search request.
    timeout: float = 20.0
    #: Largest response body read, in bytes (after content decoding).
    max_bytes: int = 5_000_000
    #: Redirects followed before giving up.
    max_redirects: int = 5
    #: Seconds allowed for converting one HTML page to Markdown (the converter runs in a child process).
    convert_timeout: float = 20.0
    #: Largest part of an HTML page converted to Markdown, in bytes; the result notes a cut.
    max_convert_bytes: int = 2_000_000
    #: A registered provider's name, ``searxng`` or ``brave`` (else Hermes Agent's ``web.search_backend`` or
    #: ``web.backend``); unset = the fallback chain: registered providers, SearXNG, Brave.
    search_provider: str | None = None
    #: Base URL of the Brave Search API (override it to use a proxy or a test server).
    brave_base_url: str = BRAVE_BASE_URL
    #: Characters of each page web_extract sends back when the call gives no ``char_limit`` (else Hermes Agent's
    #: ``web.extract_char_limit``).
    extract_char_limit: int = 15_000

    def __post_init__(self) -> None:
        if self.timeout <= 0:
            raise SettingsError(f"timeout must be a positive number of seconds, not {self.timeout}")
        if self.max_bytes <= 0:
            raise SettingsError(f"max_bytes must be a positive number of bytes, not {self.max_bytes}")
        if self.max_redirects < 0:
            raise SettingsError(f"max_redirects must be 0 or more, not {self.max_redirects}")
        if self.convert_timeout <= 0:
            raise SettingsError(f"convert_timeout must be a positive number of seconds, not {self.convert_timeout}")
        if self.max_convert_bytes <= 0:
            raise SettingsError(f"max_convert_bytes must be a positive number of bytes, not {self.max_convert_bytes}")
        if self.extract_char_limit < 2000:
            raise SettingsError(f"extract_char_limit must be at least 2000, not {self.extract_char_limit}")


def load_settings() -> WebSettings:
    """Read the settings from the calling runtime's config.yaml (on every call, so edits apply at once)."""
    try:
        context = tool_context()
        raw, web = context.settings, context.section("web")
    except ConfigError as exc:
        raise SettingsError(str(exc)) from None
    defaults = WebSettings()
    try:
        return WebSettings(
            allow_private_networks=bool(web.get("allow_private_networks")),
            timeout=float(raw.get("timeout", defaults.timeout)),
            max_bytes=int(raw.get("max_bytes", defaults.max_bytes)),
            max_redirects=int(raw.get("max_redirects", defaults.max_redirects)),
            convert_timeout=float(raw.get("convert_timeout", defaults.convert_timeout)),
            max_convert_bytes=int(raw.get("max_convert_bytes", defaults.max_convert_bytes)),
            search_provider=str(raw.get("search_provider") or web.get("search_backend") or web.get("backend")
                                or "").strip().lower() or None,
            brave_base_url=str(raw.get("brave_base_url", defaults.brave_base_url)),
            extract_char_limit=int(raw.get("extract_char_limit", web.get("extract_char_limit",
                                                                         defaults.extract_char_limit))),
        )
    except (SettingsError, TypeError, ValueError) as exc:
        raise SettingsError(f"invalid plugins.entries.{PLUGIN_ID}.settings in config.yaml: {exc}") from None
