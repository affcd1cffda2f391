"""video_analyze: frames taken evenly across a real video with the system's ffmpeg reach the vision model in order;
a playlist that would make ffmpeg open other files is refused, and without ffmpeg the tool is unavailable."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from hermes_core import Runtime
from hermes_core.authoring.testing import LocalHttp, scaled_timeout
from hermes_core.plugin import media_info


def ffmpeg_or_skip() -> None:
    if not (shutil.which("ffmpeg") and shutil.which("ffprobe")):
        pytest.skip("ffmpeg is not installed (apt-get install ffmpeg); .ci/run installs it")


@pytest.fixture
def make_video(tmp_path: Path) -> Callable[..., bytes]:
    """``make_video(suffix, seconds, size)``: a real video of one colour, made by ffmpeg."""
    ffmpeg_or_skip()

    def make(suffix: str = ".mp4", seconds: int = 2, size: str = "64x48", color: str = "red") -> bytes:
        path = tmp_path / f"made{suffix}"
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"color=c={color}:s={size}:d={seconds}",
                        "-pix_fmt", "yuv420p", str(path)], check=True, timeout=scaled_timeout(60))
        return path.read_bytes()

    return make


@pytest.mark.parametrize("suffix", [".mp4", ".mkv", ".webm"])
def test_frames_of_a_workspace_video_reach_the_model_in_order(vision, vision_config, vision_model, make_video,
                                                             hermes_workspace: Path, suffix: str):
    vision_config(video_frames=3)
    (hermes_workspace / f"clip{suffix}").write_bytes(make_video(suffix))

    answer = vision("video_analyze", video_url=f"clip{suffix}", question="What happens?")

    assert answer == {"success": True, "analysis": "I see 3 image(s): a red square."}
    frames = vision_model.images()
    assert [mime for mime, _ in frames] == ["image/png"] * 3
    assert all((media_info(frame).width, media_info(frame).height) == (64, 48) for _, frame in frames)
    assert vision_model.question().startswith("These are 3 frames") and vision_model.question().endswith(
        "What happens?")


def test_wide_frames_are_scaled_down_to_the_width_cap(vision, vision_config, vision_model, make_video,
                                                     hermes_workspace: Path):
    vision_config(video_frames=1, frame_width=100)
    (hermes_workspace / "wide.mp4").write_bytes(make_video(size="640x360"))

    assert vision("video_analyze", video_url="wide.mp4", question="?")["success"] is True
    [(_, frame)] = vision_model.images()
    assert (media_info(frame).width, media_info(frame).height) == (100, 56)


def test_a_video_url_is_fetched_through_the_guard(vision, vision_config, vision_model, make_video,
                                                 local_http: LocalHttp):
    url = local_http.route("GET", "/clip.mp4", (200, {"Content-Type": "video/mp4"}, make_video()))

    refused = vision("video_analyze", video_url=url, question="?")
    vision_config(allow_private=True, video_frames=2)
    allowed = vision("video_analyze", video_url=url, question="?")

    assert refused["success"] is False and "loopback" in refused["error"]
    assert allowed["success"] is True and len(vision_model.images()) == 2


def test_a_playlist_that_names_other_files_is_refused(vision, vision_model, hermes_workspace: Path):
    ffmpeg_or_skip()
    (hermes_workspace / "list.m3u8").write_text("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n/etc/hostname\n"
                                                "#EXT-X-ENDLIST\n")

    answer = vision("video_analyze", video_url="list.m3u8", question="?")

    assert answer["success"] is False and "ffmpeg could not read the video" in answer["error"]
    assert vision_model.asked == []


def test_a_video_over_the_byte_limit_is_refused(vision, vision_config, make_video, hermes_workspace: Path):
    vision_config(max_video_bytes=100)
    (hermes_workspace / "clip.mp4").write_bytes(make_video())

    answer = vision("video_analyze", video_url="clip.mp4", question="?")

    assert answer["success"] is False and "more than the 100 byte limit" in answer["error"]


def test_without_ffmpeg_video_analyze_is_unavailable_naming_it(hermes_runtime: Runtime, vision,
                                                              monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    hermes_runtime.registry.invalidate_checks()

    answer = hermes_runtime.handle_function_call("video_analyze", {"video_url": "a.mp4", "question": "?"})
    names = {d["function"]["name"] for d in hermes_runtime.get_tool_definitions(quiet_mode=True)}

    assert "unavailable" in answer and "ffmpeg is not installed" in answer
    assert "video_analyze" not in names and "vision_analyze" in names


def test_the_video_toolset_selects_it(hermes_runtime: Runtime, vision):
    definitions = hermes_runtime.get_tool_definitions(enabled_toolsets=["video"], quiet_mode=True)
    assert {d["function"]["name"] for d in definitions} == {"video_analyze"}
