"""``vision_analyze`` and ``video_analyze``, with Hermes Agent 0.19's arguments and answers
(``{"success": true, "analysis": ...}``; on failure ``{"success": false, "error": ..., "analysis": ...}``)."""

from __future__ import annotations

import json
from typing import Any

from hermes_core.errors import LlmEndpointError, NoAnswer
from hermes_core.plugin import media_info

from .frames import FramesError, take_frames
from .model import VisionUnavailable, ask
from .settings import SettingsError, load_settings
from .sources import Loaded, SourceError, load_image, load_video

__all__ = ["video_analyze", "vision_analyze"]

IMAGE_PROMPT = "Fully describe and explain everything about this image, then answer the following question:\n\n{}"
VIDEO_PROMPT = ("These are {} frames taken evenly across a video, in order. Fully describe and explain everything "
                "happening in the video, including visual content, motion, text overlays, and scene transitions. Then "
                "answer the following question:\n\n{}")


def vision_analyze(args: dict[str, Any], **kwargs: Any) -> str:
    question = str(args.get("question") or "")
    try:
        settings = load_settings()
        image = load_image(str(args.get("image_url") or ""), settings)
        return _answer(ask(IMAGE_PROMPT.format(question), [image], max_tokens=2000), "image")
    except (SettingsError, SourceError, VisionUnavailable, LlmEndpointError, NoAnswer) as exc:
        return _failed("image", exc)


def video_analyze(args: dict[str, Any], **kwargs: Any) -> str:
    question = str(args.get("question") or "")
    try:
        settings = load_settings()
        video = load_video(str(args.get("video_url") or ""), settings)
        frames = [Loaded(frame, f"frame {index}", media_info(frame)) for index, frame in enumerate(
            take_frames(video.data, settings.video_frames, settings.frame_width, settings.ffmpeg_timeout), 1)]
        return _answer(ask(VIDEO_PROMPT.format(len(frames), question), frames, max_tokens=4000), "video")
    except (SettingsError, SourceError, FramesError, VisionUnavailable, LlmEndpointError, NoAnswer) as exc:
        return _failed("video", exc)


def _answer(analysis: str, what: str) -> str:
    return json.dumps({"success": True, "analysis": analysis or f"The vision model gave no answer about the {what}."},
                      indent=2, ensure_ascii=False)


def _failed(what: str, exc: Exception) -> str:
    return json.dumps({"success": False, "error": f"Error analyzing {what}: {exc}", "analysis": str(exc)}, indent=2,
                      ensure_ascii=False)
