"""Shim of Hermes Agent's ``gateway.platforms.webhook``: the webhook adapter, to subclass (not to run)."""

from __future__ import annotations

from .gateway_config import Platform, PlatformConfig
from .gateway_platforms_base import BasePlatformAdapter

__all__ = ["WebhookAdapter"]


class WebhookAdapter(BasePlatformAdapter):
    def __init__(self, config: PlatformConfig) -> None:
        super().__init__(config, Platform.WEBHOOK)
