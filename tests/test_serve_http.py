"""``hermes mcp serve --transport http`` at scale: stateless mode, worker processes, health endpoints and the
graceful drain, each with a real server process and the MCP SDK's client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import anyio.to_thread
import httpx2
import pytest

support = sys.modules["hermes_serve_test_support"]  # loaded by conftest.py
scaled = support.scaled


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return support.write_home(tmp_path / "home")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


def call(url: str, tool: str, arguments: dict, token: str | None = None, times: int = 1) -> list[str]:
    """Texts of ``times`` calls of ``tool`` by one MCP SDK client session."""

    async def main() -> list[str]:
        async with AsyncExitStack() as stack:
            session = await support.client_session(stack, url, token)
            texts = []
            for _ in range(times):
                result = await session.call_tool(tool, arguments)
                assert not result.is_error, result
                texts.append(result.content[0].text)
            return texts

    return anyio.run(main)


def ended_sessions(home: Path) -> list[str]:
    marker = home / "sessions-ended"
    return marker.read_text().split() if marker.exists() else []


def test_stateless_replica_answers_with_json_and_keeps_no_session(home, workspace):
    with support.replicas(home, workspace, 1, "--stateless") as (replica,):
        assert call(replica.url, "echo", {"text": "hi"}) == ["hi"]
        request = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"text": "no session"}}}
        answer = httpx2.post(replica.url, json=request, timeout=scaled(30), headers={
            "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"})
        assert answer.headers["content-type"].startswith("application/json")
        assert "mcp-session-id" not in answer.headers
        assert answer.json()["result"]["content"][0]["text"] == "no session"


def test_health_endpoints_bypass_the_token_and_reveal_only_the_state(home, workspace):
    with support.replicas(home, workspace, 1, "--stateless", env={"HERMES_MCP_AUTH_TOKEN": "t0ken"}) as (replica,):
        for path, state in (("/healthz", "alive"), ("/readyz", "ready")):
            answer = httpx2.get(replica.base + path, timeout=scaled(10))
            assert (answer.status_code, answer.json()) == (200, {"status": state})
        assert httpx2.post(replica.base + "/readyz", timeout=scaled(10)).status_code == 405
        assert httpx2.post(replica.url, json={}, timeout=scaled(10)).status_code == 401
        assert httpx2.get(replica.base + "/readyz/../mcp", timeout=scaled(10)).status_code in (401, 404)
        assert call(replica.url, "echo", {"text": "with token"}, token="t0ken") == ["with token"]


def test_stateful_server_has_health_and_drains_too(home, workspace):
    with support.replicas(home, workspace, 1, "--drain-grace", "0.5") as (replica,):
        assert httpx2.get(replica.base + "/readyz", timeout=scaled(10)).status_code == 200
        assert call(replica.url, "echo", {"text": "stateful"}) == ["stateful"]
        replica.terminate()
        assert replica.process.wait(timeout=scaled(30)) == 0, replica.log()
    assert str(replica.process.pid) in ended_sessions(home)


def test_a_call_past_the_drain_timeout_is_cancelled_and_reported(home, workspace):
    with support.replicas(home, workspace, 1, "--stateless", "--drain-grace", "0",
                          "--drain-timeout", "1") as (replica,), anyio.from_thread.start_blocking_portal() as portal:
        slow = portal.start_task_soon(anyio.to_thread.run_sync, call, replica.url, "work", {"ms": 60_000})
        replica.wait_for("working 60000 ms")
        replica.terminate()
        assert replica.process.wait(timeout=scaled(30)) == 0, replica.log()
        with pytest.raises(Exception):  # noqa: B017 - the client sees the connection end, any way
            slow.result(timeout=scaled(30))
    assert "tool call work (request" in replica.log() and "was cancelled" in replica.log()
    assert str(replica.process.pid) in ended_sessions(home)


def test_workers_serve_and_a_killed_worker_is_restarted(home, workspace):
    with support.replicas(home, workspace, 1, "--stateless", "--workers", "2", "--drain-grace", "0") as (server,):
        assert server.wait_for(r"listening on .* \(2 workers\)")
        first_pids = set(server.wait_for(r"2 workers \((\d+), (\d+)\)").groups())
        served = {text.rsplit(" ", 1)[1] for text in call(server.url, "work", {"ms": 1}, times=10)}
        assert served <= first_pids
        victim = served.pop()
        subprocess.run(["kill", "-KILL", victim], check=True)
        restarted = server.wait_for(rf"worker {victim} died \(exit code -9\); restarted as worker (\d+)").group(1)
        assert restarted not in first_pids
        server.wait_for(rf"worker {restarted} serves")  # it loaded the plugins itself
        texts = call(server.url, "echo", {"text": "after the restart"}, times=20)
        assert set(texts) == {"after the restart"}
        server.terminate()
        assert server.process.wait(timeout=scaled(60)) == 0, server.log()
    assert "workers exited with [0, 0]" in server.log()
    assert restarted in ended_sessions(home) and victim not in ended_sessions(home)


@pytest.mark.parametrize("options", [("--workers", "2"), ("--transport", "stdio", "--stateless")])
def test_workers_without_stateless_are_refused_in_one_line(home, workspace, options):
    command = [*support.hermes_command(), "mcp", "serve", "--transport", "http", "--port", "0",
               "--workspace", str(workspace), *options]
    result = subprocess.run(command, capture_output=True, text=True, timeout=scaled(60),
                            env={**os.environ, "HERMES_HOME": str(home)})
    assert result.returncode == 1
    error = result.stderr.strip()
    assert len(error.splitlines()) == 1
    assert ("needs --stateless" in error) if "--workers" in options else ("--transport http" in error)


def closed_within(connection: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``connection`` within ``seconds`` (what it sends first is read and dropped)."""
    connection.settimeout(seconds)
    try:
        while connection.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


def test_a_body_sent_a_byte_a_second_is_cut_off(home, workspace):
    headers = (b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n")
    with support.replicas(home, workspace, 1, "--stateless", "--body-timeout", "2") as (replica,):
        host, port = replica.address.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=scaled(30)) as slow:
            slow.sendall(headers)
            sent, closed = 0, False
            deadline = time.monotonic() + scaled(120)
            while not closed and sent < 1000 and time.monotonic() < deadline:
                try:
                    slow.sendall(b" ")
                    sent += 1
                    slow.settimeout(1.0)  # a byte a second
                    closed = slow.recv(65536) == b""
                except TimeoutError:
                    continue
                except OSError:  # reset, or a broken pipe on the next byte
                    closed = True
        assert closed and sent < 1000  # cut off long before the body could end
        assert httpx2.get(replica.base + "/healthz", timeout=scaled(10)).status_code == 200


def test_half_sent_requests_and_idle_connections_are_closed(home, workspace):
    with support.replicas(home, workspace, 1, "--stateless", "--header-timeout", "1") as (replica,):
        host, port = replica.address.rsplit(":", 1)
        half_sent = []
        for _ in range(300):
            connection = socket.create_connection((host, int(port)), timeout=scaled(30))
            connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # the headers never end
            half_sent.append(connection)
        try:
            assert all(closed_within(connection, scaled(30)) for connection in half_sent)
        finally:
            for connection in half_sent:
                connection.close()
        with socket.create_connection((host, int(port)), timeout=scaled(30)) as kept_alive:
            kept_alive.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert b"200 OK" in kept_alive.recv(65536)
            kept_alive.sendall(b"GET /healthz HTTP/1.1\r\n")  # the next request, half-sent
            assert closed_within(kept_alive, scaled(30))
        with socket.create_connection((host, int(port)), timeout=scaled(30)) as idle:
            idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert b"200 OK" in idle.recv(65536)
            assert closed_within(idle, scaled(30))  # kept alive 5 s, then closed
        assert httpx2.get(replica.base + "/healthz", timeout=scaled(10)).status_code == 200
