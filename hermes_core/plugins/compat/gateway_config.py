"""Shim of Hermes Agent's ``gateway.config``: the types a messaging platform plugin imports, and a gateway
configuration with no platforms, since Hermes runs no messaging gateway.

A plugin that looks a platform up (``load_gateway_config().platforms.get(Platform.TELEGRAM)``) finds none, and
the lookup is noted, so a tool whose check fails because of it is unavailable for that reason, by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from . import note

__all__ = ["GatewayConfig", "HomeChannel", "Platform", "PlatformConfig", "load_gateway_config"]


class Platform(Enum):
    """Hermes Agent's messaging platforms; a plugin's own platform name is accepted too (``Platform("hookdeck")``)."""

    LOCAL = "local"
    TELEGRAM = "telegram"
    DISCORD = "discord"
    WHATSAPP = "whatsapp"
    WHATSAPP_CLOUD = "whatsapp_cloud"
    SLACK = "slack"
    SIGNAL = "signal"
    MATTERMOST = "mattermost"
    MATRIX = "matrix"
    HOMEASSISTANT = "homeassistant"
    EMAIL = "email"
    SMS = "sms"
    DINGTALK = "dingtalk"
    API_SERVER = "api_server"
    WEBHOOK = "webhook"
    MSGRAPH_WEBHOOK = "msgraph_webhook"
    FEISHU = "feishu"
    WECOM = "wecom"
    WECOM_CALLBACK = "wecom_callback"
    WEIXIN = "weixin"
    BLUEBUBBLES = "bluebubbles"
    QQBOT = "qqbot"
    YUANBAO = "yuanbao"
    RELAY = "relay"

    @classmethod
    def _missing_(cls, value: object) -> Platform | None:
        if not isinstance(value, str) or not value.strip() or len(value) > 64:
            return None
        value = value.strip().lower()
        if value in cls._value2member_map_:
            return cls._value2member_map_[value]  # type: ignore[return-value]
        pseudo = object.__new__(cls)
        pseudo._value_ = value
        pseudo._name_ = value.upper().replace("-", "_").replace(" ", "_")
        cls._value2member_map_[value] = pseudo
        return pseudo


@dataclass
class HomeChannel:
    platform: Platform
    chat_id: str
    name: str = ""


@dataclass
class PlatformConfig:
    """One platform's settings, as Hermes Agent's gateway reads them."""

    enabled: bool = False
    token: str | None = None
    api_key: str | None = None
    home_channel: HomeChannel | None = None
    reply_to_mode: str = "first"
    extra: dict[str, Any] = field(default_factory=dict)


class _NoPlatforms(dict[Platform, PlatformConfig]):
    """The platforms of a gateway that does not run: empty, and every lookup noted."""

    def _looked_up(self, key: object) -> None:
        name = key.value if isinstance(key, Platform) else str(key)
        note(f"it needs Hermes Agent's messaging gateway with the {name} platform configured, and Hermes runs no "
             "messaging gateway")

    def get(self, key: Any, default: Any = None) -> Any:
        self._looked_up(key)
        return default

    def __getitem__(self, key: Platform) -> PlatformConfig:
        self._looked_up(key)
        raise KeyError(f"{key}: Hermes runs no messaging gateway, so no platform is configured")

    def __contains__(self, key: object) -> bool:
        self._looked_up(key)
        return False


@dataclass
class GatewayConfig:
    """A gateway configuration with no platforms."""

    platforms: dict[Platform, PlatformConfig] = field(default_factory=_NoPlatforms)

    def get_connected_platforms(self) -> list[Platform]:
        return []


def load_gateway_config() -> GatewayConfig:
    """No platforms: Hermes runs no messaging gateway."""
    return GatewayConfig()
