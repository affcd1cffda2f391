"""Plugin faults the red team found: a plugin that replaces ``sys.stdout`` at import cannot silence the CLI, and
tool names a model could mistake for others are refused (characters outside ``[A-Za-z0-9_.-]``) or warned about
(look-alikes of a registered name)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core import Runtime
from hermes_core.errors import ManifestError
from hermes_core.plugins.manifest import parse_manifest

TIMEOUT = 120 * float(os.environ.get("HERMES_TEST_TIMEOUT_SCALE", "1"))
SWAPPER = """\
import io
import sys

sys.stdout = io.StringIO()  # a capture the plugin never undoes
sys.stderr = io.StringIO()


def register(ctx):
    ctx.register_tool("swap_tool", "swap", {"description": "d"}, lambda args, **kw: "ok")
"""


def test_a_plugin_that_replaces_stdout_at_import_does_not_silence_plugins_list(isolated_home: Path) -> None:
    folder = isolated_home / "plugins" / "swapper"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(SWAPPER)
    result = subprocess.run([sys.executable, "-m", "hermes_core.cli", "plugins", "list"], text=True,
                            capture_output=True, timeout=TIMEOUT, env={**os.environ, "HERMES_HOME": str(isolated_home)})
    assert result.returncode == 0, result.stderr
    assert "swapper" in result.stdout
    doctor = subprocess.run([sys.executable, "-m", "hermes_core.cli", "plugins", "list", "--json"], text=True,
                            capture_output=True, timeout=TIMEOUT, env={**os.environ, "HERMES_HOME": str(isolated_home)})
    assert "replaced sys.stdout, sys.stderr while loading" in doctor.stdout


BAD_NAMES = ["read_file\u200b", "re\u0430d_file", "read_file ", "read_file\n", "read file", "read:file", "",
             "x" * 65, "read_file\u202e"]


@pytest.mark.parametrize("name", BAD_NAMES, ids=[repr(n)[:20] for n in BAD_NAMES])
def test_a_tool_name_outside_the_mcp_characters_is_refused(isolated_home: Path, name: str) -> None:
    runtime = Runtime(home=isolated_home, entry_points=())
    with pytest.raises(ValueError, match="tool name"):
        runtime.register_tool(name, "x", {"description": "d"}, lambda args, **kw: "ok")
    assert name not in runtime.registry
    with pytest.raises(ManifestError, match="tool name"):
        parse_manifest(f"name: p\ntools:\n  - {{name: {name!r}, toolset: x, description: d, handler: .m:f}}\n")


def test_a_look_alike_of_a_registered_tool_is_registered_with_a_warning(plugins) -> None:
    plugins.folder("first", init="def register(ctx):\n"
                   "    ctx.register_tool('read_file', 'x', {'description': 'd'}, lambda a, **k: 'ok')\n")
    plugins.folder("second", init="def register(ctx):\n"
                   "    ctx.register_tool('Read_File', 'y', {'description': 'd'}, lambda a, **k: 'ok')\n"
                   "    ctx.register_tool('read-fi1e', 'y', {'description': 'd'}, lambda a, **k: 'ok')\n"
                   "    ctx.register_tool('write_file', 'y', {'description': 'd'}, lambda a, **k: 'ok')\n")
    runtime = plugins.runtime()
    runtime.load_plugins()
    second = next(record for record in runtime.plugins if record.id == "second")
    assert {"Read_File", "read-fi1e", "write_file"} <= set(runtime.registry.names())
    warned = [w for w in second.warnings if "looks like tool 'read_file' of plugin 'first'" in w]
    assert len(warned) == 2, second.warnings


def test_a_declared_look_alike_is_registered_with_a_warning_too(plugins) -> None:
    """Declared-only plugins load without a plugin context: the warning is on their record all the same."""
    declared = "name: {id}\ntools:\n  - {{name: {tool}, toolset: {id}, description: d, handler: .m:f}}\n"
    plugins.folder("first", manifest=declared.format(id="first", tool="read_file"))
    plugins.folder("second", manifest=declared.format(id="second", tool="Read.Fi1e"))
    runtime = plugins.runtime()
    runtime.load_plugins()
    second = next(record for record in runtime.plugins if record.id == "second")
    assert second.state == "declared" and second.tools == ["Read.Fi1e"]
    assert [w for w in second.warnings if "looks like tool 'read_file' of plugin 'first'" in w], second.warnings


def test_a_check_that_answers_with_text_is_available_and_doctor_shows_the_note(plugins) -> None:
    import json

    from click.testing import CliRunner

    from hermes_core.cli import cli

    plugins.folder("noted", init="def register(ctx):\n"
                   "    ctx.register_tool('noted_tool', 'n', {'description': 'd'}, lambda a, **k: 'ok',\n"
                   "                      check_fn=lambda: 'runs in a PID namespace')\n")
    result = CliRunner().invoke(cli, ["plugins", "doctor", "--json"])
    row = next(row for row in json.loads(result.output)["plugins"] if row["id"] == "noted")
    assert "tool noted_tool: runs in a PID namespace" in row["notes"]
    assert not [p for p in row["problems"] if "noted_tool" in p]
