"""Hermes vision tools: ``vision_analyze`` (an image) and ``video_analyze`` (frames of a video taken with ffmpeg),
answered by the configured vision model.

A declared-only plugin: the tools live in ``plugin.yaml`` and this package is imported on first call.
"""
