"""``hermes mcp list|serve``: MCP servers' tools in Hermes, and Hermes' tools for MCP clients."""

from __future__ import annotations

import io
import ipaddress
import os
import sys
from pathlib import Path
from typing import Any

import click

from ..runtime import Runtime
from ._common import UserError, echo_json, runtime

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
    try:
        rows = [status.as_dict() for status in rt.start_mcp().status()]
    finally:
        rt.close()
    if as_json:
        echo_json(rows)
        return
    width = max(len(row["name"]) for row in rows)
    click.echo(f"{'NAME':<{width}}  {'STATE':<11}  {'TOOLS':>5}  {'TRANSPORT':<9}  LAST ERROR")
    for row in rows:
        error = row["last_error"] or ""
        click.echo(f"{row['name']:<{width}}  {row['state']:<11}  {len(row['tools']):>5}  {row['transport']:<9}  "
                   f"{error}".rstrip())
        for tool, reason in row["skipped"].items():
            click.echo(f"{'':<{width}}  skipped {tool}: {reason}")


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
@click.option("--toolsets", multiple=True, metavar="A,B",
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
def serve(toolsets: tuple[str, ...], transport: str, host: str, port: int, workspace: Path | None,
          auth_token: str | None) -> None:
    """Serve the installed tools to MCP clients (Claude Desktop, editors, other agents).

    The server is one session: plugins' on_session_start hooks fire before the first call, on_session_end
    when it stops.
    """
    folder = _workspace(workspace)
    if transport == "http" and not auth_token and not _is_loopback(host):
        raise UserError(f"listening on {host}, which is not a loopback address, needs a bearer token: pass "
                        f"--auth-token TOKEN or set {TOKEN_ENV}")
    wire = _claim_stdout() if transport == "stdio" else None
    import anyio

    from ..mcp.server import HermesMcpServer

    rt = Runtime(workspace=folder)
    try:
        rt.load_plugins()
        with rt.session(platform="mcp") as session_id:  # one session for the server's life; its calls belong to it
            server = HermesMcpServer(rt, _split(toolsets) or rt.config.toolsets, session_id=session_id)
            if transport == "stdio":
                anyio.run(server.serve_stdio, wire)
            else:
                try:
                    anyio.run(server.serve_http, host, port, "/mcp", auth_token)
                except OSError as exc:
                    raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    except KeyboardInterrupt:
        pass
    finally:
        rt.close()


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
