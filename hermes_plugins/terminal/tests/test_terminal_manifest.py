"""The manifest: the four tools declared in toolset `terminal`, lazily imported; commands not parallel-safe."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import hermes_plugin_terminal

from hermes_core.plugins.manifest import load_manifest

MANIFEST = Path(hermes_plugin_terminal.__file__).with_name("plugin.yaml")


def test_the_manifest_is_valid_and_declares_every_tool():
    manifest = load_manifest(MANIFEST)
    assert manifest.name == "terminal"
    assert manifest.unknown_fields == []
    assert manifest.declarative
    assert [(tool.name, tool.toolset, tool.parallel_safe) for tool in manifest.tools] == [
        ("terminal", "terminal", False), ("process", "terminal", False), ("read_terminal", "terminal", True),
        ("close_terminal", "terminal", True)]


def test_every_handler_reference_resolves_to_a_callable():
    for tool in load_manifest(MANIFEST).tools:
        module, _, name = tool.handler.partition(":")
        assert callable(getattr(importlib.import_module(module), name))


def test_the_runtime_offers_the_tools_without_importing_the_handlers(load_hermes_plugin, hermes_runtime,
                                                                       monkeypatch):
    monkeypatch.delitem(sys.modules, "hermes_plugin_terminal.handlers", raising=False)
    load_hermes_plugin("hermes_plugin_terminal", "terminal")
    assert hermes_runtime.resolve_toolset("terminal") == ["terminal", "process", "read_terminal", "close_terminal"]
    assert hermes_runtime.registry.get_available_tool_names(["terminal", "process"]) == ["terminal", "process"]
    assert not hermes_runtime.registry.get("terminal").parallel_safe
    assert "hermes_plugin_terminal.handlers" not in sys.modules
