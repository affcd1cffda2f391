"""plugin.yaml: text_to_speech with Hermes Agent's toolset and arguments, saying it writes files (output_path names
one), in step with the code; its check starts no program and imports no HTTP client."""

from __future__ import annotations

from pathlib import Path

import hermes_plugin_tts

from hermes_core.authoring.testing import imports_of
from hermes_core.plugins.manifest import load_manifest

PACK = Path(hermes_plugin_tts.__file__).parent


def test_text_to_speech_is_hermes_agents_and_says_what_it_may_do(manifest_drift) -> None:
    [tool] = load_manifest(PACK / "plugin.yaml").tools or ()
    assert (tool.name, tool.toolset, tool.path_args) == ("text_to_speech", "tts", ["output_path"])
    assert set(tool.parameters["properties"]) == {"text", "output_path"} and tool.parameters["required"] == ["text"]
    assert tool.annotations is not None and tool.annotations.model_dump(exclude_none=True) == {
        "read_only": False, "destructive": False, "idempotent": False, "open_world": True}
    assert manifest_drift("hermes_plugin_tts") == []
    assert [m for m in imports_of("hermes_plugin_tts.check", path=PACK.parent)
            if m.startswith(("httpx", "subprocess", "edge_tts", "piper", "openai"))] == []
