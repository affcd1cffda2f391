"""A server never listed is connected once, within its connect_timeout, by `tools list`, `tools show`, `tools call`
of one of its tools (and `get_tool_definitions`, see test_mcp_client.py), and its listing kept; a failure is kept
too, so a dead server costs one connect_timeout, not one per command. `hermes mcp add` connects once and reports
the tools it found. Real `hermes` processes against the fault-injection MCP server of tests/fixtures/mcp."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from hermes_core.authoring.testing import scaled_timeout

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py


def hermes(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*support.hermes_command(), *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=scaled_timeout(120))


def configure(home: Path, list_timeout: float | None = None, **servers: dict) -> None:
    """``mcp_servers``; listings wait for new servers as long as a loaded machine needs, unless told."""
    (home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": servers, "mcp": {
        "list_timeout": scaled_timeout(60) if list_timeout is None else list_timeout}}))


def starts(home: Path, server: str) -> int:
    log = home / "logs" / f"mcp-{server}.log"
    return log.read_text().count("starting with") if log.exists() else 0


def test_tools_list_in_a_fresh_home_lists_a_new_servers_tools_and_keeps_the_listing(isolated_home):
    configure(isolated_home, fault=support.fault_server())

    first = hermes("tools", "list", "--json")
    assert first.returncode == 0, first.stderr
    assert "mcp__fault__echo" in {row["name"] for row in json.loads(first.stdout)}
    assert "not listed yet" not in first.stderr and starts(isolated_home, "fault") == 1

    again = hermes("tools", "list", "--json")
    assert again.stdout == first.stdout and starts(isolated_home, "fault") == 1  # from the kept listing


def test_tools_call_and_show_of_a_new_servers_tool_connect_it_first(isolated_home):
    configure(isolated_home, fault=support.fault_server())

    called = hermes("tools", "call", "mcp__fault__echo", '{"text": "hello"}')
    assert called.returncode == 0, called.stderr
    assert "hello" in called.stdout and "still connecting" not in called.stderr

    (isolated_home / "cache" / "mcp-fault.json").unlink()  # never listed again
    shown = hermes("tools", "show", "mcp__fault__echo", "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["name"] == "mcp__fault__echo"


def test_a_dead_server_never_listed_costs_one_connect_timeout_then_backs_off(isolated_home, tmp_path):
    configure(isolated_home, dead=support.fault_server("--require", str(tmp_path / "never")),
              slow={**support.fault_server("--hang-handshake"), "connect_timeout": 1})

    first = hermes("tools", "list")
    assert first.returncode == 0, first.stderr
    tried = starts(isolated_home, "dead"), starts(isolated_home, "slow")
    assert min(tried) >= 1

    again = hermes("tools", "list", "--json")
    call = hermes("tools", "call", "mcp__slow__echo", '{"text": "x"}')
    assert again.returncode == 0 and json.loads(again.stdout) == []
    assert (starts(isolated_home, "dead"), starts(isolated_home, "slow")) == tried  # no second attempt
    assert call.returncode == 1 and "failed to start" in call.stderr and "no answer to the MCP handshake" in call.stderr
    assert "still connecting" not in again.stderr + call.stderr

    listed = json.loads(hermes("mcp", "list", "--json").stdout)  # an explicit listing retries at once
    assert {row["name"]: row["state"] for row in listed} == {"dead": "unavailable", "slow": "unavailable"}
    assert starts(isolated_home, "dead") > tried[0] and starts(isolated_home, "slow") > tried[1]


def test_a_listing_waits_at_most_list_timeout_for_new_servers_and_names_them(isolated_home, tmp_path):
    """A dead and a silent server never listed: `tools list` says which it waits for, waits at most
    mcp.list_timeout (not the silent one's connect_timeout, longer than this command may take), goes on without
    them; a call of the silent one's tool waits its connect_timeout, and says why it failed."""
    configure(isolated_home, list_timeout=1,
              dead=support.fault_server("--require", str(tmp_path / "never")),
              silent={**support.fault_server("--hang-handshake"), "connect_timeout": scaled_timeout(600)})

    listed = subprocess.run([*support.hermes_command(), "tools", "list", "--json"], capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, timeout=scaled_timeout(300))
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []
    assert "waiting up to 1 s (mcp.list_timeout) for MCP servers 'dead', 'silent'" in listed.stderr
    assert "no answer yet from MCP server 'silent' within 1 s (mcp.list_timeout): listed without its tools" \
        in listed.stderr
    # both back off: the next listings do not wait again (a call of the silent one's tool does, below)
    again = hermes("tools", "list")
    assert again.returncode == 0 and "waiting" not in again.stderr

    configure(isolated_home, list_timeout=1, silent={**support.fault_server("--hang-handshake"),
                                                     "connect_timeout": 2})
    call = hermes("tools", "call", "mcp__silent__echo", '{"text": "x"}')
    assert call.returncode == 1 and "no answer to the MCP handshake" in call.stderr


def test_mcp_add_connects_once_and_reports_the_tools_it_found(isolated_home):
    server = support.fault_server()

    added = hermes("mcp", "add", "fault", "--", server["command"], *server["args"])

    assert added.returncode == 0, added.stderr
    assert "Connected: 9 tools: " in added.stdout and "mcp__fault__echo" in added.stdout
    assert (isolated_home / "cache" / "mcp-fault.json").is_file()  # the listing is kept for the next command


def test_mcp_add_of_a_server_that_fails_keeps_the_entry_and_warns(isolated_home, tmp_path):
    server = support.fault_server("--require", str(tmp_path / "never"))

    added = hermes("mcp", "add", "dead", "--", server["command"], *server["args"])

    assert added.returncode == 0, added.stderr
    assert "warning: MCP server 'dead' is unavailable" in added.stderr
    assert "dead" in yaml.safe_load((isolated_home / "config.yaml").read_text())["mcp_servers"]
