"""``hermes mcp list|add|remove|import|login|logout|serve|install-claude``: MCP servers' tools in Hermes, and
Hermes' tools for MCP clients."""

from __future__ import annotations

import io
import ipaddress
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import click

from ..config.model import McpServerConfig, add_to_mapping, remove_from_mapping
from ..config.yamlmodel import round_trip_node
from ._common import UserError, echo_json, home, list_timeout, not_answered, require_extra, runtime, waiting_for_servers
from .completion import mcp_server_names, toolset_lists
from .safetext import printable
from .table import Column, echo_table, state_colour

#: The environment variable that holds ``hermes mcp serve --auth-token``.
TOKEN_ENV = "HERMES_MCP_AUTH_TOKEN"

__all__ = ["mcp"]


def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


@click.group()
def mcp() -> None:
    """Use MCP servers' tools; serve Hermes tools over MCP."""


@mcp.command("list", short_help="Show each MCP server's state, tools and last error.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_servers(as_json: bool) -> None:
    """Show each configured MCP server's state, tool count and last error (connects to find out)."""
    rt = runtime()
    if not rt.config.mcp_servers:
        if as_json:
            echo_json([])
        else:
            click.echo(f"No MCP servers configured; add them under mcp_servers: in {rt.home.config_file}")
        return
    timeout = list_timeout(rt)
    try:
        manager = rt.start_mcp(connect=False)
        pending = manager.list_new(timeout, waiting_for_servers(timeout))  # never listed: at most mcp.list_timeout
        manager.connect(wait=True)  # those listed before: their state now
        not_answered(pending, timeout)
        rows = [status.as_dict() for status in manager.status()]
    finally:
        rt.close()
    if as_json:
        echo_json(rows)
        return
    echo_table([Column("NAME"), Column("STATE", colour=state_colour), Column("TOOLS", align=">"),
                Column("TRANSPORT"), Column("LAST ERROR", shrink=True)],
               [[row["name"], row["state"], str(len(row["tools"])), row["transport"], row["last_error"] or ""]
                for row in rows])
    for row in rows:
        for tool, reason in row["skipped"].items():
            click.echo(printable(f"{row['name']}: skipped {tool}: {reason}", lines=False))


def _claim_stdout() -> Any:
    """Keep the real stdout for the protocol: everything else written to stdout (``print`` in a plugin, a
    child process) goes to stderr from now on."""
    sys.stdout.flush()
    wire = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import anyio

    return anyio.wrap_file(io.TextIOWrapper(os.fdopen(wire, "wb"), encoding="utf-8", newline="\n"))


@mcp.command("serve", short_help="Serve the installed tools to MCP clients.")
@click.option("--toolsets", multiple=True, metavar="A,B", shell_complete=toolset_lists,
              help="Serve only these toolsets (default: `toolsets` in config.yaml, else every tool).")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True,
              help="stdio for a client that starts this command; http for streamable HTTP.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (http).")
@click.option("--port", type=int, default=8000, show_default=True, help="Port to listen on (http); 0 picks one.")
@click.option("--workspace", type=click.Path(file_okay=False, path_type=Path), envvar="HERMES_WORKSPACE",
              help="The folder the file tools work in and commands start in (default: the current folder, "
                   "unless that is / or your home folder). Env: HERMES_WORKSPACE.")
@click.option("--auth-token", envvar=TOKEN_ENV, metavar="TOKEN",
              help=f"Require `Authorization: Bearer TOKEN` on every HTTP request; needed to listen on an address "
                   f"that is not loopback. Env: {TOKEN_ENV}.")
@click.option("--read-only", is_flag=True,
              help="Serve only the tools annotated read-only; any other call is refused.")
@click.option("--stateless", is_flag=True,
              help="HTTP: answer each request on its own with JSON, so any replica serves any request "
                   "(no server-initiated notifications).")
@click.option("--workers", type=click.IntRange(1, 256), default=1, show_default=True,
              help="HTTP: worker processes on one socket, each loading the plugins; needs --stateless.")
@click.option("--drain-grace", type=click.FloatRange(0), default=5.0, show_default=True, metavar="SECONDS",
              help="HTTP: after SIGTERM, answer /readyz with 503 this long while still serving.")
@click.option("--drain-timeout", type=click.FloatRange(0), default=30.0, show_default=True, metavar="SECONDS",
              help="HTTP: then give in-flight calls this long to finish; later ones are cancelled and logged.")
@click.option("--header-timeout", type=click.FloatRange(0, min_open=True), default=10.0, show_default=True,
              metavar="SECONDS", help="HTTP: close a connection that has not sent a request's headers this long after "
                                      "connecting or starting its next request (idle kept-alive ones close after 5 s).")
@click.option("--body-timeout", type=click.FloatRange(0, min_open=True), default=30.0, show_default=True,
              metavar="SECONDS", help="HTTP: close a connection that has not sent a request's body this long after "
                                      "its headers.")
def serve(toolsets: tuple[str, ...], transport: str, host: str, port: int, workspace: Path | None,
          auth_token: str | None, read_only: bool, stateless: bool, workers: int, drain_grace: float,
          drain_timeout: float, header_timeout: float, body_timeout: float) -> None:
    """Serve the installed tools to MCP clients (Claude Desktop, editors, other agents).

    Each tool is listed with its annotations (readOnlyHint, destructiveHint, ...). Calls run under
    `approvals.policy` of config.yaml; over stdio nobody can answer an approval, so a call that asks is refused.
    The server is one session: plugins' on_session_start hooks fire before the first call, on_session_end
    when it stops. Over HTTP, GET /healthz and /readyz report the state; SIGTERM drains the server.
    """
    folder = _workspace(workspace)
    if transport == "http" and not auth_token and not _is_loopback(host):
        raise UserError(f"listening on {host}, which is not a loopback address, needs a bearer token: pass "
                        f"--auth-token TOKEN or set {TOKEN_ENV}")
    if transport != "http" and (stateless or workers > 1):
        raise UserError("--stateless and --workers are for --transport http")
    if workers > 1 and not stateless:
        raise UserError("--workers needs --stateless: a stateful session lives in one process, and the next "
                        "request of a client may reach another worker")
    require_extra("hermes_core.mcp.server", "mcp", "mcp serve")
    if transport == "http":
        from ..mcp.serving import HttpOptions, bind
        from .serve import serve_http

        options = HttpOptions(workspace=folder, toolsets=tuple(_split(toolsets)), read_only=read_only, host=host,
                              port=port, token=auth_token, stateless=stateless, workers=workers,
                              drain_grace=drain_grace, drain_timeout=drain_timeout, header_timeout=header_timeout,
                              body_timeout=body_timeout)
        try:
            sock = bind(host, port)
        except OSError as exc:
            raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        try:
            code = serve_http(options, sock)
        except KeyboardInterrupt:
            code = 0
        raise SystemExit(code)
    wire = _claim_stdout()
    import anyio

    from ..mcp.stdio import claim_stdin
    from .serve import session_server

    lines = claim_stdin()
    try:
        with session_server(folder, _split(toolsets), read_only) as (_, server):
            anyio.run(server.serve_stdio, wire, lines)
    except KeyboardInterrupt:
        pass


def _workspace(given: Path | None) -> Path:
    """The workspace to serve: the one given, else the current folder — refused when that is ``/`` or the
    home folder (an MCP client such as Claude Desktop starts servers in ``/``), as the file tools would then
    reach the whole disk."""
    if given is not None:
        return given.expanduser().absolute()
    folder = Path.cwd()
    if folder.resolve() in (Path("/"), Path.home().resolve()):
        raise UserError(f"refusing to serve with the workspace {folder}: the file tools would reach everything "
                        "under it. Pass --workspace DIR (or set HERMES_WORKSPACE) to the folder they may use")
    return folder


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# -- editing mcp_servers ---------------------------------------------------------------------------

SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
#: Where config.yaml may hold servers: Hermes' key, then Claude's spelling (read as a synonym).
SERVER_KEYS = ("mcp_servers", "mcpServers")


def _pairs(values: tuple[str, ...], separator: str, what: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, found, item = value.partition(separator)
        if not found or not key.strip():
            raise UserError(f"{what} {value!r} is not KEY{separator}VALUE")
        pairs[key.strip()] = item.strip() if separator == ":" else item
    return pairs


def _configured(document: Any, name: str) -> str | None:
    """The key of config.yaml that holds server ``name``, if one does."""
    return next((key for key in SERVER_KEYS if isinstance(document.get(key), dict) and name in document[key]), None)


def _add_servers(entries: dict[str, dict[str, Any]], replace: bool) -> tuple[list[str], list[str]]:
    """Add ``entries`` to config.yaml, keeping its comments; returns ``(added, already configured)``."""
    added: list[str] = []
    present: list[str] = []

    def change(document: Any) -> None:
        added.clear()
        present.clear()
        for name, entry in entries.items():
            holder = _configured(document, name)
            if holder is not None and not replace:
                present.append(name)
                continue
            key = holder or next((k for k in SERVER_KEYS if isinstance(document.get(k), dict)), "mcp_servers")
            add_to_mapping(document, key, round_trip_node(name), round_trip_node(entry))
            added.append(name)

    home().edit_config(change)
    return added, present


@mcp.command("add", short_help="Add an MCP server to config.yaml.")
@click.argument("name")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="[-- COMMAND [ARGS]...]")
@click.option("--url", help="The URL of an HTTP server (instead of a command).")
@click.option("--transport", type=click.Choice(["http", "sse"]), default="http", show_default=True,
              help="With --url: streamable HTTP, or the older HTTP+SSE transport.")
@click.option("-e", "--env", "env", multiple=True, metavar="KEY=VALUE",
              help="An environment variable of the server's process (repeatable; ${NAME} refers to yours).")
@click.option("-H", "--header", "headers", multiple=True, metavar="'NAME: VALUE'",
              help="An HTTP header sent with every request (repeatable), e.g. 'Authorization: Bearer ${TOKEN}'.")
@click.option("--cwd", help="The folder the server's process starts in.")
@click.option("--replace", is_flag=True, help="Replace a server of that name.")
@click.option("--force", is_flag=True, help="Write the entry even when its command or --cwd is not found.")
@click.option("--no-connect", is_flag=True, help="Do not connect to the server to list its tools.")
def add(name: str, command: tuple[str, ...], url: str | None, transport: str, env: tuple[str, ...],
        headers: tuple[str, ...], cwd: str | None, replace: bool, force: bool, no_connect: bool) -> None:
    """Add MCP server NAME: `hermes mcp add NAME -- COMMAND ARGS...` (stdio) or `hermes mcp add NAME --url URL`.

    The entry goes under mcp_servers in config.yaml, whose comments and order are kept. The command (on PATH,
    or a path) and --cwd must exist, unless --force. Then Hermes connects once (within the server's
    connect_timeout) and says which tools it found; --no-connect skips that.
    """
    if not SERVER_NAME.fullmatch(name):
        raise UserError(f"invalid server name {name!r}: use letters, digits, '_', '.' and '-', starting with a "
                        "letter or digit")
    if bool(command) == bool(url):
        raise UserError("give either a command after `--` (a stdio server) or --url URL (an HTTP server)")
    entry: dict[str, Any]
    if url:
        if env or cwd:
            raise UserError("--env and --cwd are for a server Hermes starts (a command), not for --url")
        entry = {"type": transport, "url": url} if transport == "sse" else {"url": url}
        if headers:
            entry["headers"] = _pairs(headers, ":", "header")
    else:
        if headers:
            raise UserError("--header is for an HTTP server (--url), not for a command")
        entry = {"command": command[0], "args": list(command[1:])}
        if env:
            entry["env"] = _pairs(env, "=", "variable")
        if cwd:
            entry["cwd"] = cwd
        if not force:
            _check_command(command[0], cwd)
    _, present = _add_servers({name: entry}, replace)
    if present:
        raise UserError(f"MCP server {name!r} is already configured; `hermes mcp remove {name}` first, or --replace")
    click.echo(f"Added MCP server {name} to {home().config_file}.")
    if no_connect:
        click.echo("`hermes mcp list` connects to it.")
        return
    _report_first_listing(name)


def _check_command(command: str, cwd: str | None) -> None:
    """Refuse a stdio server whose command or folder does not exist (the server would only fail at start-up);
    what holds a ``${NAME}`` is expanded when the server starts, and is not checked."""
    folder = Path(cwd).expanduser() if cwd and "$" not in cwd else None
    if folder is not None and not folder.is_dir():
        raise UserError(f"--cwd {cwd}: no such folder (--force writes the entry anyway)")
    if "$" in command:
        return
    if os.sep in command:  # a path: relative ones start from the server's folder
        found = ((folder or Path.cwd()) / Path(command).expanduser()).is_file()
    else:
        found = shutil.which(command) is not None
    if not found:
        raise UserError(f"command {command!r} not found" + ("" if os.sep in command else " on PATH") +
                        " (--force writes the entry anyway)")


def _check_toolsets(names: list[str]) -> None:
    """Refuse toolsets the installed plugins do not provide (``hermes mcp serve`` would exit at start-up)."""
    if not names:
        return
    rt = runtime()
    known = rt.toolsets.names()
    unknown = [name for name in names if name not in known]
    if unknown:
        installed = ", ".join(sorted(rt.registry.toolsets())) or "none"
        raise UserError(f"unknown toolset{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                        f"(installed: {installed}); install the pack that provides it, e.g. "
                        "`hermes plugins install web`, or --force writes the entry anyway")


def _report_first_listing(name: str) -> None:
    """Connect the new server once (within its connect_timeout) and say which tools it offers."""
    from ..runtime import Runtime

    rt = Runtime()
    try:
        manager = rt.start_mcp(connect=False)
        manager.connect([name], wait=True)
        status = next(s for s in manager.status() if s.name == name)
    finally:
        rt.close()
    if status.state == "ready":
        shown = ", ".join(status.tools[:8]) + (f", ... ({len(status.tools)} in all)" if len(status.tools) > 8 else "")
        click.echo(f"Connected: {len(status.tools)} tool{'s' if len(status.tools) != 1 else ''}"
                   + (f": {shown}" if status.tools else ""))
        return
    click.echo(f"warning: MCP server {name!r} is {status.state}: {status.last_error or 'no answer yet'} "
               "(the entry is kept; `hermes mcp list` retries)", err=True)


@mcp.command("remove", short_help="Remove an MCP server from config.yaml.")
@click.argument("name", shell_complete=mcp_server_names)
def remove(name: str) -> None:
    """Remove MCP server NAME from config.yaml (its comments and the rest of the file are kept)."""
    removed: list[str] = []

    def change(document: Any) -> None:
        holder = _configured(document, name)
        if holder is not None:
            remove_from_mapping(document, holder, name)
            removed.append(name)

    config = home().config_file
    if config.exists():
        home().edit_config(change)
    if not removed:
        raise UserError(f"no MCP server {name!r} in {config}; `hermes mcp list` shows the configured ones")
    click.echo(f"Removed MCP server {name} from {config}.")


@mcp.command("login", short_help="Sign in to an OAuth MCP server.")
@click.argument("name", shell_complete=mcp_server_names)
@click.option("--no-browser", is_flag=True, help="Only print the address to open; do not start a browser.")
def login(name: str, no_browser: bool) -> None:
    """Sign in to MCP server NAME (`auth: oauth`) with OAuth 2.1: its authorization page opens in the browser, the
    redirect comes back to 127.0.0.1, and the tokens are kept in $HERMES_HOME/mcp-tokens (files of mode 0600,
    never config.yaml). Connections refresh them; run this again when the server asks for a new sign-in."""
    require_extra("hermes_core.mcp.oauth", "mcp", "mcp login")
    from ..mcp.oauth import sign_in
    from ..mcp.session import expand_env

    where = home()
    config = _oauth_server(name)
    assert config.url is not None
    headers = {key: expand_env(value) for key, value in config.headers.items()}

    def show(address: str) -> None:
        click.echo(f"Open this address to sign in to MCP server {name}:\n  {address}", err=True)

    try:
        tools = sign_in(name, config, where.mcp_tokens_dir, expand_env(config.url), headers, show, not no_browser,
                        expand_env)
    except Exception as exc:
        raise UserError(f"signing in to MCP server {name!r} failed: {_leaf_text(exc)}") from None
    click.echo(f"Signed in to MCP server {name} ({tools} tool{'s' if tools != 1 else ''}); the tokens are in "
               f"{where.mcp_tokens_dir}.")


@mcp.command("logout", short_help="Forget the OAuth tokens of an MCP server.")
@click.argument("name", shell_complete=mcp_server_names)
def logout(name: str) -> None:
    """Forget the OAuth tokens and the registered client of MCP server NAME (kept in $HERMES_HOME/mcp-tokens)."""
    require_extra("hermes_core.mcp.oauth", "mcp", "mcp logout")
    from ..mcp.oauth import TokenFiles

    folder = home().mcp_tokens_dir
    if TokenFiles(folder, name).remove():
        click.echo(f"Signed out of MCP server {name}: its tokens are removed from {folder}.")
    else:
        click.echo(f"No sign-in of MCP server {name} is stored in {folder}.")


def _oauth_server(name: str) -> McpServerConfig:
    """Server ``name``'s entry, which must be a remote server with ``auth: oauth``."""
    servers = home().config().mcp_servers
    if name not in servers:
        raise UserError(f"no MCP server {name!r} in {home().config_file}; `hermes mcp list` shows the configured ones")
    config = servers[name]
    if not config.url:
        raise UserError(f"MCP server {name!r} is a local (stdio) server: OAuth is for servers reached by URL")
    if not config.uses_oauth:
        raise UserError(f"MCP server {name!r} does not use OAuth: add `auth: oauth` to its entry in "
                        f"{home().config_file}")
    return config


def _leaf_text(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__


@mcp.command("import", short_help="Add the MCP servers of a Claude or VS Code configuration.")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--only", multiple=True, metavar="NAME", help="Import only these servers (repeatable).")
@click.option("--replace", is_flag=True, help="Replace servers of the same names.")
def import_servers(file: Path, only: tuple[str, ...], replace: bool) -> None:
    """Add the MCP servers of FILE to config.yaml: Claude Desktop's claude_desktop_config.json, Claude Code's
    .mcp.json or ~/.claude.json, Cursor's mcp.json or VS Code's .vscode/mcp.json."""
    from ..mcp.interop import InteropError, read_servers

    try:
        servers = read_servers(file.expanduser())
    except InteropError as exc:
        raise UserError(str(exc)) from None
    unknown = sorted(set(only) - {server.name for server in servers})
    if unknown:
        raise UserError(f"{file} has no MCP server {unknown[0]!r}; it has {', '.join(s.name for s in servers)}")
    chosen = [server for server in servers if server.entry and (not only or server.name in only)]
    for server in servers:
        for note in server.notes:
            click.echo(f"{server.name}: {note}", err=True)
    added, present = _add_servers({server.name: server.entry for server in chosen}, replace)
    for name in present:
        click.echo(f"{name}: already configured; skipped (--replace replaces it)", err=True)
    click.echo(f"Imported {len(added)} MCP server{'s' if len(added) != 1 else ''} from {file} into "
               f"{home().config_file}" + (f": {', '.join(added)}" if added else ""))


@mcp.command("install-claude", short_help="Add `hermes mcp serve` to Claude Desktop.")
@click.option("--toolsets", multiple=True, metavar="A,B", shell_complete=toolset_lists,
              help="Serve only these toolsets.")
@click.option("--workspace", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The folder the file tools may use (default: the current folder, unless it is / or your home).")
@click.option("--name", default="hermes", show_default=True, help="The server's name in Claude Desktop.")
@click.option("--config-file", type=click.Path(dir_okay=False, path_type=Path),
              help="Claude Desktop's claude_desktop_config.json (default: where Claude Desktop keeps it here).")
@click.option("--force", is_flag=True, help="Write the entry even when a toolset is unknown or the MCP SDK missing.")
def install_claude(toolsets: tuple[str, ...], workspace: Path | None, name: str, config_file: Path | None,
                   force: bool) -> None:
    """Write the entry that starts `hermes mcp serve` into Claude Desktop's configuration; restart Claude Desktop
    to use it. Other servers and settings in the file are kept. The toolsets must be installed and the `mcp`
    extra too (the server would exit at start-up and Claude Desktop show it disconnected), unless --force."""
    from ..mcp.interop import InteropError, claude_desktop_config, install_in_claude, serve_entry

    if not force:
        require_extra("hermes_core.mcp.server", "mcp", "mcp install-claude")
        _check_toolsets(_split(toolsets))

    target = config_file or claude_desktop_config()
    if config_file is None and not target.parent.is_dir():
        raise UserError(f"Claude Desktop's configuration folder {target.parent} does not exist: install Claude "
                        "Desktop and start it once, or pass --config-file")
    folder = _workspace(workspace)
    # the home this command uses, when it is not the default one the server would find by itself
    env = {"HERMES_HOME": str(home().root)} if os.environ.get("HERMES_HOME") else {}
    entry = serve_entry(folder, _split(toolsets), env)
    try:
        replaced = install_in_claude(target, name, entry)
    except InteropError as exc:
        raise UserError(str(exc)) from None
    click.echo(f"{'Updated' if replaced else 'Added'} MCP server {name!r} in {target}: "
               f"{entry['command']} {' '.join(entry['args'])}")
    click.echo("Restart Claude Desktop to use it.")
