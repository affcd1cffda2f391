"""``text_to_speech`` with Hermes Agent 0.19's arguments and answer (``{"success", "file_path", "media_tag",
"provider", "voice_compatible"}``; on failure ``{"success": false, "error": ...}``): the whole text spoken, piece by
piece where the engine takes less, one audio file written and returned as audio media."""

from __future__ import annotations

import json
from typing import Any

from hermes_core.plugin import Media, MediaError, ToolResult, save_media

from .audio import AudioError, ffmpeg, join_wav, to_opus, to_wav
from .output import OutputError, write_new
from .providers import SpeechError, chosen
from .settings import SettingsError, TtsSettings, load_settings
from .text import chunks

__all__ = ["text_to_speech"]

_SUFFIXES = {"audio/ogg": ".ogg", "audio/wav": ".wav", "audio/mpeg": ".mp3", "audio/flac": ".flac"}


def text_to_speech(args: dict[str, Any], **kwargs: Any) -> str | ToolResult:
    text = str(args.get("text") or "")
    provider = ""
    try:
        if not text.strip():
            raise SpeechError("Text is required")
        settings = load_settings()
        if len(text) > settings.max_text_chars:
            raise SpeechError(f"the text has {len(text):,} characters, more than the {settings.max_text_chars:,} "
                              "one call speaks (plugins.entries.tts.settings.max_text_chars); split it")
        engine = chosen(settings)
        provider = engine.name
        audio, mime_type = _encoded(_spoken(text, engine.limit(settings), engine.speak, settings), settings)
        output_path = args.get("output_path")
        if isinstance(output_path, str) and output_path.strip():
            path = write_new(output_path, audio, _SUFFIXES[mime_type])
            media: Any = Media.from_file(path, mime_type)
        else:
            media = save_media(Media.from_bytes(audio, mime_type))
            path = media.path
    except (SettingsError, SpeechError, AudioError, OutputError, MediaError) as exc:
        return json.dumps({"success": False, "error": f"TTS failed ({provider or 'tts'}): {exc}"}, ensure_ascii=False)
    voice = mime_type == "audio/ogg"
    tag = f"MEDIA:{path}"
    return ToolResult(json.dumps({"success": True, "file_path": str(path),
                                  "media_tag": f"[[audio_as_voice]]\n{tag}" if voice else tag, "provider": provider,
                                  "voice_compatible": voice}, ensure_ascii=False), media)


def _spoken(text: str, limit: int, speak: Any, settings: TtsSettings) -> tuple[list[bytes], str]:
    """Each piece of ``text`` spoken, in order, and their format."""
    pieces = [speak(piece, settings) for piece in chunks(text, limit)]
    return [audio for audio, _ in pieces], pieces[0][1]


def _encoded(spoken: tuple[list[bytes], str], settings: TtsSettings) -> tuple[bytes, str]:
    """The pieces as one file: Ogg/Opus when ffmpeg is there (``format: auto`` or ``ogg``), else WAV (without
    ffmpeg, MP3 pieces stay MP3, joined frame to frame, and one piece of another format stays as it is)."""
    pieces, mime_type = spoken
    has_ffmpeg = ffmpeg() is not None
    if settings.format == "ogg" and not has_ffmpeg:
        raise AudioError("format ogg needs ffmpeg, which is not installed")
    if mime_type != "audio/wav":
        if not has_ffmpeg:
            if mime_type == "audio/mpeg" or len(pieces) == 1:
                return b"".join(pieces), mime_type
            raise AudioError(f"joining {len(pieces)} pieces of {mime_type} needs ffmpeg, which is not installed")
        pieces, mime_type = [to_wav(piece, settings.timeout) for piece in pieces], "audio/wav"
    audio = join_wav(pieces)
    if settings.format == "wav" or not has_ffmpeg:
        return audio, "audio/wav"
    return to_opus(audio, settings.timeout), "audio/ogg"
