"""Hermes browser pack: Hermes Agent's ten browser tools on the system's headless Chromium.

The tools are declared in plugin.yaml: listing them imports nothing of this pack, and Playwright is imported
on the first browser call. The browser is the runtime's state (``tool_context().state``): the runtime closes
it, and tells it when a session ends.
"""
