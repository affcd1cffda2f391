"""Where text_to_speech writes: output_path inside the workspace or the results folder, as a new file whose extension
is the format written; anywhere else, through a link, or over an existing file is refused and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def openai_tts(tts_config, speech_apis, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    tts_config({"provider": "openai", "openai": {"base_url": speech_apis.base_url}}, format="wav")


def test_a_workspace_path_gets_the_audio_with_the_extension_of_its_format(speak, tts_runtime, result_media,
                                                                          hermes_workspace: Path):
    text = tts_runtime.handle_function_call("text_to_speech", {"text": "Hi.", "output_path": "voice/memo.mp3"})

    written = hermes_workspace / "voice" / "memo.wav"
    assert f'"file_path": "{written}"' in text and written.read_bytes()[:4] == b"RIFF"
    [medium] = result_media(text)  # a copy in the results folder is what replies attach
    assert medium.data == written.read_bytes() and medium.saved.path != written


def test_a_results_folder_path_is_allowed(speak, hermes_home: Path):
    answer = speak(text="Hi.", output_path=str(hermes_home / "results" / "speech.wav"))

    assert answer["success"] is True and Path(answer["file_path"]) == hermes_home / "results" / "speech.wav"


@pytest.mark.parametrize("where", ["../outside.wav", "ABSOLUTE", "~/speech.wav", "linked/speech.wav"])
def test_a_path_outside_the_workspace_and_results_folder_is_refused(speak, hermes_workspace: Path, where: str):
    (hermes_workspace / "linked").symlink_to(hermes_workspace.parent)
    absolute = hermes_workspace.parent / "absolute.wav"  # (an absolute path outside the workspace)

    answer = speak(text="Hi.", output_path=str(absolute) if where == "ABSOLUTE" else where)

    assert answer["success"] is False and "audio is written in the workspace" in answer["error"]
    assert not (hermes_workspace.parent / "outside.wav").exists() and not (hermes_workspace.parent / "speech.wav")\
        .exists() and not absolute.exists()


def test_an_existing_file_is_never_replaced(speak, hermes_workspace: Path):
    (hermes_workspace / "notes.wav").write_text("my notes")

    answer = speak(text="Hi.", output_path="notes.txt")

    assert answer["success"] is False and "exists already" in answer["error"]
    assert (hermes_workspace / "notes.wav").read_text() == "my notes"


def test_a_link_at_the_target_is_not_followed(speak, hermes_workspace: Path):
    (hermes_workspace / "speech.wav").symlink_to(hermes_workspace.parent / "elsewhere.wav")

    answer = speak(text="Hi.", output_path="speech.wav")

    assert answer["success"] is False and not (hermes_workspace.parent / "elsewhere.wav").exists()
