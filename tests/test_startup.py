"""Startup stays lean: importing the core imports almost nothing, and listing from warm caches builds no pydantic
model, parses no YAML, scans no distribution metadata and imports neither ``mcp`` nor any plugin module."""

from __future__ import annotations

import json
import subprocess
import sys

import yaml

from hermes_core.authoring.testing import scaled_timeout

#: Packages that must stay off the paths below (with their submodules); plugin code too: a first-party pack, or a
#: directory plugin (under the loader's own namespace module ``hermes_plugins``).
HEAVY = ("pydantic", "yaml", "packaging", "importlib.metadata", "mcp", "httpx", "jsonschema", "cookiecutter",
         "ruamel", "asyncio", "hermes_core.plugins.manifest", "hermes_core.config.model", "hermes_core.index.catalog")

#: Standard modules the listings and a runtime's start have no use for: each is imported where it is used
#: (digests, file copies and which(), resolving a reference, a Tab's completion, the session store, a new session's or
#: result's id).
#: ``uuid`` comes with click, so only a runtime without the command line is held to it.
UNUSED = ("hashlib", "_hashlib", "shutil", "pkgutil", "click.shell_completion", "sqlite3", "hermes_core.state.store")
RUNTIME_UNUSED = (*UNUSED, "uuid")
#: The listings also import none of the call path (made by a runtime's first tool call).
LISTING_UNUSED = (*UNUSED, "hermes_core.calls.dispatch", "hermes_core.tools.toolcalls", "hermes_core.calls.arguments",
                  "hermes_core.host.schema_patches")

LISTING = """
import json, sys
sys.argv = ["hermes", *{argv!r}]
from hermes_core.cli import main
try:
    main()
finally:
    print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def heavy(modules: list[str], unwanted: tuple[str, ...] = HEAVY) -> list[str]:
    return [m for m in modules if m.startswith(("hermes_plugin_", "hermes_plugins."))
            or any(m == h or m.startswith(f"{h}.") for h in unwanted)]


def test_import_hermes_core_imports_only_its_package_init():
    code = "import sys, json, hermes_core; print(json.dumps(sorted(sys.modules)))"
    modules = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                        check=True).stdout)
    assert [m for m in modules if m.startswith("hermes_core")] == ["hermes_core", "hermes_core._public"]
    assert heavy(modules) == [] and not {"click", "pluggy"} & set(modules)


def listing_modules(argv: list[str]) -> list[str]:
    result = subprocess.run([sys.executable, "-c", LISTING.format(argv=argv)], capture_output=True, text=True,
                            timeout=scaled_timeout(120))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stderr.strip().splitlines()[-1])


def test_listing_from_warm_caches_builds_no_model_and_imports_no_plugin_or_mcp(plugins, isolated_home):
    plugins.folder("declared", manifest="name: declared\nrequires_hermes: '>=0.1'\ntools:\n  - {name: d_tool, "
                                        "toolset: d, description: x, handler: .tools:run}\n", init="")
    plugins.folder("off", manifest="name: off\ntools: []\n", init="raise RuntimeError('imported')\n")
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({
        "plugins": {"disabled": ["off"], "hook_timeout": 5},
        "mcp_servers": {"never": {"command": sys.executable, "args": ["-c", "import time; time.sleep(3600)"]}}}))
    for argv in (["plugins", "list"], ["tools", "list"], ["--help"]):
        listing_modules(argv)  # the first run fills the discovery and config caches
        assert heavy(listing_modules(argv)) == [], argv


def test_listings_and_a_runtime_from_warm_caches_import_no_module_they_do_not_use(plugins, isolated_home):
    """The listings, and what an agent pays to start (discovery, loading and the tool definitions, without the
    command line). No MCP server is configured: their listings' cache is keyed by a digest of their settings."""
    plugins.folder("declared", manifest="name: declared\ntools:\n  - {name: d_tool, toolset: d, description: x, "
                                        "handler: .tools:run}\n", init="")
    (isolated_home / "config.yaml").write_text("plugins:\n  hook_timeout: 5\n")
    for argv in (["plugins", "list"], ["tools", "list"]):  # (click's help formatter imports shutil itself)
        listing_modules(argv)  # the first run fills the discovery and config caches
        assert heavy(listing_modules(argv), (*HEAVY, *LISTING_UNUSED)) == [], argv
    code = ("import json, sys, hermes_core; runtime = hermes_core.Runtime(); runtime.load_plugins(); "
            "runtime.get_tool_definitions(); print(json.dumps(sorted(sys.modules)))")
    for _ in range(2):  # the first run fills the discovery cache of this sys.path
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                timeout=scaled_timeout(120))
        assert result.returncode == 0, result.stderr
    modules = json.loads(result.stdout)
    assert "hermes_core.tools.registry" in modules and heavy(modules, (*HEAVY, *RUNTIME_UNUSED)) == []


def test_an_edited_config_is_validated_again_and_an_invalid_one_reported(isolated_home):
    config = isolated_home / "config.yaml"
    config.write_text("plugins:\n  hook_timeout: 5\n")
    listing_modules(["plugins", "list"])
    config.write_text("plugins:\n  hook_timeout: soon\n")
    result = subprocess.run([sys.executable, "-c", LISTING.format(argv=["plugins", "list"])], capture_output=True,
                            text=True, timeout=scaled_timeout(120))
    assert result.returncode == 1 and "config.yaml:2: plugins.hook_timeout" in result.stderr
    config.write_text("plugins:\n  hook_timeout: 0\n")
    assert "pydantic" in listing_modules(["plugins", "list"])  # validated once for the new content
    assert "pydantic" not in listing_modules(["plugins", "list"])


def test_a_check_reading_settings_and_a_section_from_warm_caches_builds_no_model(plugins, isolated_home, tmp_path):
    """``tool_context().settings`` and ``.section(name)`` read the cached config data: a tool check (which
    ``hermes tools list`` runs) that reads them costs no pydantic model."""
    seen = tmp_path / "seen.json"
    plugins.folder("reader", manifest="name: reader\ntools:\n  - {name: r_tool, toolset: r, description: x, "
                                      "handler: .tools:run, check_fn: .tools:check}\n", init="", files={
        "tools.py": "import json\nfrom hermes_core.plugin import tool_context\n\n"
                    "def run(args, **kw):\n    return 'ok'\n\n"
                    f"def check():\n    context = tool_context()\n    open({str(seen)!r}, 'w').write(json.dumps("
                    "[context.settings, context.section('web')]))\n    return True\n"})
    (isolated_home / "config.yaml").write_text(
        "web: {search_backend: searxng}\nplugins:\n  entries:\n    reader: {colour: red, settings: {size: 3}}\n")
    listing_modules(["tools", "list"])  # fills the caches
    seen.unlink()
    modules = listing_modules(["tools", "list"])
    settings, web = json.loads(seen.read_text())
    assert settings == {"colour": "red", "size": 3}
    assert web == {"allow_private_networks": False, "search_backend": "searxng", "backend": None}
    assert not [m for m in modules if m in ("pydantic", "hermes_core.config.model") or m.startswith("pydantic.")]
