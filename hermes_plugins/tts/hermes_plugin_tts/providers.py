"""The speech engines ``tts.provider`` names, Hermes Agent's settings for each:

- ``espeak`` (``espeak-ng``): the system's espeak-ng, no network and no key (``tts.espeak.voice``, ``speed``);
  the default when ``tts.provider`` is unset and it is installed.
- ``openai``: an OpenAI-compatible ``/audio/speech`` endpoint (``tts.openai.model``, ``voice``, ``base_url``,
  ``api_key``; the key else ``VOICE_TOOLS_OPENAI_KEY`` or ``OPENAI_API_KEY``).
- ``elevenlabs``: ElevenLabs (``tts.elevenlabs.voice_id``, ``model_id``; ``ELEVENLABS_API_KEY``).
- ``edge``: Microsoft Edge's online voices through ``edge-tts`` (``tts.edge.voice``), the extra ``[edge]``.
- ``piper``: a local Piper voice file (``tts.piper.voice``: the ``.onnx`` path) through ``piper-tts``, the extra
  ``[piper]``.
- ``deepinfra``: DeepInfra's OpenAI-compatible speech API (``tts.deepinfra.model``, ``voice``, ``base_url``;
  ``DEEPINFRA_API_KEY``).
- any other name: a command provider the user declares (``tts.providers.<name>: {type: command, command: ...}``,
  see :mod:`.command`).

openai and deepinfra are asked through the ``openai`` SDK (the extra ``[openai]``). Each speaks one piece of text
(within its ``limit``) and answers WAV, except edge (MP3) and commands (their ``output_format``).
"""

from __future__ import annotations

import importlib.util
import io
import os
import shutil
import wave
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .settings import TtsSettings

__all__ = ["PROVIDERS", "Provider", "SpeechError", "chosen"]

ELEVENLABS_LIMITS = {"eleven_v3": 5000, "eleven_ttv_v3": 5000, "eleven_multilingual_v2": 10000,
                     "eleven_multilingual_v1": 10000, "eleven_flash_v2": 30000, "eleven_flash_v2_5": 40000}


class SpeechError(Exception):
    """The engine cannot speak now, or failed; the message says why (for the model)."""


@dataclass(frozen=True)
class Provider:
    """One engine: the most text it takes at once, why it cannot run (None when it can), and speaking."""

    name: str
    limit: Callable[[TtsSettings], int]
    unavailable: Callable[[TtsSettings], str | None]
    speak: Callable[[str, TtsSettings], tuple[bytes, str]]


# -- espeak-ng ---------------------------------------------------------------------------------------------------


def _espeak_unavailable(settings: TtsSettings) -> str | None:
    return None if shutil.which("espeak-ng") else ("espeak-ng is not installed (apt-get install espeak-ng, brew "
                                                   "install espeak-ng), or set tts.provider")


def _espeak(text: str, settings: TtsSettings) -> tuple[bytes, str]:
    import subprocess

    section = settings.section("espeak")
    command = [shutil.which("espeak-ng") or "espeak-ng", "--stdout", "--stdin",
               "-s", str(max(80, min(450, round(175 * settings.speed_of("espeak")))))]
    if section.get("voice"):
        command += ["-v", str(section["voice"])]
    try:  # the text goes in on stdin: nothing in it can be read as an option
        result = subprocess.run(command, input=text.encode("utf-8"), capture_output=True, timeout=settings.timeout)
    except subprocess.TimeoutExpired:
        raise SpeechError(f"espeak-ng did not finish within {settings.timeout:g} s") from None
    if result.returncode != 0 or not result.stdout.startswith(b"RIFF"):
        detail = result.stderr.decode("utf-8", "replace").strip()[:300] or f"exit status {result.returncode}"
        raise SpeechError(f"espeak-ng failed: {detail}")
    return result.stdout, "audio/wav"


# -- HTTP APIs ---------------------------------------------------------------------------------------------------


def _openai_key(settings: TtsSettings) -> str:
    return str(settings.section("openai").get("api_key") or os.environ.get("VOICE_TOOLS_OPENAI_KEY")
               or os.environ.get("OPENAI_API_KEY") or "")


def _sdk_missing(provider: str) -> str | None:
    return None if importlib.util.find_spec("openai") else (f"tts.provider is {provider}, which is asked through the "
                                                            "openai package: pip install 'hermes-tools-tts[openai]'")


def _openai_unavailable(settings: TtsSettings) -> str | None:
    if not _openai_key(settings):
        return ("tts.provider is openai but no key is set: set VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY, or "
                "tts.openai.api_key")
    return _sdk_missing("openai")


def _openai(text: str, settings: TtsSettings) -> tuple[bytes, str]:
    section = settings.section("openai")
    return _speech_api("openai", text, settings, str(section.get("base_url") or "https://api.openai.com/v1"),
                       _openai_key(settings), str(section.get("model") or "gpt-4o-mini-tts"),
                       str(section.get("voice") or "alloy"))


def _deepinfra_unavailable(settings: TtsSettings) -> str | None:
    if not os.environ.get("DEEPINFRA_API_KEY"):
        return "tts.provider is deepinfra but DEEPINFRA_API_KEY is not set (https://deepinfra.com)"
    if not settings.section("deepinfra").get("model"):
        return "tts.provider is deepinfra but tts.deepinfra.model (the speech model to use there) is not set"
    return _sdk_missing("deepinfra")


def _deepinfra(text: str, settings: TtsSettings) -> tuple[bytes, str]:
    section = settings.section("deepinfra")
    return _speech_api("deepinfra", text, settings,
                       str(section.get("base_url") or "https://api.deepinfra.com/v1/openai"),
                       os.environ.get("DEEPINFRA_API_KEY", ""), str(section["model"]),
                       str(section.get("voice") or "af_bella"))


def _speech_api(provider: str, text: str, settings: TtsSettings, base_url: str, key: str, model: str,
                voice: str) -> tuple[bytes, str]:
    """An OpenAI-compatible ``/audio/speech`` endpoint, through the openai SDK: WAV."""
    import openai

    options: dict[str, Any] = {"model": model, "input": text, "voice": voice, "response_format": "wav"}
    speed = settings.speed_of(provider)
    if speed != 1.0:
        options["speed"] = max(0.25, min(4.0, speed))
    try:
        with openai.OpenAI(base_url=base_url.rstrip("/"), api_key=key, timeout=settings.timeout,
                           max_retries=0) as client:  # the user's endpoint; its errors go back to the model
            return client.audio.speech.create(**options).read(), "audio/wav"
    except openai.APIStatusError as exc:
        raise SpeechError(f"{base_url} answered HTTP {exc.status_code}: {exc.response.text[:300]}") from None
    except openai.OpenAIError as exc:
        raise SpeechError(f"{base_url} failed: {exc or type(exc).__name__}") from None


def _elevenlabs_unavailable(settings: TtsSettings) -> str | None:
    return None if os.environ.get("ELEVENLABS_API_KEY") else ("tts.provider is elevenlabs but ELEVENLABS_API_KEY "
                                                              "is not set (https://elevenlabs.io)")


def _elevenlabs_model(settings: TtsSettings) -> str:
    return str(settings.section("elevenlabs").get("model_id") or "eleven_multilingual_v2")


def _elevenlabs(text: str, settings: TtsSettings) -> tuple[bytes, str]:
    from .audio import pcm_to_wav

    section = settings.section("elevenlabs")
    base_url = str(section.get("base_url") or "https://api.elevenlabs.io").rstrip("/")
    voice = str(section.get("voice_id") or "pNInz6obpgDQGcFmaJgB")
    pcm = _post(f"{base_url}/v1/text-to-speech/{voice}?output_format=pcm_24000",
                {"text": text, "model_id": _elevenlabs_model(settings)},
                {"xi-api-key": os.environ.get("ELEVENLABS_API_KEY", "")}, settings)
    return pcm_to_wav(pcm, 24000), "audio/wav"


def _post(url: str, body: dict[str, object], headers: dict[str, str], settings: TtsSettings) -> bytes:
    import httpx

    try:
        with httpx.Client(timeout=settings.timeout, follow_redirects=False) as client:  # the user's endpoint
            response = client.post(url, json=body, headers=headers)
    except httpx.HTTPError as exc:
        raise SpeechError(f"{url} failed: {exc or type(exc).__name__}") from None
    if response.is_error:
        raise SpeechError(f"{url} answered HTTP {response.status_code}: {response.text[:300]}")
    return response.content


# -- optional packages -------------------------------------------------------------------------------------------


def _edge_unavailable(settings: TtsSettings) -> str | None:
    return None if importlib.util.find_spec("edge_tts") else ("tts.provider is edge but edge-tts is not installed: "
                                                              "pip install 'hermes-tools-tts[edge]'")


def _edge(text: str, settings: TtsSettings) -> tuple[bytes, str]:
    import asyncio

    import edge_tts

    speed = settings.speed_of("edge")
    options = {"rate": f"{round((speed - 1.0) * 100):+d}%"} if speed != 1.0 else {}
    communicate = edge_tts.Communicate(text, str(settings.section("edge").get("voice") or "en-US-AriaNeural"),
                                       **options)

    async def speak() -> bytes:
        audio = bytearray()
        async for piece in communicate.stream():
            if piece["type"] == "audio":
                audio += piece["data"]
        return bytes(audio)

    try:
        return asyncio.run(asyncio.wait_for(speak(), settings.timeout)), "audio/mpeg"
    except Exception as exc:  # the service's own errors
        raise SpeechError(f"edge-tts failed: {exc or type(exc).__name__}") from None


def _piper_voice(settings: TtsSettings) -> Path | None:
    voice = settings.section("piper").get("voice")
    return Path(os.path.expanduser(str(voice))) if voice else None


def _piper_unavailable(settings: TtsSettings) -> str | None:
    if importlib.util.find_spec("piper") is None:
        return "tts.provider is piper but piper-tts is not installed: pip install 'hermes-tools-tts[piper]'"
    voice = _piper_voice(settings)
    if voice is None or not voice.is_file():
        return ("tts.provider is piper but tts.piper.voice names no voice file: set it to a Piper .onnx voice "
                "(with its .onnx.json beside it)")
    return None


def _piper(text: str, settings: TtsSettings) -> tuple[bytes, str]:
    from piper import PiperVoice

    voice = PiperVoice.load(str(_piper_voice(settings)))
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        voice.synthesize_wav(text, out)
    return buffer.getvalue(), "audio/wav"


PROVIDERS: dict[str, Provider] = {provider.name: provider for provider in (
    Provider("espeak", lambda settings: 50_000, _espeak_unavailable, _espeak),
    Provider("openai", lambda settings: 4096, _openai_unavailable, _openai),
    Provider("elevenlabs", lambda settings: ELEVENLABS_LIMITS.get(_elevenlabs_model(settings), 10000),
             _elevenlabs_unavailable, _elevenlabs),
    Provider("edge", lambda settings: 5000, _edge_unavailable, _edge),
    Provider("piper", lambda settings: 5000, _piper_unavailable, _piper),
    Provider("deepinfra", lambda settings: 4096, _deepinfra_unavailable, _deepinfra),
)}


def _command_provider(name: str, settings: TtsSettings) -> Provider | None:
    """The command provider the user declared under ``name`` (see :mod:`.command`), or None."""
    from .command import CommandError, command_config, run_command  # (subprocess: not for listing tools)

    config = command_config(name, settings.sections)
    if config is None:
        return None

    def speak(text: str, settings: TtsSettings) -> tuple[bytes, str]:
        try:
            return run_command(name, config, text, settings.speed, settings.timeout)
        except CommandError as exc:
            raise SpeechError(str(exc)) from None

    limit = int(config.get("max_text_length") or 5000)
    return Provider(name, lambda settings: max(1, limit), lambda settings: None, speak)


def chosen(settings: TtsSettings) -> Provider:
    """The engine ``tts.provider`` names; unset: espeak-ng where installed, else edge where edge-tts is. Raises
    :class:`SpeechError` saying what to install or set when it cannot speak."""
    if settings.provider is None:
        for name in ("espeak", "edge"):
            if PROVIDERS[name].unavailable(settings) is None:
                return PROVIDERS[name]
        raise SpeechError("no speech engine: install espeak-ng (apt-get install espeak-ng, brew install espeak-ng), "
                          "or set tts.provider (openai, elevenlabs, edge or piper) in config.yaml")
    provider = PROVIDERS.get(settings.provider) or _command_provider(settings.provider, settings)
    if provider is None:
        raise SpeechError(f"unknown tts.provider {settings.provider!r}; the providers are "
                          + ", ".join(PROVIDERS) + ", or a command declared under tts.providers."
                          + settings.provider)
    why = provider.unavailable(settings)
    if why is not None:
        raise SpeechError(why)
    return provider
