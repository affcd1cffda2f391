"""``hermes mcp serve``: the MCP SDK's client, the MCP Inspector and Hermes itself use the served tools."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from hermes_core import Runtime
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.mcp.server import is_error_result

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py
WAIT = scaled_timeout(30.0)  # the longest a test waits for something before it fails
SERVED = {"add", "boom", "guarded", "grow", "shrink", "shout", "where", "names"}
HTTP_URL = r"listening on (http://\S+)"


@pytest.fixture
def server_home(tmp_path: Path) -> Path:
    """The HERMES_HOME of the served process: a user plugin with tools and a pre_tool_call hook."""
    home = tmp_path / "server-home"
    support.write_demo_plugin(home)
    # just the demo plugin, whatever else the test environment has installed
    (home / "config.yaml").write_text("plugins:\n  enabled: [demo]\n")
    return home


@pytest.fixture(scope="session")
def external(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return support.external_servers(tmp_path_factory)


def serve_command(*options: str) -> list[str]:
    return [*support.hermes_command(), "mcp", "serve", *options]


def run(main: Callable[[], Any]) -> Any:
    return anyio.run(main)


async def stdio_session(stack: AsyncExitStack, home: Path, *options: str, inbox: Any = None,
                        cwd: str | Path | None = None) -> Any:
    """An initialized SDK ``ClientSession`` on ``hermes mcp serve`` over stdio."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = serve_command(*options)
    params = StdioServerParameters(command=command[0], args=command[1:], env={"HERMES_HOME": str(home)}, cwd=cwd)
    errlog = stack.enter_context(open(home / "serve-stderr.log", "a"))  # noqa: SIM115
    read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    session = await stack.enter_async_context(ClientSession(read, write, message_handler=inbox))
    await session.initialize()
    return session


class _Inbox:
    """Collects a session's list_changed notifications."""

    def __init__(self) -> None:
        self.changes = 0
        self.event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        import mcp.types as types

        if isinstance(message, types.ToolListChangedNotification):
            self.changes += 1
            self.event.set()

    async def next_change(self) -> None:
        with anyio.fail_after(WAIT):
            await self.event.wait()
        self.event = anyio.Event()


def texts(result: Any) -> str:
    return "".join(block.text for block in result.content)


# -- the MCP SDK's client ---------------------------------------------------------------------


def test_is_error_result_recognises_hermes_error_json():
    assert is_error_result('{"error": "Tool \'x\' failed"}')
    assert not is_error_result('{"error": null, "value": 1}')
    assert not is_error_result('{"result": "fine"}')
    assert not is_error_result("plain text with \"error\" in it")


def test_sdk_client_lists_the_tools_with_their_schemas_and_calls_them_through_hooks(server_home):
    async def main() -> None:
        async with AsyncExitStack() as stack:
            session = await stdio_session(stack, server_home)
            assert session.server_capabilities.tools.list_changed is True
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert set(listed) == SERVED
            assert listed["add"].input_schema == {"type": "object", "properties": {
                "a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}
            assert listed["add"].description == "Add two integers"

            added = await session.call_tool("add", {"a": 2, "b": "3"})  # coerced by handle_function_call
            assert not added.is_error and json.loads(texts(added)) == {"sum": 5}
            boom = await session.call_tool("boom", {})
            assert boom.is_error and "ValueError: boom on purpose" in texts(boom)
            guarded = await session.call_tool("guarded", {})
            assert guarded.is_error and "blocked by the demo plugin's hook" in texts(guarded)
            modified = await session.call_tool("shout", {"text": "modify me"})
            assert texts(modified) == "MODIFIED BY THE HOOK"
            missing = await session.call_tool("add", {"a": 1})
            assert missing.is_error and "missing required argument 'b'" in texts(missing)
            unknown = await session.call_tool("no_such_tool", {})
            assert unknown.is_error and "no_such_tool" in texts(unknown)

    run(main)
    stderr = (server_home / "serve-stderr.log").read_text()
    assert "the demo plugin prints to stdout when it loads" in stderr and "add prints to stdout too" in stderr


def test_sdk_client_is_told_when_the_tool_list_changes(server_home):
    async def main() -> None:
        inbox = _Inbox()
        async with AsyncExitStack() as stack:
            session = await stdio_session(stack, server_home, inbox=inbox)
            assert texts(await session.call_tool("grow", {"name": "fresh"})) == "grown"
            await inbox.next_change()
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert names == SERVED | {"fresh"}
            assert texts(await session.call_tool("fresh", {})) == "fresh ran"
            await session.call_tool("shrink", {"name": "fresh"})
            await inbox.next_change()
            assert {tool.name for tool in (await session.list_tools()).tools} == SERVED

    run(main)


PLUGIN_TOOL = """
import os


def register(ctx):
    ctx.register_tool(name="{tool}", toolset="{tool}", schema={{"name": "{tool}", "parameters": {{}}}},
                      handler=lambda args, **kw: {answer})
"""


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP on this platform")
def test_sighup_reloads_the_plugins_and_tells_the_client(server_home):
    """A plugin folder added while ``hermes mcp serve`` runs is loaded on SIGHUP; the client hears
    ``notifications/tools/list_changed`` and lists and calls the new tool."""
    plugins = server_home / "plugins"
    (plugins / "pidof").mkdir(parents=True)
    (plugins / "pidof" / "__init__.py").write_text(PLUGIN_TOOL.format(tool="server_pid", answer="str(os.getpid())"))
    (server_home / "config.yaml").write_text("plugins:\n  enabled: [demo, pidof]\n")

    async def main() -> None:
        inbox = _Inbox()
        async with AsyncExitStack() as stack:
            session = await stdio_session(stack, server_home, inbox=inbox)
            assert {tool.name for tool in (await session.list_tools()).tools} == SERVED | {"server_pid"}
            pid = int(texts(await session.call_tool("server_pid", {})))
            (plugins / "arriving").mkdir()
            (plugins / "arriving" / "__init__.py").write_text(PLUGIN_TOOL.format(tool="arriving", answer='"hello"'))
            (server_home / "config.yaml").write_text("plugins:\n  enabled: [demo, pidof, arriving]\n")
            os.kill(pid, signal.SIGHUP)
            await inbox.next_change()
            assert {tool.name for tool in (await session.list_tools()).tools} == SERVED | {"server_pid", "arriving"}
            assert texts(await session.call_tool("arriving", {})) == "hello"
            assert int(texts(await session.call_tool("server_pid", {}))) == pid  # the same process, still serving

    run(main)
    assert "SIGHUP: plugins reloaded (loaded arriving)" in (server_home / "serve-stderr.log").read_text()


def test_toolsets_option_limits_what_is_served(server_home):
    async def main() -> None:
        async with AsyncExitStack() as stack:
            session = await stdio_session(stack, server_home, "--toolsets", "loud")
            assert [tool.name for tool in (await session.list_tools()).tools] == ["shout"]
            refused = await session.call_tool("add", {"a": 1, "b": 2})
            assert refused.is_error and "not enabled" in texts(refused)

    run(main)


def test_unknown_toolset_is_a_one_line_error(server_home):
    result = subprocess.run(serve_command("--toolsets", "nosuch"), capture_output=True, text=True,
                            timeout=scaled_timeout(60),
                            stdin=subprocess.DEVNULL, env={**os.environ, "HERMES_HOME": str(server_home)})
    assert result.returncode == 1 and "unknown toolset 'nosuch'" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


class RawStdio:
    """``hermes mcp serve`` over stdio, spoken to one line at a time; every line it writes is kept in ``seen``."""

    def __init__(self, home: Path, stderr: int = subprocess.PIPE) -> None:
        self.process = subprocess.Popen(serve_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                        env={**os.environ, "HERMES_HOME": str(home)})
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.seen: list[bytes] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict | bytes) -> None:
        """Write ``message``: a JSON-RPC message (``jsonrpc`` added, a newline after it) or raw bytes."""
        assert self.process.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def answer(self, ident: int) -> dict:
        """The server's answer to request ``ident``."""
        while (line := self.lines.get(timeout=WAIT)) is not None:
            self.seen.append(line)
            message = json.loads(line)
            if message.get("id") == ident:
                return message
        raise AssertionError("the server closed stdout")

    def initialize(self) -> dict:
        self.send({"id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
        answer = self.answer(1)
        self.send({"method": "notifications/initialized"})
        return answer

    def close(self) -> None:
        """Close its stdin, wait for it to exit, and keep the rest of what it wrote."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=WAIT)
        while (line := self.lines.get(timeout=WAIT)) is not None:
            self.seen.append(line)


def test_stdout_carries_nothing_but_protocol_even_when_plugins_print(server_home):
    server = RawStdio(server_home)
    try:
        assert server.initialize()["result"]["serverInfo"]["name"] == "hermes"
        server.send({"id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 20, "b": 22}}})
        assert server.answer(2)["result"]["content"][0]["text"] == '{"sum": 42}'
    finally:
        server.close()
    assert server.process.stderr is not None
    stderr = server.process.stderr.read().decode()
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in server.seen)
    assert "the demo plugin prints to stdout when it loads" in stderr and "add prints to stdout too" in stderr


def peak_memory(pid: int) -> int:
    """The peak resident memory of process ``pid``, in bytes (Linux's VmHWM)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) * 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the server's peak memory from /proc")
def test_a_line_over_the_cap_is_refused_while_it_is_read_and_the_server_goes_on(server_home):
    from hermes_core.mcp.stdio import MAX_LINE_BYTES

    server = RawStdio(server_home, stderr=subprocess.DEVNULL)
    try:
        server.initialize()
        before = peak_memory(server.process.pid)
        server.send(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", '
                    b'"arguments": {"a": "')
        chunk = b"1" * (1024 * 1024)
        for _ in range(200):  # a 200 MB line
            server.send(chunk)
        server.send(b'", "b": 1}}}\n')
        refused = server.answer(2)
        assert refused["error"]["code"] == -32600 and "MiB a message may have" in refused["error"]["message"]
        server.send({"id": 3, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 20, "b": 22}}})
        assert server.answer(3)["result"]["content"][0]["text"] == '{"sum": 42}'
        grown = peak_memory(server.process.pid) - before
    finally:
        server.close()
    assert grown < 2 * MAX_LINE_BYTES + 32 * 1024 * 1024, f"the server grew by {grown / 2**20:.0f} MiB"


def test_sdk_client_over_streamable_http_lists_calls_and_hears_changes(server_home):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with support.spawn_until(serve_command("--transport", "http", "--port", "0"), HTTP_URL,
                             env={"HERMES_HOME": str(server_home)}) as (_, match):
        url = match.group(1)

        async def main() -> None:
            inbox = _Inbox()
            async with streamable_http_client(url) as (read, write), \
                    ClientSession(read, write, message_handler=inbox) as session:
                await session.initialize()
                assert {tool.name for tool in (await session.list_tools()).tools} == SERVED
                assert json.loads(texts(await session.call_tool("add", {"a": 1, "b": 2}))) == {"sum": 3}
                await session.call_tool("grow", {"name": "over_http"})
                await inbox.next_change()
                assert "over_http" in {tool.name for tool in (await session.list_tools()).tools}

        run(main)


def test_2026_client_hears_changes_through_subscriptions_listen(server_home):
    from mcp import Client, StdioServerParameters
    from mcp.types.version import MODERN_PROTOCOL_VERSIONS

    command = serve_command()
    params = StdioServerParameters(command=command[0], args=command[1:], env={"HERMES_HOME": str(server_home)})

    async def main() -> None:
        async with Client(params) as client:
            assert client.protocol_version in MODERN_PROTOCOL_VERSIONS
            async with client.listen(tools_list_changed=True) as subscription:
                await client.call_tool("grow", {"name": "modern"})
                with anyio.fail_after(WAIT):
                    await subscription.__anext__()
            names = {tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools}
            assert "modern" in names

    run(main)


# -- Hermes as the client of Hermes ---------------------------------------------------------


@pytest.fixture
def hermes_client(isolated_home: Path) -> Iterator[Callable[[dict], Runtime]]:
    runtimes: list[Runtime] = []

    def start(server: dict) -> Runtime:
        (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"peer": server}}))
        runtime = Runtime(home=isolated_home)
        runtimes.append(runtime)
        runtime.load_plugins()
        runtime.start_mcp()  # loading lists from the cache; connect now
        return runtime

    yield start
    for runtime in runtimes:
        runtime.close()


def _round_trip(runtime: Runtime) -> None:
    status = support.server_status(runtime, "peer")
    assert status.state == "ready", status.last_error
    assert set(support.registered_names(runtime, "peer").values()) == SERVED
    assert runtime.handle_function_call("mcp__peer__add", {"a": 2, "b": 3}) == '{"sum": 5}'
    error = json.loads(runtime.handle_function_call("mcp__peer__boom", {}))["error"]
    assert "Tool 'boom' failed: ValueError: boom on purpose" in error and "mcp__peer__boom" in error
    assert runtime.handle_function_call("mcp__peer__grow", {"name": "fresh"}) == "grown"
    assert runtime.mcp.wait_for(lambda: "mcp__peer__fresh" in runtime.registry, WAIT)
    assert runtime.handle_function_call("mcp__peer__fresh", {}) == "fresh ran"
    runtime.handle_function_call("mcp__peer__shrink", {"name": "fresh"})
    assert runtime.mcp.wait_for(lambda: "mcp__peer__fresh" not in runtime.registry, WAIT)


def test_hermes_round_trips_through_hermes_mcp_serve_over_stdio(hermes_client, server_home):
    command = serve_command()
    _round_trip(hermes_client({"command": command[0], "args": command[1:], "env": {"HERMES_HOME": str(server_home)}}))


def test_hermes_round_trips_through_hermes_mcp_serve_over_http(hermes_client, server_home):
    with support.spawn_until(serve_command("--transport", "http", "--port", "0"), HTTP_URL,
                             env={"HERMES_HOME": str(server_home)}) as (_, match):
        _round_trip(hermes_client({"url": match.group(1)}))


# -- the official MCP Inspector -------------------------------------------------------------


def inspector(external: Any, *arguments: str) -> dict:
    result = subprocess.run([external.node, external.inspector, "--cli", *arguments], capture_output=True,
                            text=True, timeout=scaled_timeout(120), stdin=subprocess.DEVNULL)
    assert result.stdout.strip(), f"the Inspector printed nothing (exit {result.returncode}): {result.stderr}"
    return json.loads(result.stdout)


@pytest.mark.network
def test_mcp_inspector_cli_lists_and_calls_tools_over_stdio(external, server_home):
    target = ["-e", f"HERMES_HOME={server_home}", *serve_command()]
    listed = inspector(external, *target, "--method", "tools/list")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert set(tools) == SERVED and tools["add"]["inputSchema"]["required"] == ["a", "b"]
    added = inspector(external, *target, "--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=2", "b=3")
    assert added["isError"] is False and json.loads(added["content"][0]["text"]) == {"sum": 5}
    boom = inspector(external, *target, "--method", "tools/call", "--tool-name", "boom")
    assert boom["isError"] is True and "boom on purpose" in boom["content"][0]["text"]


@pytest.mark.network
def test_mcp_inspector_cli_lists_and_calls_tools_over_http(external, server_home):
    with support.spawn_until(serve_command("--transport", "http", "--port", "0"), HTTP_URL,
                             env={"HERMES_HOME": str(server_home)}) as (_, match):
        target = [match.group(1), "--transport", "http"]
        assert {tool["name"] for tool in inspector(external, *target, "--method", "tools/list")["tools"]} == SERVED
        shouted = inspector(external, *target, "--method", "tools/call", "--tool-name", "shout", "--tool-arg",
                            "text=hello")
        assert shouted["content"][0]["text"] == "HELLO"


# -- serving safely ----------------------------------------------------------------------------------------


def serve_once(home: Path, *options: str, cwd: Path | str | None = None, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(serve_command(*options), capture_output=True, text=True, timeout=scaled_timeout(60), cwd=cwd,
                          stdin=subprocess.DEVNULL, env={**os.environ, "HERMES_HOME": str(home), **env})


def test_serving_from_the_root_or_the_home_folder_needs_a_named_workspace(server_home, tmp_path):
    environ = {k: v for k, v in os.environ.items() if k != "HERMES_WORKSPACE"}
    for folder, home in (("/", str(tmp_path)), (str(tmp_path), str(tmp_path))):
        result = subprocess.run(serve_command(), capture_output=True, text=True, timeout=scaled_timeout(60), cwd=folder,
                                stdin=subprocess.DEVNULL, env={**environ, "HERMES_HOME": str(server_home),
                                                               "HOME": home})
        assert result.returncode == 1
        assert "refusing to serve with the workspace" in result.stderr and "--workspace DIR" in result.stderr

    project = tmp_path / "project"
    project.mkdir()

    async def main() -> None:
        async with AsyncExitStack() as stack:
            session = await stdio_session(stack, server_home, "--workspace", str(project), cwd="/")
            assert texts(await session.call_tool("where", {})) == str(project)

    run(main)


def test_a_file_name_that_is_not_utf8_comes_back_as_text(server_home, tmp_path):
    folder = tmp_path / "checkout"
    folder.mkdir()
    (Path(os.fsdecode(bytes(folder) + b"/bad\xffname.txt"))).write_text("x")
    (folder / "good.txt").write_text("x")

    async def main() -> None:
        async with AsyncExitStack() as stack:
            session = await stdio_session(stack, server_home)
            listed = await session.call_tool("names", {"folder": str(folder)})
            assert not listed.is_error and json.loads(texts(listed)) == ["bad\ufffdname.txt", "good.txt"]
            assert json.loads(texts(await session.call_tool("add", {"a": 1, "b": 1}))) == {"sum": 2}

    run(main)


def test_deploy_docs_python_client_with_a_bearer_token_lists_the_tools(server_home):
    """docs/deploy.md's Python client, run as written against a stateless server that needs a token (its URL
    pointed at this one)."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "deploy.md").read_text()
    [snippet] = [block for block in page.split("```python\n")[1:] if "Bearer" in block]
    snippet = snippet.split("```")[0]
    env = {"HERMES_HOME": str(server_home), "HERMES_MCP_AUTH_TOKEN": "s3cret"}
    with support.spawn_until(serve_command("--transport", "http", "--stateless", "--port", "0"), HTTP_URL,
                             env=env) as (_, match):
        assert 'URL = "http://nginx-host:8080/mcp"' in snippet
        code = snippet.replace("http://nginx-host:8080/mcp", match.group(1))
        client = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT,
                                env={**os.environ, **env})
        assert client.returncode == 0, client.stderr
        assert eval(client.stdout) == sorted(SERVED)  # the printed list of names
        wrong = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT,
                               env={**os.environ, **env, "HERMES_MCP_AUTH_TOKEN": "wrong"})
        assert wrong.returncode != 0 and wrong.stdout == ""  # refused: no tool listed


def test_http_on_an_address_that_is_not_loopback_needs_a_token(server_home):
    result = serve_once(server_home, "--transport", "http", "--host", "0.0.0.0", "--port", "0")
    assert result.returncode == 1
    assert "needs a bearer token" in result.stderr and "--auth-token" in result.stderr


def test_with_a_token_every_http_request_must_carry_it(server_home):
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with support.spawn_until(serve_command("--transport", "http", "--port", "0"), HTTP_URL,
                             env={"HERMES_HOME": str(server_home), "HERMES_MCP_AUTH_TOKEN": "s3cret"}) as (_, match):
        url = match.group(1)
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        headers = {"Accept": "application/json, text/event-stream"}
        for given in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}):
            answer = httpx2.post(url, json=request, headers={**headers, **given}, timeout=WAIT)
            assert answer.status_code == 401 and "Bearer" in answer.headers["www-authenticate"]

        async def main() -> None:
            async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}, timeout=WAIT) as client, \
                    streamable_http_client(url, http_client=client) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                assert json.loads(texts(await session.call_tool("add", {"a": 2, "b": 2}))) == {"sum": 4}

        run(main)
