"""Other MCP clients' configurations: their server entries as Hermes' ``mcp_servers`` entries (``hermes mcp
import``), and Claude Desktop's configuration file, where ``hermes mcp install-claude`` writes Hermes' own entry.

Claude Desktop and Claude Code keep servers under ``mcpServers`` (Claude Code also in ``~/.claude.json``, Cursor
and Windsurf likewise); VS Code under ``servers`` in ``.vscode/mcp.json`` (or ``mcp.servers`` in its settings).
Their entries' ``type``, ``command``, ``args``, ``env``, ``cwd``, ``url`` and ``headers`` mean what they mean in
``mcp_servers``; what Hermes has no use for is dropped, with a note saying so.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config.untrusted import TEXT_LIMIT, read_untrusted_text
from ..errors import InteropError

__all__ = ["ForeignServer", "InteropError", "claude_desktop_config", "install_in_claude", "read_servers",
           "serve_entry"]

#: Keys an entry keeps as they are.
KEPT = ("type", "command", "args", "env", "cwd", "url", "headers")
#: Other clients' names of the streamable HTTP transport.
HTTP_TYPES = frozenset({"http", "streamable-http", "streamable_http", "streamableHttp"})
#: Other clients' names of the URL (Windsurf's ``serverUrl``; Gemini CLI's ``httpUrl`` is streamable HTTP).
URL_KEYS = {"serverUrl": None, "httpUrl": "http"}
_INPUT = re.compile(r"\$\{input:[^}]*\}")


@dataclass
class ForeignServer:
    """One server of another client's configuration, as an ``mcp_servers`` entry."""

    name: str
    entry: dict[str, Any]
    #: What was changed or dropped, for the user to check.
    notes: list[str] = field(default_factory=list)


def read_servers(path: Path) -> list[ForeignServer]:
    """The MCP servers of a Claude Desktop, Claude Code, Cursor or VS Code configuration file."""
    try:
        document = json.loads(read_untrusted_text(path, TEXT_LIMIT, follow_symlinks=True))
    except OSError as exc:
        raise InteropError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise InteropError(f"{path}: not a JSON file: {exc}") from None
    if not isinstance(document, dict):
        raise InteropError(f"{path}: not an MCP configuration (a JSON object holding mcpServers or servers)")
    servers = document.get("mcpServers")
    if servers is None:
        servers = document.get("servers", (document.get("mcp") or {}).get("servers"))
    if not isinstance(servers, dict):
        raise InteropError(f"{path}: no MCP servers in it: expected an object under mcpServers (Claude Desktop, "
                           "Claude Code, Cursor) or servers (VS Code)")
    # VS Code's ${workspaceFolder} is the folder that holds .vscode/; elsewhere, the file's own folder
    workspace = path.resolve().parent
    workspace = workspace.parent if workspace.name == ".vscode" else workspace
    return [_converted(str(name), entry, workspace) for name, entry in servers.items()]


def _converted(name: str, entry: Any, workspace: Path) -> ForeignServer:
    server = ForeignServer(name, {})
    if not isinstance(entry, dict):
        server.notes.append(f"not an object ({type(entry).__name__}); skipped")
        return server
    for key, value in entry.items():
        if key in KEPT:
            server.entry[key] = _substituted(value, workspace, server)
        elif key in URL_KEYS:
            server.entry["url"] = _substituted(value, workspace, server)
            if URL_KEYS[key]:
                server.entry.setdefault("type", URL_KEYS[key])
        elif key == "disabled":
            server.entry["enabled"] = not value
        elif key == "envFile":
            server.notes.append(f"envFile {value!r} is not read by Hermes: copy its variables into env")
        else:
            server.notes.append(f"{key!r} has no meaning in Hermes; dropped")
    kind = server.entry.get("type")
    if kind in HTTP_TYPES and kind != "http":
        server.entry["type"] = "http"
    elif kind is not None and kind not in ("stdio", "http", "sse"):
        server.notes.append(f"type {kind!r} is not one Hermes knows (stdio, http, sse); dropped")
        del server.entry["type"]
    return server


def _substituted(value: Any, workspace: Path, server: ForeignServer) -> Any:
    """VS Code's ``${workspaceFolder}`` and ``${userHome}`` resolved; ``${input:...}`` noted (nothing asks)."""
    if isinstance(value, list):
        return [_substituted(item, workspace, server) for item in value]
    if isinstance(value, dict):
        return {key: _substituted(item, workspace, server) for key, item in value.items()}
    if not isinstance(value, str):
        return value
    value = value.replace("${workspaceFolder}", str(workspace)).replace("${userHome}", str(Path.home()))
    for reference in _INPUT.findall(value):
        server.notes.append(f"{reference} is a VS Code prompt Hermes cannot show: replace it with the value or "
                            "an environment reference such as ${NAME}")
    return value


# -- Claude Desktop ------------------------------------------------------------------------------


def claude_desktop_config() -> Path:
    """Where Claude Desktop keeps ``claude_desktop_config.json`` on this system (as the MCP SDK's ``mcp install``
    finds it): ``%APPDATA%\\Claude`` on Windows, ``~/Library/Application Support/Claude`` on macOS, and
    ``$XDG_CONFIG_HOME/Claude`` (default ``~/.config/Claude``) elsewhere."""
    if sys.platform == "win32":
        folder = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming") / "Claude"
    elif sys.platform == "darwin":
        folder = Path.home() / "Library" / "Application Support" / "Claude"
    else:
        folder = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "Claude"
    return folder / "claude_desktop_config.json"


def serve_entry(workspace: Path, toolsets: list[str], env: dict[str, str]) -> dict[str, Any]:
    """The ``mcpServers`` entry that starts ``hermes mcp serve`` with this interpreter (Claude Desktop starts
    servers with a bare ``PATH``, in ``/``: the command is absolute, the workspace given)."""
    script = Path(sys.executable).with_name("hermes")
    command, args = (str(script), []) if script.is_file() else (sys.executable, ["-m", "hermes_core.cli"])
    args += ["mcp", "serve", "--workspace", str(workspace)]
    if toolsets:
        args += ["--toolsets", ",".join(toolsets)]
    entry: dict[str, Any] = {"command": command, "args": args}
    if env:
        entry["env"] = env
    return entry


def install_in_claude(config_file: Path, name: str, entry: dict[str, Any]) -> bool:
    """Write ``entry`` as ``mcpServers.<name>`` of Claude Desktop's configuration, keeping everything else in it
    (and the entry's own ``env`` values that ``entry`` does not set); True when it replaced an entry."""
    try:
        text = read_untrusted_text(config_file, TEXT_LIMIT, follow_symlinks=True) if config_file.exists() else ""
        document = json.loads(text) if text.strip() else {}
    except OSError as exc:
        raise InteropError(f"{config_file}: cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise InteropError(f"{config_file}: not valid JSON ({exc}); fix or remove it first — nothing was changed") \
            from None
    if not isinstance(document, dict) or not isinstance(document.setdefault("mcpServers", {}), dict):
        raise InteropError(f"{config_file}: not a Claude Desktop configuration (a JSON object whose mcpServers is "
                           "an object); nothing was changed")
    servers = document["mcpServers"]
    previous = servers.get(name)
    if isinstance(previous, dict) and isinstance(previous.get("env"), dict):
        entry = {**entry, "env": {**previous["env"], **entry.get("env", {})}}
    servers[name] = entry
    tmp = config_file.with_name(f".{config_file.name}.{os.getpid()}.tmp")
    try:
        config_file.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, config_file)
    except OSError as exc:
        raise InteropError(f"{config_file}: cannot write: {exc.strerror or exc}") from None
    return previous is not None
