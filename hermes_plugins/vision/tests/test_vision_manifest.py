"""plugin.yaml: Hermes Agent's tools, toolsets and arguments, annotated read-only and open-world, in step with the
code; the checks every listing runs import nothing of the call path."""

from __future__ import annotations

from pathlib import Path

import hermes_plugin_vision

from hermes_core.authoring.testing import imports_of
from hermes_core.plugins.manifest import load_manifest

PACK = Path(hermes_plugin_vision.__file__).parent
TOOLS = {tool.name: tool for tool in load_manifest(PACK / "plugin.yaml").tools or ()}


def test_the_tools_are_hermes_agents() -> None:
    assert {name: tool.toolset for name, tool in TOOLS.items()} == {"vision_analyze": "vision",
                                                                    "video_analyze": "video"}
    assert TOOLS["vision_analyze"].parameters["required"] == ["image_url", "question"]
    assert TOOLS["video_analyze"].parameters["required"] == ["video_url", "question"]
    assert all(tool.annotations and tool.annotations.model_dump(exclude_none=True) == {
        "read_only": True, "open_world": True} for tool in TOOLS.values())


def test_the_manifest_and_the_code_agree(manifest_drift) -> None:
    assert manifest_drift("hermes_plugin_vision") == []


def test_the_checks_import_neither_httpx_nor_the_web_pack() -> None:
    loaded = imports_of("hermes_plugin_vision.check", path=PACK.parent)
    assert [m for m in loaded if m.startswith(("httpx", "hermes_plugin_web", "hermes_plugin_vision.sources"))] == []
