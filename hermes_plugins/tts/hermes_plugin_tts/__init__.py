"""Hermes text to speech: ``text_to_speech`` through the engine ``tts.provider`` names (espeak-ng, no network and no
key, when unset and installed), as Ogg/Opus with ffmpeg or WAV, written in the workspace or the results folder and
returned as audio media.

A declared-only plugin: the tool lives in ``plugin.yaml`` and this package is imported on first call.
"""
