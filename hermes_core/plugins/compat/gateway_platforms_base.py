"""Shim of Hermes Agent's ``gateway.platforms.base``: the message types a platform plugin's module uses at import
time, and an adapter base class that can be subclassed but not run (Hermes runs no messaging gateway)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

from .gateway_config import Platform, PlatformConfig

__all__ = ["BasePlatformAdapter", "MessageEvent", "MessageType", "ProcessingOutcome", "SendResult", "SessionSource"]

NO_GATEWAY = "Hermes runs no messaging gateway: a platform adapter is registered, never run"


class MessageType(Enum):
    TEXT = "text"
    LOCATION = "location"
    PHOTO = "photo"
    VIDEO = "video"
    AUDIO = "audio"
    VOICE = "voice"
    DOCUMENT = "document"
    STICKER = "sticker"
    COMMAND = "command"


class ProcessingOutcome(Enum):
    SUCCESS = "success"
    FAILURE = "failure"
    CANCELLED = "cancelled"


@dataclass
class SessionSource:
    platform: Platform
    chat_id: str
    chat_name: str | None = None
    chat_type: str = "dm"
    user_id: str | None = None
    user_name: str | None = None
    thread_id: str | None = None


@dataclass
class MessageEvent:
    text: str
    message_type: MessageType = MessageType.TEXT
    source: SessionSource | None = None
    raw_message: Any = None
    message_id: str | None = None
    timestamp: datetime = field(default_factory=datetime.now)


@dataclass
class SendResult:
    success: bool
    message_id: str | None = None
    error: str | None = None


class BasePlatformAdapter:
    """Subclassable, so platform modules import; making one raises, since nothing here would run it."""

    def __init__(self, config: PlatformConfig, platform: Platform) -> None:
        raise RuntimeError(NO_GATEWAY)
