"""Shell completion of the values typed after ``hermes`` commands: plugin ids, tool names, toolset names and MCP
server names, as click ``shell_complete`` callbacks.

Completion runs on every Tab, so it reads only the discovery cache (or, when that is stale, the manifests) and
config.yaml: no plugin is imported, no ``register()`` runs and no MCP server is started. Tools a plugin
registers in code without declaring them in its manifest are therefore not offered. A completion that fails
(a broken config.yaml) offers nothing rather than printing a traceback into the shell.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

    from ..plugins.selection import PluginSelection
    from ..runtime import Runtime

__all__ = ["enabled_plugin_ids", "index_ids", "installed_plugin_ids", "mcp_server_names", "plugin_ids",
           "switched_off_plugin_ids", "tool_names", "toolset_lists", "toolset_names"]

log = logging.getLogger(__name__)

Values = Iterable[tuple[str, str]]
Completer = Callable[[click.Context, click.Parameter, str], "list[CompletionItem]"]


def _completer(values: Callable[[click.Context, click.Parameter], Values], *, comma_list: bool = False) -> Completer:
    """A ``shell_complete`` callback offering ``values`` (``(value, help)`` pairs) that start with what is typed;
    with ``comma_list``, the part after the last comma is completed."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        from click.shell_completion import CompletionItem  # imported on a Tab, not by every command

        head, _, last = incomplete.rpartition(",") if comma_list else ("", "", incomplete)
        typed = set(head.split(",")) if head else set()
        try:
            offered = dict(values(ctx, param))
        except Exception as exc:  # completion must never print a traceback into the shell
            log.debug("no completion for %s: %s: %s", param.name, type(exc).__name__, exc)
            return []
        prefix = f"{head}," if head else ""
        return [CompletionItem(prefix + value, help=text or None) for value, text in sorted(offered.items())
                if value.startswith(last) and value not in typed]

    return complete


def _runtime() -> Runtime:
    from ..runtime import Runtime

    return Runtime()


def _config() -> dict[str, Any]:
    """config.yaml as plain data (validated once per content, no pydantic model built on a Tab)."""
    return _runtime().home.config_data()


def _selections() -> list[PluginSelection]:
    from ..plugins.selection import SelectionPolicy, select

    runtime = _runtime()
    return select(runtime.discover(), SelectionPolicy.of(_config(), runtime.environ))


def _manifest(selection: PluginSelection) -> dict[str, Any]:
    """The candidate's manifest as the plain data discovery keeps (``{}`` without one)."""
    return selection.candidate.manifest_data or {}


def _summary(selection: PluginSelection) -> str:
    description = _manifest(selection).get("description")
    state = selection.verdict if selection.verdict != "selected" else selection.candidate.source
    return f"{state}: {description}" if description else state


def _already_given(ctx: click.Context, param: click.Parameter) -> set[str]:
    given = ctx.params.get(param.name or "") or ()
    return set(given) if isinstance(given, tuple | list) else set()


def _plugins(keep: Callable[[PluginSelection], bool]) -> Callable[[click.Context, click.Parameter], Values]:
    def values(ctx: click.Context, param: click.Parameter) -> Values:
        given = _already_given(ctx, param)
        return [(s.candidate.id, _summary(s)) for s in _selections()
                if keep(s) and s.verdict != "shadowed" and s.candidate.id not in given]

    return values


#: Every plugin id (``plugins info``, ``validate``).
plugin_ids = _completer(_plugins(lambda s: True))
#: Plugins that would load (``plugins disable``).
enabled_plugin_ids = _completer(_plugins(lambda s: s.verdict == "selected"))
#: Plugins that are disabled or not enabled (``plugins enable``).
switched_off_plugin_ids = _completer(_plugins(lambda s: s.verdict in ("disabled", "not enabled")))
#: Plugins installed as distributions (``plugins uninstall``).
installed_plugin_ids = _completer(_plugins(lambda s: s.candidate.source == "pip"))


def _declared_tools() -> Iterable[tuple[str, str, str]]:
    """``(name, toolset, description)`` of the tools the selected plugins declare in their manifests."""
    for selection in _selections():
        if selection.verdict != "selected":
            continue
        manifest = _manifest(selection)
        for tool in manifest.get("tools") or []:
            yield tool["name"], tool["toolset"], (tool.get("description") or "").split("\n")[0]
        for name in manifest.get("provides_tools") or []:
            yield name, "", f"from plugin {selection.candidate.id}"


def _tools(ctx: click.Context, param: click.Parameter) -> Values:
    return [(name, f"{toolset}: {description}" if toolset else description)
            for name, toolset, description in _declared_tools()]


def _toolsets(ctx: click.Context, param: click.Parameter) -> Values:
    from ..tools.toolsets import HERMES_AGENT_TOOLSETS, LEGACY_TOOLSETS, PRESETS

    found = {toolset: "" for _, toolset, _ in _declared_tools() if toolset}
    for selection in _selections():
        if selection.verdict == "selected":
            found.update({toolset["name"]: toolset.get("description") or ""
                          for toolset in _manifest(selection).get("toolsets") or []})
    found.update({name: f"Hermes Agent: {toolset.description}" for name, toolset in HERMES_AGENT_TOOLSETS.items()
                  if name not in found})
    found.update({name: f"preset: {preset.description}" for name, preset in PRESETS.items()})
    found.update({name: f"legacy: {', '.join(tools)}" for name, tools in LEGACY_TOOLSETS.items()})
    found.update({f"mcp-{server}": f"MCP server {server}" for server in _config()["mcp_servers"]})
    return found.items()


def _servers(ctx: click.Context, param: click.Parameter) -> Values:
    return [(name, "") for name in _config()["mcp_servers"]]


def _index_entries(ctx: click.Context, param: click.Parameter) -> Values:
    """The plugin index's ids, when the index is a local file (a Tab never waits for the network)."""
    from ..config.home import HermesHome
    from ..index.catalog import index_source, load_index

    source, _ = index_source(HermesHome.from_env())
    if "://" in str(source) and not str(source).startswith("file:"):
        return []
    return [(entry.id, entry.summary) for entry in load_index(source)]


#: The plugin index's ids (``plugins install``, ``index show``).
index_ids = _completer(_index_entries)
#: Tool names the selected plugins declare (``tools show``, ``tools call``).
tool_names = _completer(_tools)
#: One toolset name (``toolsets show``).
toolset_names = _completer(_toolsets)
#: A comma-separated list of toolset names (``--toolsets``, ``--disable``).
toolset_lists = _completer(_toolsets, comma_list=True)
#: The MCP servers configured in config.yaml (``mcp remove``).
mcp_server_names = _completer(_servers)
