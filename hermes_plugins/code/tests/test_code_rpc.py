"""The tool-call server: JSON lines over a Unix domain socket, with a stand-in dispatcher."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_code.rpc import ToolCallServer


def echo(name: str, args: dict[str, Any]) -> str:
    return json.dumps({"tool": name, "args": args})


@pytest.fixture
def socket_path(tmp_path: Path) -> str:
    return str(tmp_path / "tools.sock")


def exchange(path: str, *lines: bytes) -> list[dict[str, Any]]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        stream = sock.makefile("rwb")
        replies = []
        for line in lines:
            stream.write(line + b"\n")
            stream.flush()
            replies.append(json.loads(stream.readline()))
        return replies


def request(tool: str, **args: Any) -> bytes:
    return json.dumps({"tool": tool, "args": args}).encode()


def test_a_call_is_answered_with_the_dispatchers_result_string(socket_path):
    with ToolCallServer(socket_path, echo, ["read_file"], max_calls=5) as server:
        [reply] = exchange(socket_path, request("read_file", path="a.txt"))
    assert json.loads(reply["result"]) == {"tool": "read_file", "args": {"path": "a.txt"}}
    assert server.tool_calls == 1


def test_a_tool_outside_the_allowed_set_is_refused_and_not_counted(socket_path):
    with ToolCallServer(socket_path, echo, ["read_file"], max_calls=5) as server:
        [reply] = exchange(socket_path, request("execute_code", code="1"))
    assert reply == {"error": "tool 'execute_code' is not available to execute_code (available: read_file)"}
    assert server.tool_calls == 0


def test_calls_beyond_the_limit_are_refused(socket_path):
    with ToolCallServer(socket_path, echo, ["t"], max_calls=2) as server:
        replies = exchange(socket_path, request("t"), request("t"), request("t"))
    assert [("result" in reply) for reply in replies] == [True, True, False]
    assert replies[2]["error"] == "tool call limit reached: execute_code allows 2 per run"
    assert server.tool_calls == 2


@pytest.mark.parametrize("line", [b"not json", b'["t"]', b'{"args": {}}', b'{"tool": "t", "args": [1]}'])
def test_malformed_requests_get_an_error_and_the_connection_stays_usable(socket_path, line):
    with ToolCallServer(socket_path, echo, ["t"], max_calls=5):
        bad, good = exchange(socket_path, line, request("t"))
    assert bad["error"].startswith("bad request")
    assert "result" in good


def test_a_failing_dispatcher_becomes_an_error_result(socket_path):
    def broken(name: str, args: dict[str, Any]) -> str:
        raise OSError("disk on fire")

    with ToolCallServer(socket_path, broken, ["t"], max_calls=5):
        [reply] = exchange(socket_path, request("t"))
    assert json.loads(reply["result"]) == {"error": "t failed: OSError: disk on fire"}
