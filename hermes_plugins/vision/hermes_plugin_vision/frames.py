"""Frames of a video, taken with ffmpeg when it is installed.

The video is untrusted: ffmpeg reads it from a private temporary file with only the ``file`` protocol and only
ordinary video demuxers allowed (no playlist or concat format that could make it open other files or URLs), under
a time limit, and writes at most the frames asked for, each scaled down to a width cap.
"""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["DEMUXERS", "FramesError", "ffmpeg", "take_frames"]

#: The demuxers ffmpeg may use: containers of one video, none of which refers to other files.
DEMUXERS = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,avi,mpeg,mpegts,flv,asf,ogg,gif"
_INPUT = ["-protocol_whitelist", "file", "-format_whitelist", DEMUXERS]


class FramesError(Exception):
    """The frames cannot be taken; the message says why."""


def ffmpeg() -> tuple[str, str] | None:
    """The paths of ``ffmpeg`` and ``ffprobe``, or None when either is missing."""
    found = shutil.which("ffmpeg"), shutil.which("ffprobe")
    return (found[0], found[1]) if found[0] and found[1] else None


def take_frames(video: bytes, count: int, width: int, timeout: float) -> list[bytes]:
    """``count`` PNG frames spread evenly over ``video`` (fewer for a shorter one), none wider than ``width``."""
    tools = ffmpeg()
    if tools is None:
        raise FramesError("ffmpeg is not installed (it takes the frames): install ffmpeg, e.g. apt-get install ffmpeg")
    import tempfile

    ffmpeg_path, ffprobe_path = tools
    with tempfile.TemporaryDirectory(prefix="hermes-video-") as folder:
        source = Path(folder) / "video"
        source.write_bytes(video)
        duration = _duration(ffprobe_path, source, timeout)
        rate = f"{count}/{duration:.3f}" if duration > 0 else "1"
        command = [ffmpeg_path, "-nostdin", "-hide_banner", "-loglevel", "error", *_INPUT, "-i", str(source),
                   "-vf", f"fps={rate},scale='min({width},iw)':-2", "-frames:v", str(count), "-an", "-sn",
                   str(Path(folder) / "frame-%03d.png")]
        _run(command, timeout, "take frames of")
        frames = sorted(Path(folder).glob("frame-*.png"))
        if not frames:
            raise FramesError("ffmpeg found no video frame in it")
        return [frame.read_bytes() for frame in frames[:count]]


def _duration(ffprobe_path: str, source: Path, timeout: float) -> float:
    output = _run([ffprobe_path, "-v", "error", *_INPUT, "-show_entries", "format=duration", "-of",
                   "default=noprint_wrappers=1:nokey=1", str(source)], timeout, "read")
    try:
        return max(float(output.strip().splitlines()[0]), 0.0)
    except (ValueError, IndexError):
        return 0.0  # a stream without a known duration: one frame a second


def _run(command: list[str], timeout: float, what: str) -> str:
    import subprocess

    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise FramesError(f"ffmpeg did not {what} the video within {timeout:g} s") from None
    except OSError as exc:
        raise FramesError(f"cannot run {command[0]}: {exc.strerror or exc}") from None
    if result.returncode != 0:
        detail = (result.stderr.strip().splitlines() or ["no message"])[-1][:300]
        raise FramesError(f"ffmpeg could not {what} the video: {detail}")
    return result.stdout
