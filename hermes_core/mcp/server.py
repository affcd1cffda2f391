"""``hermes mcp serve``: the registry's tools for any MCP client, over stdio or streamable HTTP.

Calls run through ``handle_function_call``, so hooks, argument checks and result budgets apply; a result
that is Hermes' ``{"error": ...}`` JSON becomes an MCP error result (``isError``). Connected clients are
told when the tool or prompt list changes: handshake-era clients by ``notifications/tools/list_changed`` and
``notifications/prompts/list_changed``, 2026-era clients through their ``subscriptions/listen`` stream.
"""

from __future__ import annotations

import hmac
import json
import logging
import socket
import sys
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, PromptsListChanged, ToolsListChanged
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from .._version import __version__
from ..calls.dispatch import AGENT_LOOP_TOOLS
from ..tools.toolcalls import is_error_result
from ..tools.toolsets import UnknownToolsetError
from .naming import PREFIX
from .prompts import SkillPrompts

if TYPE_CHECKING:
    from ..host.views import ToolApi
    from .serving import Health, HttpOptions

__all__ = ["BearerAuth", "HermesMcpServer", "is_error_result"]

log = logging.getLogger(__name__)

INSTRUCTIONS = "Tools provided by Hermes plugins. Each tool returns text; failures come back as error results."


class _Server(Server[Any]):
    """The SDK server, advertising ``tools.listChanged`` and ``prompts.listChanged`` on every transport (HTTP builds
    its own options)."""

    def create_initialization_options(self, notification_options: NotificationOptions | None = None,
                                      experimental_capabilities: dict[str, dict[str, Any]] | None = None,
                                      extensions: dict[str, dict[str, Any]] | None = None) -> InitializationOptions:
        return super().create_initialization_options(notification_options or NotificationOptions(tools_changed=True,
                                                                                       prompts_changed=True),
                                                     experimental_capabilities, extensions)


class BearerAuth:
    """ASGI middleware: a request without ``Authorization: Bearer <token>`` is answered 401 and goes no further."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = [value for name, value in scope["headers"] if name.lower() == b"authorization"]
            if len(given) != 1 or not hmac.compare_digest(given[0], self.expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body",
                            "body": b'{"error": "this Hermes MCP server needs Authorization: Bearer <token>"}'})
                return
        await self.app(scope, receive, send)


class HermesMcpServer:
    """An MCP server over the tools of one runtime, or of a filtered view of it (``runtime.filtered(...)``),
    optionally limited to some toolsets. Each tool is listed with its annotations as MCP's hints."""

    def __init__(self, runtime: ToolApi, toolsets: Iterable[str] | None = None, poll_interval: float = 0.25,
                 session_id: str | None = None) -> None:
        self.runtime = runtime
        #: The session the calls belong to (``hermes mcp serve`` runs one).
        self.session_id = session_id
        self.toolsets = list(toolsets) if toolsets else None
        self.poll_interval = poll_interval
        if self.toolsets:
            _, unknown = runtime.select_tools(self.toolsets)
            if unknown:
                raise UnknownToolsetError(unknown[0])
        #: Calls cancelled while their thread still ran (a drain past its timeout, a client gone).
        self.abandoned = 0
        self.bus = InMemorySubscriptionBus()
        self._connections: set[Any] = set()
        self._names: tuple[int, frozenset[str]] = (-1, frozenset())
        #: A call that may write finished since the watcher last looked: it may have changed the skills
        #: (``skill_manage``, or any tool that writes files).
        self._wrote = False
        self.server = _Server("hermes", version=__version__, title="Hermes tools", instructions=INSTRUCTIONS,
                              on_list_tools=self._list_tools, on_call_tool=self._call_tool,
                              on_list_prompts=self._list_prompts, on_get_prompt=self._get_prompt,
                              on_subscriptions_listen=ListenHandler(self.bus))
        self.prompts = SkillPrompts(runtime, self._selected)
        self.server.middleware.append(self._track_connection)

    # -- the tool list ------------------------------------------------------------------------

    def tools(self) -> list[types.Tool]:
        """The tools a client sees now: selected, available, and not the agent loop's own."""
        definitions = self.runtime.get_tool_definitions(enabled_toolsets=self.toolsets, quiet_mode=True, format="mcp")
        return [types.Tool.model_validate({**d, "name": self.served_name(d["name"])})
                for d in definitions if d["name"] not in AGENT_LOOP_TOOLS]

    def _is_mcp_tool(self, name: str) -> bool:
        entry = self.runtime.registry.get(name)
        return entry is not None and (entry.plugin or "").startswith("mcp:")

    def served_name(self, registered: str) -> str:
        """A tool of an MCP server Hermes is a client of goes on as ``<server>__<tool>``: the client adds its own
        prefix for Hermes (Claude Code shows ``mcp__hermes__github__create_issue``, not ``mcp__hermes__mcp__...``).
        A registered tool of that very name keeps the full name for the MCP one."""
        short = registered.removeprefix(PREFIX)
        if short != registered and self._is_mcp_tool(registered) and short not in self.runtime.registry:
            return short
        return registered

    def registered_name(self, served: str) -> str:
        """The registry name of a tool as served (the inverse of :meth:`served_name`)."""
        full = PREFIX + served
        return full if served not in self.runtime.registry and self._is_mcp_tool(full) else served

    def _selected(self) -> frozenset[str]:
        generation = self.runtime.registry.generation
        if self._names[0] != generation:
            names, _ = self.runtime.select_tools(self.toolsets)
            self._names = (generation, frozenset(names) - AGENT_LOOP_TOOLS)
        return self._names[1]

    def _signature(self) -> str:
        return json.dumps([tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in self.tools()],
                          sort_keys=True)

    async def _list_tools(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=await anyio.to_thread.run_sync(self.tools))

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        call = partial(self.runtime.handle_function_call, self.registered_name(params.name), params.arguments or {},
                       tool_call_id=f"mcp-{ctx.request_id}", session_id=self.session_id,
                       enabled_tools=self._selected())
        try:
            text = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            # a drain past its timeout (or a client gone) cancels the request; say which call was cut off
            self.abandoned += 1
            log.error("tool call %s (request %s) was cancelled before it finished; its thread may still be "
                      "running", params.name, ctx.request_id)
            raise
        finally:
            entry = self.runtime.registry.get(self.registered_name(params.name))
            self._wrote = self._wrote or entry is None or not entry.read_only
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    is_error=is_error_result(text))

    async def _list_prompts(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=await anyio.to_thread.run_sync(self.prompts.list))

    async def _get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        return await anyio.to_thread.run_sync(self.prompts.get, params.name)

    # -- change notifications -----------------------------------------------------------------

    async def _track_connection(self, ctx: Any, call_next: Any) -> Any:
        # Handshake-era connections live as long as the client does; remember them to push list changes.
        # The SDK exposes the connection only on the per-request session.
        connection = getattr(ctx.session, "_connection", None)
        if connection is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS \
                and connection not in self._connections:
            self._connections.add(connection)
            connection.exit_stack.callback(self._connections.discard, connection)
        return await call_next(ctx)

    async def _notify(self, method: str, event: ToolsListChanged | PromptsListChanged) -> None:
        for connection in list(self._connections):
            if connection.initialized.is_set():
                await getattr(connection, method)()
        await self.bus.publish(event)

    async def notify_tools_changed(self) -> None:
        """Tell every connected client that the tool list changed."""
        await self._notify("send_tool_list_changed", ToolsListChanged())

    async def notify_prompts_changed(self) -> None:
        """Tell every connected client that the prompt list (the skills) changed."""
        await self._notify("send_prompt_list_changed", PromptsListChanged())

    def _prompts_signature(self) -> str | None:
        try:
            prompts = self.prompts.list()
        except Exception as exc:  # a skill folder gone bad must not end the server: prompts/list says why
            log.warning("prompt list not read: %s: %s", type(exc).__name__, exc)
            return None
        return json.dumps([prompt.model_dump(mode="json", by_alias=True, exclude_none=True) for prompt in prompts],
                          sort_keys=True)

    async def watch_registry(self) -> None:
        """Notify clients whenever the registry's changes alter the listed tools or prompts (or availability
        drifts, or skills change on disk)."""
        registry = self.runtime.registry
        generation = registry.generation
        signature = await anyio.to_thread.run_sync(self._signature)
        prompts: str | None = await anyio.to_thread.run_sync(self._prompts_signature)
        polls = 0
        while True:
            await anyio.sleep(self.poll_interval)
            polls += 1
            wrote, self._wrote = self._wrote, False
            # A new generation means tools came or went; every few seconds availability and the skill folders
            # are re-read too. A finished call of a tool not declared read-only may have written a skill: only the
            # prompts are re-read for it (re-reading the tools runs every tool's availability check).
            periodic = registry.generation != generation or not polls % 40
            if periodic:
                generation = registry.generation
                current = await anyio.to_thread.run_sync(self._signature)
                if current != signature:
                    signature = current
                    log.info("tool list changed; notifying %d client(s)", len(self._connections))
                    await self.notify_tools_changed()
            if periodic or wrote:
                listed = await anyio.to_thread.run_sync(self._prompts_signature)
                if listed is not None and listed != prompts:
                    prompts = listed
                    log.info("prompt list changed; notifying %d client(s)", len(self._connections))
                    await self.notify_prompts_changed()

    # -- transports ---------------------------------------------------------------------------

    async def serve_stdio(self, stdout: Any = None) -> None:
        """Serve one client over stdin and ``stdout`` (an async text file; default: the process's stdout)."""
        count = len(await anyio.to_thread.run_sync(self.tools))
        print(f"Hermes MCP server on stdio, {count} tools", file=sys.stderr, flush=True)
        async with stdio_server(stdout=stdout) as (read_stream, write_stream), anyio.create_task_group() as group:
            group.start_soon(self.watch_registry)
            await self.server.run(read_stream, write_stream, self.server.create_initialization_options())
            group.cancel_scope.cancel()

    async def serve_http(self, sock: socket.socket, options: HttpOptions, health: Health,
                         trace_requests: bool = False) -> None:
        """Serve streamable HTTP at ``options.path`` on the listening ``sock`` until a signal drains it.

        With ``options.token``, every request but the health checks must carry ``Authorization: Bearer
        <token>``; others get 401. ``options.stateless`` serves each request on its own, answering with JSON:
        any replica can take any request, and the server pushes no notifications. With ``trace_requests``, the
        W3C trace context of a request is the parent of its calls' spans.
        """
        from .serving import serve_app

        app: Any = self.server.streamable_http_app(streamable_http_path=options.path, host=options.host,
                                                   stateless_http=options.stateless,
                                                   json_response=options.stateless)
        if options.token:
            app = BearerAuth(app, options.token)
        if trace_requests:
            from ..calls.tracing import TraceContext

            app = TraceContext(app)
        async with anyio.create_task_group() as group:
            if not options.stateless:  # stateless clients hold no stream a change could be pushed on
                group.start_soon(self.watch_registry)
            await serve_app(app, sock, options, health)
            group.cancel_scope.cancel()
