"""Fixtures for the tts pack: a runtime with the pack, config.yaml written per test, and stand-ins for the speech
APIs on 127.0.0.1 (an OpenAI-compatible /audio/speech and ElevenLabs' text-to-speech)."""

from __future__ import annotations

import io
import json
import wave
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Runtime
from hermes_core.authoring.testing import HttpRequest, LocalHttp

#: The stand-ins speak 10 ms of silence per character, at 16 kHz.
RATE = 16000


def silence_wav(characters: int, rate: int = RATE) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(bytes(2 * characters * rate // 100))
    return buffer.getvalue()


class SpeechApis:
    """Both APIs; ``spoken`` holds each request's text."""

    def __init__(self, server: LocalHttp) -> None:
        self.server = server
        self.base_url = server.url("/v1")
        server.route("POST", "/v1/audio/speech", self._openai)
        server.route("POST", "/v1/text-to-speech/voice-1", self._elevenlabs)

    def _openai(self, request: HttpRequest) -> tuple[int, dict[str, str], bytes]:
        return 200, {"Content-Type": "audio/wav"}, silence_wav(len(request.json()["input"]))

    def _elevenlabs(self, request: HttpRequest) -> tuple[int, dict[str, str], bytes]:
        return 200, {"Content-Type": "application/octet-stream"}, bytes(2 * len(request.json()["text"]) * 240)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [request.json() for request in self.server.requests]


@pytest.fixture
def speech_apis(local_http: LocalHttp) -> SpeechApis:
    return SpeechApis(local_http)


@pytest.fixture
def tts_config(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Call it to write config.yaml: ``tts`` (the section) and ``settings`` (the pack's)."""
    for name in ("OPENAI_API_KEY", "VOICE_TOOLS_OPENAI_KEY", "ELEVENLABS_API_KEY"):
        monkeypatch.delenv(name, raising=False)

    def write(tts: dict[str, Any] | None = None, **settings: Any) -> None:
        config = {"tts": tts or {}, "plugins": {"entries": {"tts": {"settings": settings}}}}
        (hermes_home / "config.yaml").write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML

    write()
    return write


@pytest.fixture
def tts_runtime(hermes_runtime: Runtime, load_hermes_plugin: Callable[..., Any],
                tts_config: Callable[..., None]) -> Runtime:
    load_hermes_plugin("hermes_plugin_tts")
    return hermes_runtime


@pytest.fixture
def speak(tts_runtime: Runtime) -> Callable[..., dict[str, Any]]:
    """``speak(**args)``: call text_to_speech; its JSON answer (the first line: the media reference follows)."""

    def call(**args: Any) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(tts_runtime.handle_function_call("text_to_speech", args).split("\n")[0])
        return result

    return call
