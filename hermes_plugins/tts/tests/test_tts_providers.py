"""The providers tts.provider names, against stand-ins on 127.0.0.1: each gets its settings and key, long text
reaches it in pieces within its limit that together say all of it, and the pieces become one file; an engine that
cannot run makes the tool unavailable, naming what to install or set."""

from __future__ import annotations

import wave
from pathlib import Path

import pytest
from hermes_plugin_tts.text import chunks

from hermes_core import Runtime


@pytest.fixture
def openai_tts(tts_config, speech_apis, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    tts_config({"provider": "openai", "openai": {"base_url": speech_apis.base_url, "voice": "nova"}}, format="wav")


def seconds(path: str) -> float:
    with wave.open(path) as audio:
        return audio.getnframes() / audio.getframerate()


def test_openai_gets_hermes_agents_settings_and_the_key(speak, openai_tts, speech_apis):
    answer = speak(text="Hello there.")

    assert answer["success"] is True and answer["provider"] == "openai"
    assert speech_apis.bodies == [{"model": "gpt-4o-mini-tts", "input": "Hello there.", "voice": "nova",
                                   "response_format": "wav"}]
    headers = {name.lower(): value for name, value in speech_apis.server.requests[0].headers.items()}
    assert headers["authorization"] == "Bearer test-key"
    assert headers["user-agent"].startswith("OpenAI/Python")  # through the openai SDK
    assert seconds(answer["file_path"]) == pytest.approx(len("Hello there.") / 100)


def test_long_text_reaches_openai_in_pieces_within_its_limit_and_is_spoken_whole(speak, openai_tts, speech_apis):
    text = " ".join(f"Sentence number {n} is here to make the text long." for n in range(300))  # ~15 000 characters

    answer = speak(text=text)

    pieces = [body["input"] for body in speech_apis.bodies]
    assert len(pieces) == 4 and all(len(piece) <= 4096 for piece in pieces)
    assert " ".join(pieces) == text
    assert seconds(answer["file_path"]) == pytest.approx(sum(map(len, pieces)) / 100)


def test_elevenlabs_raw_pcm_becomes_wav(speak, tts_config, speech_apis, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ELEVENLABS_API_KEY", "el-key")
    tts_config({"provider": "elevenlabs", "elevenlabs": {"voice_id": "voice-1", "model_id": "eleven_v3",
                                                         "base_url": speech_apis.server.url()}}, format="wav")

    answer = speak(text="Hi.")

    [request] = speech_apis.server.requests
    assert request.path == "/v1/text-to-speech/voice-1?output_format=pcm_24000"
    assert request.headers["xi-api-key"] == "el-key" and request.json() == {"text": "Hi.", "model_id": "eleven_v3"}
    with wave.open(answer["file_path"]) as audio:
        assert (audio.getframerate(), audio.getnframes()) == (24000, 3 * 240)


def test_a_failing_endpoint_is_an_error_naming_it(speak, openai_tts, speech_apis):
    speech_apis.server.route("POST", "/v1/audio/speech", (429, {}, "slow down"))

    answer = speak(text="Hello.")

    assert answer["success"] is False and "HTTP 429: slow down" in answer["error"]


@pytest.mark.parametrize(("tts", "why"), [
    ({"provider": "openai"}, "VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY"),
    ({"provider": "elevenlabs"}, "ELEVENLABS_API_KEY is not set"),
    ({"provider": "edge"}, "pip install 'hermes-tools-tts[edge]'"),
    ({"provider": "piper"}, "pip install 'hermes-tools-tts[piper]'"),
    ({"provider": "klingon"}, "unknown tts.provider 'klingon'; the providers are espeak, openai"),
])
def test_an_engine_that_cannot_run_makes_the_tool_unavailable_saying_why(tts_runtime: Runtime, tts_config, tts,
                                                                        why: str):
    tts_config(tts)
    tts_runtime.registry.invalidate_checks()

    answer = tts_runtime.handle_function_call("text_to_speech", {"text": "Hello."})
    names = {d["function"]["name"] for d in tts_runtime.get_tool_definitions(quiet_mode=True)}

    assert "unavailable" in answer and why in answer and "text_to_speech" not in names


def test_without_any_engine_the_default_says_what_to_install(tts_runtime: Runtime, monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path):
    monkeypatch.setenv("PATH", str(tmp_path))
    tts_runtime.registry.invalidate_checks()

    answer = tts_runtime.handle_function_call("text_to_speech", {"text": "Hello."})

    assert "no speech engine: install espeak-ng" in answer


def test_text_over_the_limit_is_refused_not_cut(speak, openai_tts, tts_config, speech_apis):
    tts_config({"provider": "openai", "openai": {"base_url": speech_apis.base_url}}, max_text_chars=10)

    answer = speak(text="This is longer than ten.")

    assert answer["success"] is False and "more than the 10 one call speaks" in answer["error"]
    assert speech_apis.server.requests == []


def test_empty_text_is_refused(speak):
    assert speak(text="  ") == {"success": False, "error": "TTS failed (tts): Text is required"}


@pytest.mark.parametrize("limit", [5, 20, 100])
def test_chunks_say_all_of_the_text_within_the_limit(limit: int):
    text = "One. Two words here! A sentence that runs past any small limit without a stop " + "x" * 30

    pieces = chunks(text, limit)

    assert all(0 < len(piece) <= limit for piece in pieces)
    assert "".join(pieces).replace(" ", "") == text.replace(" ", "")


def test_the_toolsets_select_the_tool(tts_runtime: Runtime, openai_tts):
    tts_runtime.registry.invalidate_checks()
    for toolset in ("tts", "tts_tools"):
        definitions = tts_runtime.get_tool_definitions(enabled_toolsets=[toolset], quiet_mode=True)
        assert {d["function"]["name"] for d in definitions} == {"text_to_speech"}
