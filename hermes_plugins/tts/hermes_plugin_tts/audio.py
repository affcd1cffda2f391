"""Sound plumbing: WAV pieces joined into one, raw PCM wrapped as WAV, and ffmpeg's conversions (to Ogg/Opus, what
messaging platforms want; from MP3 to WAV). ffmpeg reads from a pipe and writes to a pipe: no file names are passed
to it, and it runs under a time limit."""

from __future__ import annotations

import io
import shutil
import subprocess
import wave

__all__ = ["AudioError", "ffmpeg", "join_wav", "pcm_to_wav", "to_opus", "to_wav"]


class AudioError(Exception):
    """A conversion failed; the message says why."""


def ffmpeg() -> str | None:
    """The path of ``ffmpeg``, or None when it is not installed."""
    return shutil.which("ffmpeg")


def pcm_to_wav(pcm: bytes, rate: int, channels: int = 1, width: int = 2) -> bytes:
    """Signed little-endian PCM as a WAV file."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(width)
        out.setframerate(rate)
        out.writeframes(pcm)
    return buffer.getvalue()


def join_wav(pieces: list[bytes]) -> bytes:
    """One WAV of ``pieces`` in order (all of one sample format, as one engine makes them), its header stating its
    true length (a streamed WAV, as espeak-ng writes to a pipe, says "as long as can be")."""
    frames, params = [], None
    for piece in pieces:
        try:
            with wave.open(io.BytesIO(piece), "rb") as part:
                shape = (part.getnchannels(), part.getsampwidth(), part.getframerate())
                if params is not None and shape != params:
                    raise AudioError(f"the engine returned pieces of different formats: {params} and {shape}")
                params = shape
                frames.append(part.readframes(part.getnframes()))
        except (wave.Error, EOFError) as exc:
            raise AudioError(f"the engine did not return WAV audio: {exc}") from None
    assert params is not None
    return pcm_to_wav(b"".join(frames), params[2], params[0], params[1])


def to_opus(audio: bytes, timeout: float) -> bytes:
    """``audio`` (any format ffmpeg reads) as mono Ogg/Opus."""
    return _convert(audio, ["-c:a", "libopus", "-b:a", "32k", "-ac", "1", "-f", "ogg"], timeout)


def to_wav(audio: bytes, timeout: float) -> bytes:
    """``audio`` (e.g. MP3) as 16-bit WAV."""
    return _convert(audio, ["-c:a", "pcm_s16le", "-f", "wav"], timeout)


def _convert(audio: bytes, output: list[str], timeout: float) -> bytes:
    path = ffmpeg()
    if path is None:
        raise AudioError("ffmpeg is not installed")
    command = [path, "-nostdin", "-hide_banner", "-loglevel", "error", "-protocol_whitelist", "pipe",
               "-i", "pipe:0", "-vn", *output, "pipe:1"]
    try:
        result = subprocess.run(command, input=audio, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AudioError(f"ffmpeg did not convert the audio within {timeout:g} s") from None
    if result.returncode != 0 or not result.stdout:
        detail = (result.stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"])[-1][:300]
        raise AudioError(f"ffmpeg could not convert the audio: {detail}")
    return result.stdout
