"""Hermes image generation: ``image_generate`` through FAL (Hermes Agent's default) or an OpenAI-compatible images
endpoint, chosen by ``image_gen.provider``; the picture is saved in the results folder and returned as media.

A declared-only plugin: the tool lives in ``plugin.yaml`` and this package is imported on first call.
"""
