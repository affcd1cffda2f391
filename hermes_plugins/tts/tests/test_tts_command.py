"""Hermes Agent's command providers (``tts.providers.<name>: {type: command, command: ...}``): a local program
speaks through the shell with the text in a file, placeholders quoted for where they stand; the model's text never
reaches the command line. And DeepInfra, an OpenAI-compatible speech API asked through the openai SDK."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hermes_plugin_tts.command import CommandError, render

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the commands are POSIX shell")


def audio_seconds(path: str) -> float:
    """Seconds of audio ffprobe reads in the file."""
    probed = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path],
                            capture_output=True, text=True, check=True)
    return float(probed.stdout.strip())


def test_an_espeak_command_provider_speaks_the_whole_text(speak, tts_config):
    if not (shutil.which("espeak-ng") and shutil.which("ffprobe")):
        pytest.skip("espeak-ng and ffmpeg are not installed (apt-get install espeak-ng ffmpeg)")
    tts_config({"provider": "robot", "providers": {"robot": {
        "type": "command", "command": "espeak-ng -w {output_path} -f {input_path}", "output_format": "wav"}}},
        format="wav")

    answer = speak(text="One two three four five six seven eight nine ten.")

    assert answer["success"] is True and answer["provider"] == "robot"
    assert answer["file_path"].endswith(".wav") and 1.5 < audio_seconds(answer["file_path"]) < 15


def test_the_models_text_never_reaches_the_command_line(speak, tts_config, tmp_path: Path):
    victim = tmp_path / "pwned"
    tts_config({"provider": "copy", "providers": {"copy": {
        "command": "cp {input_path} '{output_path}.txt' && printf 'RIFF' > \"{output_path}\"", "output_format": "wav",
        "voice": "a voice; touch " + str(victim)}}}, format="wav")

    answer = speak(text=f"$(touch {victim}) `touch {victim}` ; touch {victim}")

    assert not victim.exists()
    assert answer["success"] is False and "did not return WAV audio" in answer["error"]  # it ran, quoted


@pytest.mark.parametrize(("template", "expected"), [
    ("say {voice}", "say 'my voice'"),
    ("say '{voice}'", "say 'my voice'"),
    ('say "{voice}"', 'say "my voice"'),
    ("say {{literal}} {voice}", "say {literal} 'my voice'"),
])
def test_placeholders_are_quoted_for_where_they_stand(template: str, expected: str):
    assert render(template, {"voice": "my voice"}) == expected


def test_quotes_inside_values_stay_inside_them():
    assert render("say '{voice}'", {"voice": "it's"}) == "say 'it'\\''s'"
    assert render('say "{voice}"', {"voice": 'a "$HOME" `x`'}) == 'say "a \\"\\$HOME\\" \\`x\\`"'
    with pytest.raises(CommandError, match=r"unknown placeholder \{nope\}"):
        render("say {nope}", {"voice": ""})


def test_a_failing_a_silent_and_a_slow_command_are_errors_saying_so(speak, tts_config):
    for command, why in (("echo broken >&2; exit 3", "failed: broken"),
                         ("true", "wrote no audio"),
                         ("sleep 30", "timed out after 0.5s")):
        tts_config({"provider": "bad", "providers": {"bad": {"command": command, "timeout": 0.5}}})
        answer = speak(text="Hello.")
        assert answer["success"] is False and why in answer["error"], answer


def test_deepinfra_goes_through_the_openai_sdk_to_its_endpoint(speak, tts_config, speech_apis,
                                                                monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("openai")
    monkeypatch.setenv("DEEPINFRA_API_KEY", "di-key")
    tts_config({"provider": "deepinfra", "deepinfra": {"base_url": speech_apis.base_url, "model": "hexgrad/Kokoro",
                                                        "voice": "af_sky"}}, format="wav")

    answer = speak(text="Hello there.")

    assert answer["success"] is True and answer["provider"] == "deepinfra"
    [body] = speech_apis.bodies
    assert body == {"model": "hexgrad/Kokoro", "input": "Hello there.", "voice": "af_sky", "response_format": "wav"}
    headers = {name.lower(): value for name, value in speech_apis.server.requests[0].headers.items()}
    assert headers["authorization"] == "Bearer di-key"
    assert headers["user-agent"].startswith("OpenAI/Python")  # the real SDK asked
