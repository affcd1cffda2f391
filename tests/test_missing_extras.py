"""A command that needs an optional extra says which one, in one line with the install command, never with a
traceback; MCP servers that cannot start for want of the SDK are ``sdk-missing``, not ``disabled``.

The packages are hidden from the child process (``sys.modules[name] = None`` makes importing them fail as an
absent package does): the test environment has every extra installed, and uninstalling them would break the
other tests that share it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hermes_core.authoring.testing import scaled_timeout

HIDING = ("import sys\nfor name in {hidden!r}: sys.modules[name] = None\n"
          "from hermes_core.cli import main\nmain({argv!r})\n")


def hermes_without(hidden: list[str], *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", HIDING.format(hidden=hidden, argv=list(argv))], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, cwd=cwd, env=os.environ.copy(),
                          timeout=scaled_timeout(60))


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    return line


@pytest.mark.parametrize("command, extra", [
    (["mcp", "serve"], "mcp"),
    (["mcp", "serve", "--transport", "http"], "mcp"),
])
def test_mcp_serve_without_the_sdk_names_the_extra(tmp_path, command, extra):
    line = one_line_error(hermes_without(["mcp"], *command, "--workspace", str(tmp_path)))

    assert f"`hermes mcp serve` needs the {extra!r} extra" in line
    assert line.endswith(f"pip install 'hermes-tools[{extra}]'")


def test_plugins_new_without_cookiecutter_names_the_scaffold_extra(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    line = one_line_error(hermes_without(["cookiecutter"], "plugins", "new", "weather", "--no-input", cwd=out))

    assert line.endswith("pip install 'hermes-tools[scaffold]'") and "plugins new" in line
    assert list(out.iterdir()) == []


def test_an_mcp_server_without_the_sdk_is_sdk_missing_not_disabled(isolated_home):
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {
        "git": {"command": sys.executable, "args": ["-c", "pass"]},
        "off": {"command": sys.executable, "enabled": False}}}))

    result = hermes_without(["mcp"], "mcp", "list", "--json")

    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["git"]["state"] == "sdk-missing" and "pip install 'hermes-tools[mcp]'" in rows["git"]["last_error"]
    assert rows["off"]["state"] == "disabled"
    table = hermes_without(["mcp"], "mcp", "list")
    assert "sdk-missing" in table.stdout and "Traceback" not in table.stderr
