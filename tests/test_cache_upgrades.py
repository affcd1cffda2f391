"""A home written by other code is read by this code without error: every cache is keyed on the code that decides
what it stores, so a release that adds a config key or a manifest field, with no format number changed by hand,
never reads a cache that lacks it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hermes_core
from hermes_core import Runtime
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.config.data import config_data

PACKAGE = Path(hermes_core.__file__).resolve().parent


def older_core(tmp_path: Path, module: str, dropped: str) -> Path:
    """A copy of today's core whose ``module`` lacks ``dropped`` (what the release before this one did not have)."""
    root = tmp_path / "older"
    shutil.copytree(PACKAGE, root / "hermes_core", ignore=shutil.ignore_patterns("__pycache__"))
    source = root / "hermes_core" / module
    text = source.read_text()
    assert dropped in text
    source.write_text(text.replace(dropped, ""))
    return root


def run_older(root: Path, home: Path, code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=scaled_timeout(120),
                            env={**os.environ, "PYTHONPATH": str(root), "HERMES_HOME": str(home)})
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_config_key_added_since_a_home_was_cached_is_read_from_that_home(tmp_path, isolated_home):
    (isolated_home / "config.yaml").write_text("plugins:\n  hook_timeout: 5\n")
    older = older_core(tmp_path, "config/model.py", "    tools: ToolsConfig = Field(default_factory=ToolsConfig)\n")
    seen = run_older(older, isolated_home, "import json, hermes_core.config.data as d\n"
                                           "from hermes_core.config.home import HermesHome\n"
                                           "home = HermesHome.from_env()\n"
                                           "print(json.dumps(sorted(d.config_data(home.config_file, home.cache_dir))))")
    assert "tools" not in json.loads(seen)  # the older code cached the content without the key
    [cached] = (isolated_home / "cache").glob("config-*.json")
    assert "tools" not in json.loads(cached.read_text())["data"]

    data = config_data(isolated_home / "config.yaml", isolated_home / "cache")
    assert data["tools"]["call_timeout"] == 3600 and data["plugins"]["hook_timeout"] == 5
    runtime = Runtime()
    runtime.context("p").register_tool("ping", "t", {"parameters": {"type": "object"}}, lambda args, **kw: "pong")
    assert runtime.handle_function_call("ping", {}) == "pong"  # (a plugin's tool reads tools.call_timeout)


MANIFEST = """
name: declared
version: "1.0"
tools:
  - name: ping
    toolset: t
    description: ping
    parameters: {type: object, properties: {}}
    handler: .tools:ping
"""


@pytest.mark.parametrize("cache", [True, False], ids=["cached", "no cache"])
def test_a_manifest_field_added_since_plugins_were_discovered_is_read_from_that_home(
        plugins, tmp_path, isolated_home, cache):
    plugins.folder("declared", manifest=MANIFEST, files={"tools.py": "def ping(args, **kwargs):\n    return 'pong'\n"})
    manifest = (PACKAGE / "plugins" / "manifest.py").read_text()
    field = manifest[manifest.index("    call_timeout: "):manifest.index("    annotations: ToolAnnotationsDeclaration")]
    older = older_core(tmp_path, "plugins/manifest.py", field)
    run_older(older, isolated_home, "from hermes_core import Runtime\nRuntime(entry_points=()).discover()\n")
    [cached] = (isolated_home / "cache").glob("discovery-*.json")
    header, stored_manifest = cached.read_text().split("\n")  # (the candidates' outlines, then each manifest)
    assert len(json.loads(header)["records"]) == 1
    assert "call_timeout" not in json.loads(stored_manifest)["tools"][0]  # what the older code stored
    if not cache:
        cached.unlink()

    runtime = plugins.runtime()
    runtime.load_plugins()
    assert runtime.plugin("declared").state == "declared"
    assert runtime.handle_function_call("ping", {}) == "pong"
