"""MCP configuration users can paste: other clients' entries in ``mcp_servers`` (and Claude's ``mcpServers`` key),
``hermes mcp add|remove|import|install-claude`` editing the files with their comments kept, and the names
``hermes mcp serve`` gives the tools of the servers Hermes is itself a client of."""

from __future__ import annotations

import json
import sys
import textwrap
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from click.testing import CliRunner

from hermes_core import ConfigError, Runtime
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.cli import cli
from hermes_core.config.model import load_config
from hermes_core.mcp.interop import claude_desktop_config

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py
WAIT = scaled_timeout(30.0)

#: Entries as the products document them: Claude Desktop, Claude Code (.mcp.json) and VS Code (.vscode/mcp.json).
CLAUDE_DESKTOP = {"mcpServers": {"filesystem": {
    "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]}}}
CLAUDE_CODE = {"mcpServers": {
    "my-tool": {"type": "stdio", "command": "node", "args": ["./server.js"], "env": {"DEBUG": "${DEBUG:-false}"}},
    "remote-api": {"type": "sse", "url": "https://api.example.com/mcp/sse",
                   "headers": {"Authorization": "Bearer ${API_TOKEN}"}},
    "http-service": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"X-API-Key": "${API_KEY}"}},
}}
VS_CODE = {
    "inputs": [{"type": "promptString", "id": "api-key", "description": "API key", "password": True}],
    "servers": {
        "memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
                   "envFile": "${workspaceFolder}/.env"},
        "docs": {"type": "http", "url": "https://example.com/mcp", "headers": {"Key": "${input:api-key}"}},
        "local": {"command": "python", "args": ["${workspaceFolder}/server.py"], "env": {"HOME_DIR": "${env:HOME}"}},
    },
}


def hermes(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def config_text(home: Path) -> str:
    return (home / "config.yaml").read_text()


async def stdio_session(stack: AsyncExitStack, command: list[str], env: dict[str, str], logs: Path,
                        cwd: str | None = None) -> Any:
    """An initialized MCP SDK client session on the stdio server ``command`` starts."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=cwd)
    errlog = stack.enter_context(open(logs / "stderr.log", "w"))  # noqa: SIM115 - closed by the stack
    read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    session = await stack.enter_async_context(ClientSession(read, write))
    with anyio.fail_after(WAIT):
        await session.initialize()
    return session


# -- entries as they are ------------------------------------------------------------------------


@pytest.mark.parametrize("document", [CLAUDE_DESKTOP, CLAUDE_CODE], ids=["claude-desktop", "claude-code"])
def test_claude_entries_pasted_under_mcp_servers_are_valid_as_they_are(isolated_home: Path, document: dict):
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": document["mcpServers"]}))

    servers = load_config(isolated_home / "config.yaml").mcp_servers

    assert set(servers) == set(document["mcpServers"])
    transports = {name: server.transport for name, server in servers.items()}
    assert transports == {name: entry.get("type", "stdio") for name, entry in document["mcpServers"].items()}


def test_claudes_mcpservers_key_is_read_as_mcp_servers(isolated_home: Path):
    config = isolated_home / "config.yaml"
    config.write_text(json.dumps(CLAUDE_CODE, indent=2))  # JSON is YAML: Claude Code's file as it is

    assert sorted(load_config(config).mcp_servers) == ["http-service", "my-tool", "remote-api"]
    config.write_text(yaml.safe_dump({"plugins": {"disabled": []}, "mcpServers": CLAUDE_CODE["mcpServers"],
                                      "mcp_servers": {"own": {"command": "own-server"}}}))
    servers = load_config(config).mcp_servers
    assert sorted(servers) == ["http-service", "my-tool", "own", "remote-api"]
    assert servers["remote-api"].headers == {"Authorization": "Bearer ${API_TOKEN}"}


def test_a_server_under_both_keys_is_an_error_naming_it(isolated_home: Path):
    (isolated_home / "config.yaml").write_text("mcp_servers:\n  a: {command: x}\nmcpServers:\n  a: {command: y}\n")

    with pytest.raises(ConfigError, match="MCP server 'a' is configured under both mcp_servers and mcpServers"):
        load_config(isolated_home / "config.yaml")


def test_an_unknown_type_is_an_error_naming_the_line(isolated_home: Path):
    (isolated_home / "config.yaml").write_text("mcp_servers:\n  a:\n    type: websocket\n    url: ws://x\n")

    with pytest.raises(ConfigError, match=r"config.yaml:3: mcp_servers.a.type: Input should be 'stdio', 'http'"):
        load_config(isolated_home / "config.yaml")


@pytest.mark.parametrize(("entry", "problem"), [
    ({"type": "stdio", "url": "http://127.0.0.1:9/mcp"}, "type 'stdio' needs a 'command'"),
    ({"type": "sse", "command": "server"}, "type 'sse' needs a 'url'"),
    ({"type": "http"}, "type 'http' needs a 'url'"),
])
def test_a_type_that_contradicts_the_entry_leaves_the_server_unavailable_with_the_reason(isolated_home: Path,
                                                                                         entry: dict, problem: str):
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"odd": entry}}))
    runtime = Runtime(home=isolated_home, entry_points=())
    try:
        [status] = runtime.start_mcp().status()
    finally:
        runtime.close()

    assert status.state == "unavailable" and problem in (status.last_error or "")


def test_environment_references_in_each_products_spelling(monkeypatch: pytest.MonkeyPatch):
    from hermes_core.mcp.session import expand_env

    monkeypatch.setenv("SET", "value")
    monkeypatch.delenv("UNSET", raising=False)

    assert expand_env("${SET} ${env:SET} ${UNSET:-fallback} ${SET:-unused} [${UNSET}]") == \
        "value value fallback value []"


def test_a_pasted_claude_desktop_entry_connects_over_stdio(isolated_home: Path):
    server = support.fault_server()
    (isolated_home / "config.yaml").write_text(json.dumps({"mcpServers": {"faulty": {
        "command": server["command"], "args": server["args"], "env": {"SHOWN": "${HOME_VALUE:-from-default}"}}}}))
    runtime = Runtime(home=isolated_home, entry_points=())
    try:
        runtime.load_plugins()
        runtime.start_mcp()

        assert runtime.handle_function_call("mcp__faulty__echo", {"text": "hi"}) == "hi"
        assert runtime.handle_function_call("mcp__faulty__env", {"name": "SHOWN"}) == "from-default"
    finally:
        runtime.close()


@pytest.fixture(scope="session")
def external(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return support.external_servers(tmp_path_factory)


@pytest.mark.network
def test_an_sse_server_is_reached_with_type_sse(isolated_home: Path, external):
    port = support.free_port()
    command = [external.node, external.everything, "sse"]
    with support.spawn_until(command, r"listening on port|running on", env={"PORT": str(port)}):
        (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"old": {
            "type": "sse", "url": f"http://127.0.0.1:{port}/sse", "headers": {"X-Test": "1"}}}}))
        runtime = Runtime(home=isolated_home, entry_points=())
        try:
            runtime.load_plugins()
            [status] = runtime.start_mcp().status()
            assert (status.state, status.transport) == ("ready", "sse"), status.last_error
            assert runtime.handle_function_call("mcp__old__echo", {"message": "hi"}) == "Echo: hi"
        finally:
            runtime.close()


# -- hermes mcp add / remove / import ---------------------------------------------------------------


COMMENTED = """\
# My Hermes configuration.
mcp_servers:
  # the time server, pinned
  time:
    command: uvx
    args: [mcp-server-time==1.0]   # keep this version
# plugins below
plugins:
  disabled: []   # none
"""


def test_add_a_command_and_a_url_keeping_the_files_comments(isolated_home: Path):
    (isolated_home / "config.yaml").write_text(COMMENTED)

    stdio = hermes("mcp", "add", "github", "--force", "--no-connect", "-e", "GITHUB_TOKEN=${GH_TOKEN}", "--", "npx",
                   "-y", "@modelcontextprotocol/server-github", "--flag")
    remote = hermes("mcp", "add", "docs", "--no-connect", "--url", "https://example.com/mcp", "-H",
                    "Authorization: Bearer ${T}")
    legacy = hermes("mcp", "add", "old", "--no-connect", "--url", "https://example.com/sse", "--transport", "sse")

    assert (stdio.exit_code, remote.exit_code, legacy.exit_code) == (0, 0, 0), stdio.output + remote.output
    text = config_text(isolated_home)
    for kept in ("# My Hermes configuration.", "# the time server, pinned", "# keep this version",
                 "disabled: []   # none"):
        assert kept in text
    assert text.index("old:") < text.index("# plugins below") < text.index("plugins:")  # the heading stays put
    # block style, one item a line, as a user writes it (not `github: {command: npx, args: [-y, ...]}`)
    assert "  github:\n    command: npx\n    args:\n    - -y\n" in text
    assert "    env:\n      GITHUB_TOKEN: ${GH_TOKEN}\n" in text and "{command" not in text
    servers = load_config(isolated_home / "config.yaml").mcp_servers
    assert servers["github"].command == "npx"
    assert servers["github"].args == ["-y", "@modelcontextprotocol/server-github", "--flag"]
    assert servers["github"].env == {"GITHUB_TOKEN": "${GH_TOKEN}"}
    assert (servers["docs"].transport, servers["docs"].headers) == ("http", {"Authorization": "Bearer ${T}"})
    assert servers["old"].transport == "sse"


@pytest.mark.parametrize(("args", "message"), [
    (["x"], "give either a command after `--`"),
    (["x", "--url", "http://a", "--", "cmd"], "give either a command after `--`"),
    (["bad name", "--", "cmd"], "invalid server name 'bad name'"),
    (["x", "-e", "NOVALUE", "--", "cmd"], "variable 'NOVALUE' is not KEY=VALUE"),
    (["x", "--url", "http://a", "-e", "A=b"], "--env and --cwd are for a server Hermes starts"),
    (["time", "--force", "--", "cmd"], "MCP server 'time' is already configured; `hermes mcp remove time` first"),
])
def test_add_refuses_what_it_cannot_write_in_one_line(isolated_home: Path, args: list[str], message: str):
    (isolated_home / "config.yaml").write_text(COMMENTED)

    result = hermes("mcp", "add", *args)

    assert result.exit_code == 1 and message in result.output
    assert config_text(isolated_home) == COMMENTED


def test_remove_takes_the_servers_heading_and_keeps_what_follows(isolated_home: Path):
    (isolated_home / "config.yaml").write_text(COMMENTED)
    hermes("mcp", "add", "github", "--force", "--no-connect", "--", "npx", "server-github")

    assert hermes("mcp", "remove", "time").exit_code == 0
    text = config_text(isolated_home)
    assert "time" not in text and "# the time server, pinned" not in text and "keep this version" not in text
    assert "# plugins below" in text and "github:" in text

    assert hermes("mcp", "remove", "github").exit_code == 0
    assert yaml.safe_load(config_text(isolated_home))["mcp_servers"] == {}
    assert "# plugins below\nplugins:" in config_text(isolated_home)
    missing = hermes("mcp", "remove", "github")
    assert missing.exit_code == 1 and "no MCP server 'github'" in missing.output


def test_remove_finds_a_server_under_claudes_key(isolated_home: Path):
    (isolated_home / "config.yaml").write_text(json.dumps(CLAUDE_DESKTOP))

    assert hermes("mcp", "remove", "filesystem").exit_code == 0
    assert load_config(isolated_home / "config.yaml").mcp_servers == {}


def test_import_a_claude_code_file(isolated_home: Path, tmp_path: Path):
    (isolated_home / "config.yaml").write_text(COMMENTED)
    source = tmp_path / ".mcp.json"
    source.write_text(json.dumps(CLAUDE_CODE))

    result = hermes("mcp", "import", str(source))

    assert result.exit_code == 0, result.output
    assert "Imported 3 MCP servers" in result.output
    servers = load_config(isolated_home / "config.yaml").mcp_servers
    assert sorted(servers) == ["http-service", "my-tool", "remote-api", "time"]
    assert servers["my-tool"].env == {"DEBUG": "${DEBUG:-false}"}
    assert "# keep this version" in config_text(isolated_home)
    again = hermes("mcp", "import", str(source), "--only", "my-tool")
    assert "my-tool: already configured; skipped" in again.output


def test_import_a_vs_code_file_resolving_its_variables_and_noting_what_hermes_cannot_use(isolated_home: Path,
                                                                                         tmp_path: Path):
    source = tmp_path / "project" / ".vscode" / "mcp.json"
    source.parent.mkdir(parents=True)
    source.write_text(json.dumps(VS_CODE))

    result = hermes("mcp", "import", str(source))

    assert result.exit_code == 0, result.output
    servers = load_config(isolated_home / "config.yaml").mcp_servers
    assert servers["local"].args == [f"{tmp_path / 'project'}/server.py"]  # the folder that holds .vscode/
    assert servers["local"].env == {"HOME_DIR": "${env:HOME}"}
    assert "memory: envFile" in result.output and "copy its variables into env" in result.output
    assert "docs: ${input:api-key} is a VS Code prompt Hermes cannot show" in result.output


def test_import_a_claude_desktop_file_with_disabled_and_unknown_keys(isolated_home: Path, tmp_path: Path):
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(json.dumps({"globalShortcut": "", "mcpServers": {
        "off": {"command": "x", "disabled": True, "autoApprove": ["a"]},
        "windsurf": {"serverUrl": "https://example.com/mcp"}}}))

    result = hermes("mcp", "import", str(source))

    servers = load_config(isolated_home / "config.yaml").mcp_servers
    assert servers["off"].enabled is False and servers["windsurf"].url == "https://example.com/mcp"
    assert "off: 'autoApprove' has no meaning in Hermes; dropped" in result.output


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "not a JSON file"),
    ('{"other": {}}', "no MCP servers in it"),
    ("[1, 2]", "not an MCP configuration"),
])
def test_import_refuses_a_file_that_is_not_an_mcp_configuration(tmp_path: Path, content: str, message: str):
    source = tmp_path / "mcp.json"
    source.write_text(content)

    result = hermes("mcp", "import", str(source))

    assert result.exit_code == 1 and message in result.output


# -- hermes mcp install-claude ------------------------------------------------------------------


def test_install_claude_writes_the_serve_entry_keeping_the_rest_of_the_file(isolated_home: Path, tmp_path: Path):
    config = tmp_path / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"globalShortcut": "Ctrl+Space", "mcpServers": {
        "other": {"command": "x"}, "hermes": {"command": "old", "env": {"KEEP": "1"}}}}))
    workspace = tmp_path / "workspace"
    workspace.mkdir()

    result = hermes("mcp", "install-claude", "--config-file", str(config), "--toolsets", "file,web",
                    "--workspace", str(workspace), "--force")  # no pack is installed in this test's runtime

    assert result.exit_code == 0, result.output
    assert "Updated MCP server 'hermes'" in result.output and "Restart Claude Desktop" in result.output
    document = json.loads(config.read_text())
    assert document["globalShortcut"] == "Ctrl+Space" and document["mcpServers"]["other"] == {"command": "x"}
    entry = document["mcpServers"]["hermes"]
    assert Path(entry["command"]).is_absolute()
    assert entry["args"][-6:] == ["mcp", "serve", "--workspace", str(workspace), "--toolsets", "file,web"]
    assert entry["env"] == {"KEEP": "1", "HERMES_HOME": str(isolated_home)}


def test_the_installed_entry_starts_a_working_server(isolated_home: Path, tmp_path: Path):
    config = tmp_path / "claude_desktop_config.json"
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    assert hermes("mcp", "install-claude", "--config-file", str(config), "--workspace", str(workspace)).exit_code == 0
    entry = json.loads(config.read_text())["mcpServers"]["hermes"]

    async def main() -> int:
        # as Claude Desktop starts it: the entry's command, args and env, in /
        async with AsyncExitStack() as stack:
            session = await stdio_session(stack, [entry["command"], *entry["args"]], entry["env"], tmp_path, cwd="/")
            with anyio.fail_after(WAIT):
                return len((await session.list_tools()).tools)

    assert anyio.run(main) == 0  # an empty home serves no tools, but it serves


def test_install_claude_finds_claude_desktops_folder_and_says_when_it_is_missing(
        isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    if sys.platform in ("win32", "darwin"):
        pytest.skip("the XDG location is the one of Linux and other systems")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)

    assert claude_desktop_config() == tmp_path / "xdg" / "Claude" / "claude_desktop_config.json"
    missing = hermes("mcp", "install-claude")
    assert missing.exit_code == 1 and "install Claude Desktop and start it once, or pass --config-file" in \
        missing.output
    (tmp_path / "xdg" / "Claude").mkdir(parents=True)
    assert hermes("mcp", "install-claude").exit_code == 0
    assert "hermes" in json.loads(claude_desktop_config().read_text())["mcpServers"]


def test_install_claude_refuses_a_broken_file_and_a_dangerous_workspace(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch):
    config = tmp_path / "claude_desktop_config.json"
    config.write_text("{broken")

    broken = hermes("mcp", "install-claude", "--config-file", str(config), "--workspace", str(tmp_path))
    assert broken.exit_code == 1 and "not valid JSON" in broken.output and config.read_text() == "{broken"
    monkeypatch.chdir("/")
    root = hermes("mcp", "install-claude", "--config-file", str(tmp_path / "new.json"))
    assert root.exit_code == 1 and "Pass --workspace DIR" in root.output


# -- the names of re-served MCP tools -------------------------------------------------------------


@pytest.fixture
def relay_home(tmp_path: Path) -> Path:
    """The home of a Hermes that is the client of an MCP server (``peer``) and has a plugin tool of its own."""
    home = tmp_path / "relay-home"
    (home / "plugins" / "own").mkdir(parents=True)
    (home / "plugins" / "own" / "plugin.yaml").write_text(textwrap.dedent("""
        name: own
        tools:
          - name: peer__pid
            toolset: own
            description: A plugin tool whose name is what the MCP tool would be served as.
            handler: .tools:pid
    """))
    (home / "plugins" / "own" / "__init__.py").write_text("")
    (home / "plugins" / "own" / "tools.py").write_text("def pid(args, **kwargs):\n    return 'the plugin'\n")
    (home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"peer": support.fault_server()}}))
    return home


def test_hermes_mcp_serve_serves_mcp_tools_as_server__tool(relay_home: Path, tmp_path: Path):
    async def main() -> tuple[set[str], str, str]:
        command = [*support.hermes_command(), "mcp", "serve", "--workspace", str(tmp_path)]
        async with AsyncExitStack() as stack:
            session = await stdio_session(stack, command, {"HERMES_HOME": str(relay_home)}, tmp_path)
            with anyio.fail_after(WAIT):
                names = {tool.name for tool in (await session.list_tools()).tools}
                echoed = await session.call_tool("peer__echo", {"text": "through two hops"})
                plugin = await session.call_tool("peer__pid", {})
            return names, echoed.content[0].text, plugin.content[0].text

    names, echoed, plugin = anyio.run(main)

    assert {"peer__echo", "peer__fail", "peer__pid", "mcp__peer__pid"} <= names
    assert not any(name.startswith("mcp__") for name in names - {"mcp__peer__pid"})
    assert echoed == "through two hops"
    assert plugin == "the plugin"  # the plugin's tool keeps its name; the MCP one keeps the full name

