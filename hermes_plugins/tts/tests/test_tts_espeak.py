"""text_to_speech with no configuration on a machine with espeak-ng: real speech, which ffprobe reads as audio of a
plausible duration, Ogg/Opus when ffmpeg is installed and WAV when it is not; returned as audio media."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import wave
from pathlib import Path

import pytest
from anthropic.types import ToolUseBlock

from hermes_core import Runtime
from hermes_core.authoring.testing import scaled_timeout

SENTENCE = "Hermes can speak. This sentence is read aloud by the speech synthesizer that ships with the system."


@pytest.fixture(autouse=True)
def espeak_or_skip() -> None:
    if not shutil.which("espeak-ng"):
        pytest.skip("espeak-ng is not installed (apt-get install espeak-ng); .ci/run installs it")


def probe(path: Path) -> tuple[str, str, float]:
    """(container, codec, seconds) as ffprobe reads the file."""
    result = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=format_name,duration:stream=codec_name",
                             "-of", "json", str(path)], capture_output=True, text=True, check=True,
                            timeout=scaled_timeout(30))
    found = json.loads(result.stdout)
    return found["format"]["format_name"], found["streams"][0]["codec_name"], float(found["format"]["duration"])


def test_with_no_configuration_espeak_ng_writes_ogg_opus_of_a_plausible_duration(speak, hermes_home: Path):
    if not shutil.which("ffprobe"):
        pytest.skip("ffmpeg is not installed (apt-get install ffmpeg); .ci/run installs it")

    answer = speak(text=SENTENCE)

    assert answer["success"] is True and answer["provider"] == "espeak" and answer["voice_compatible"] is True
    path = Path(answer["file_path"])
    assert path.parent == hermes_home / "results" / "media" and path.suffix == ".ogg"
    assert answer["media_tag"] == f"[[audio_as_voice]]\nMEDIA:{path}"
    container, codec, seconds = probe(path)
    words = len(SENTENCE.split())
    assert (container, codec) == ("ogg", "opus") and words / 5 < seconds < words  # 1 to 5 words a second


def test_without_ffmpeg_the_speech_is_wav(speak, tts_runtime: Runtime, monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path):
    only_espeak = tmp_path / "bin"
    only_espeak.mkdir()
    (only_espeak / "espeak-ng").symlink_to(shutil.which("espeak-ng"))
    monkeypatch.setenv("PATH", str(only_espeak))

    answer = speak(text=SENTENCE)

    path = Path(answer["file_path"])
    assert answer["success"] is True and path.suffix == ".wav" and answer["voice_compatible"] is False
    with wave.open(str(path)) as audio:
        seconds = audio.getnframes() / audio.getframerate()
    assert len(SENTENCE.split()) / 5 < seconds < len(SENTENCE.split())


def test_the_format_setting_asks_for_wav(speak, tts_config):
    tts_config(format="wav")
    assert Path(speak(text=SENTENCE)["file_path"]).suffix == ".wav"


def test_long_text_is_spoken_whole(speak, tts_config):
    tts_config(format="wav")
    short = Path(speak(text=SENTENCE)["file_path"])
    long = Path(speak(text=" ".join([SENTENCE] * 20))["file_path"])

    with wave.open(str(short)) as one, wave.open(str(long)) as twenty:
        ratio = twenty.getnframes() / one.getnframes()
    assert 15 < ratio < 25


def test_the_sound_is_returned_as_media(tts_runtime: Runtime, result_media):
    call = ToolUseBlock(type="tool_use", id="t1", name="text_to_speech", input={"text": "Hello."})

    text = tts_runtime.handle_function_call("text_to_speech", {"text": "Hello."})
    [reply] = tts_runtime.answer_tool_calls([call])

    [medium] = result_media(text)
    assert medium.saved.kind == "audio" and str(medium.saved.path) == json.loads(text.split("\n")[0])["file_path"]
    assert isinstance(reply["content"], str) and "[audio: " in reply["content"]  # Anthropic takes no audio


def test_the_voice_and_speed_settings_reach_espeak(speak, tts_config):
    tts_config(format="wav")
    default = Path(speak(text=SENTENCE)["file_path"]).read_bytes()
    tts_config({"espeak": {"voice": "de"}}, format="wav")
    german = Path(speak(text=SENTENCE)["file_path"]).read_bytes()
    tts_config({"speed": 2.0}, format="wav")
    fast = Path(speak(text=SENTENCE)["file_path"])

    assert german != default
    with wave.open(str(fast)) as audio:
        assert audio.getnframes() < len(default) / 2 * 0.7  # 16-bit mono: about half the frames, not all


def test_text_that_looks_like_options_is_spoken_not_obeyed(speak, tts_config, hermes_workspace: Path):
    tts_config(format="wav")
    os.chdir(hermes_workspace)

    answer = speak(text="-w stolen.wav --version")

    assert answer["success"] is True and not (hermes_workspace / "stolen.wav").exists()
