"""The ``browser:`` section: Hermes Agent's keys, YAML's booleans, bad values refused with the key's name."""

from __future__ import annotations

import pytest
from hermes_plugin_browser.settings import BrowserSettings, SettingsError, parse_settings


def test_defaults_are_closed() -> None:
    assert parse_settings({}) == BrowserSettings(allow_private=False, sandbox="auto", cdp_url=None)


def test_yaml_off_is_the_sandbox_switched_off_and_hermes_agents_key_opens_private_addresses() -> None:
    # `sandbox: off` in YAML 1.1 is the boolean false
    assert parse_settings({"sandbox": False, "allow_private_urls": True}) == BrowserSettings(allow_private=True,
                                                                                         sandbox="off")


@pytest.mark.parametrize(("section", "message"), [
    ({"sandbox": "none"}, "browser.sandbox must be one of auto, bwrap, chromium, off"),
    ({"sandbox": True}, "browser.sandbox must be one of"),
    ({"navigation_timeout": 0}, "browser.navigation_timeout must be a positive number"),
    ({"command_timeout": "soon"}, "invalid browser section"),
    ({"max_snapshot_chars": 10}, "browser.max_snapshot_chars must be 100 or more"),
])
def test_bad_values_are_refused_naming_the_key(section: dict[str, object], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        parse_settings(section)
