"""A hostile MCP server: one malformed tool definition rejects only that tool (named, with the reason, in
``hermes mcp list``), and control characters, escape sequences and bidi overrides it sends in names,
descriptions and results never reach the terminal raw (text output replaces them, JSON output escapes them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hermes_core import Runtime
from hermes_core.authoring.testing import scaled_timeout

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py
TIMEOUT = 120 * float(os.environ.get("HERMES_TEST_TIMEOUT_SCALE", "1"))
RAW = ("\x1b", "\x00", "\x07", "\r", "\u202e")


@pytest.fixture
def hostile_home(isolated_home: Path) -> Path:
    servers = {"fault": {**support.fault_server("--hostile"), "connect_timeout": 30}}
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": servers, "mcp": {
        "list_timeout": scaled_timeout(60)}}))  # a new server's first start, however loaded the machine
    return isolated_home


def hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes_core.cli", *args], text=True, capture_output=True,
                          timeout=TIMEOUT, env={**os.environ, "HERMES_HOME": str(home), "COLUMNS": "200"})


def test_a_malformed_tool_rejects_only_itself(hostile_home: Path) -> None:
    runtime = Runtime(home=hostile_home)
    try:
        runtime.start_mcp()
        status = support.server_status(runtime, "fault")
        assert status.state == "ready", status
        assert "malformed tool definition" in status.skipped["bad_schema"]
        assert "inputSchema.type" in status.skipped["array_schema"]
        names = runtime.registry.names()
        assert "mcp__fault__echo" in names and not any("schema" in name for name in names)
    finally:
        runtime.close()


def test_mcp_list_names_the_rejected_tools_and_prints_nothing_raw(hostile_home: Path) -> None:
    text = hermes(hostile_home, "mcp", "list")
    assert text.returncode == 0, text.stderr
    assert "skipped bad_schema: malformed tool definition" in text.stdout
    assert "skipped array_schema" in text.stdout
    assert not any(char in text.stdout + text.stderr for char in RAW), repr(text.stdout)

    listed = hermes(hostile_home, "mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert not any(char in listed.stdout for char in RAW), repr(listed.stdout)
    assert "bad_schema" in json.loads(listed.stdout)[0]["skipped"]


def test_names_descriptions_and_results_from_a_server_are_printed_inert(hostile_home: Path) -> None:
    assert hermes(hostile_home, "mcp", "list").returncode == 0  # connects, and caches the listing tools list reads
    tools = hermes(hostile_home, "tools", "list", "--json")
    assert tools.returncode == 0, tools.stderr
    assert not any(char in tools.stdout for char in RAW), repr(tools.stdout)
    spoof = next(row["name"] for row in json.loads(tools.stdout) if row["name"].startswith("mcp__fault__spoof"))
    shown = hermes(hostile_home, "tools", "show", spoof)
    assert shown.returncode == 0, shown.stderr
    assert "\\x1b]0;pwned\\x07" in shown.stdout or "\\u001b]0;pwned" in shown.stdout
    assert not any(char in shown.stdout for char in RAW), repr(shown.stdout)

    called = hermes(hostile_home, "tools", "call", spoof, "{}")
    assert called.returncode == 0, called.stderr
    assert "\\x1b]0;pwned\\x07" in called.stdout and "screen clear" in called.stdout
    assert not any(char in called.stdout for char in RAW), repr(called.stdout)
    table = hermes(hostile_home, "tools", "list")
    assert not any(char in table.stdout for char in RAW), repr(table.stdout)
