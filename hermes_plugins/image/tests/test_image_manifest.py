"""plugin.yaml: image_generate with Hermes Agent's toolset and arguments, saying it writes files and reaches the
world, in step with the code; its check imports neither fal-client nor httpx."""

from __future__ import annotations

from pathlib import Path

import hermes_plugin_image

from hermes_core.authoring.testing import imports_of
from hermes_core.plugins.manifest import load_manifest

PACK = Path(hermes_plugin_image.__file__).parent


def test_image_generate_is_hermes_agents_and_says_what_it_may_do(manifest_drift) -> None:
    [tool] = load_manifest(PACK / "plugin.yaml").tools or ()
    assert (tool.name, tool.toolset) == ("image_generate", "image_gen")
    assert set(tool.parameters["properties"]) == {"prompt", "aspect_ratio", "image_url", "reference_image_urls"}
    assert tool.annotations is not None and tool.annotations.model_dump(exclude_none=True) == {
        "read_only": False, "destructive": False, "idempotent": False, "open_world": True}
    assert manifest_drift("hermes_plugin_image") == []
    assert [m for m in imports_of("hermes_plugin_image.check", path=PACK.parent)
            if m.startswith(("httpx", "fal_client", "hermes_plugin_vision"))] == []
