"""Hermes web tools: ``web_extract`` (a URL as Markdown) and ``web_search`` (SearXNG or Brave Search).

A declared-only plugin: the tools live in ``plugin.yaml`` and this package is imported on first call.
"""
