"""``hermes mcp serve``: the registry's tools for any MCP client, over stdio or streamable HTTP.

Calls run through ``handle_function_call``, so hooks, argument checks and result budgets apply; a result
that is Hermes' ``{"error": ...}`` JSON becomes an MCP error result (``isError``), and the images and sounds a
result saved come with its text as ``ImageContent`` and ``AudioContent``. Each MCP session is a Hermes
session (``todo`` lists, recorded calls): the streamable HTTP session, else the stdio connection; stateless HTTP
has no MCP session, so a client names its own with the ``X-Hermes-Session`` header. Connected clients are
told when the tool or prompt list changes: handshake-era clients by ``notifications/tools/list_changed`` and
``notifications/prompts/list_changed``, 2026-era clients through their ``subscriptions/listen`` stream.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import signal
import socket
import sys
import threading
import weakref
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, PromptsListChanged, ToolsListChanged
from mcp.shared.message import SessionMessage
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from .._version import __version__
from ..calls.asking import caller_callbacks
from ..media import MediaStore, has_references
from ..state.agent import OneCall, new_session_id
from ..tools.search import TOOL_DESCRIBE
from ..tools.toolcalls import is_error_result
from ..tools.toolsets import UnknownToolsetError
from .asking import ClientAnswers
from .naming import PREFIX
from .prompts import SkillPrompts
from .stdio import MAX_LINE_BYTES, CappedLines

if TYPE_CHECKING:
    from ..host.views import ToolApi
    from .serving import Health, HttpOptions

__all__ = ["BearerAuth", "HermesMcpServer", "is_error_result"]

log = logging.getLogger(__name__)

INSTRUCTIONS = ("Tools provided by Hermes plugins. Each tool returns text, with the images and sounds it made; "
                "failures come back as error results.")
#: The request header that names the Hermes session of a call where MCP has none (stateless HTTP).
SESSION_HEADER = "x-hermes-session"
_SESSION_ID = re.compile(r"^[A-Za-z0-9._:@-]{1,128}$")
#: Tools whose state lives in a session: without one (stateless HTTP, no header) they are refused.
_SESSION_TOOLS = frozenset({"todo"})
#: The most tools one connection adds to its list by ``tool_describe``.
MAX_DESCRIBED = 64


def _error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps({"error": message}))],
                                is_error=True)


class _Server(Server[Any]):
    """The SDK server, advertising ``tools.listChanged`` and ``prompts.listChanged`` on every transport (HTTP builds
    its own options)."""

    def create_initialization_options(self, notification_options: NotificationOptions | None = None,
                                      experimental_capabilities: dict[str, dict[str, Any]] | None = None,
                                      extensions: dict[str, dict[str, Any]] | None = None) -> InitializationOptions:
        return super().create_initialization_options(notification_options or NotificationOptions(tools_changed=True,
                                                                                       prompts_changed=True),
                                                     experimental_capabilities, extensions)


def mcp_content(text: str, media: MediaStore) -> list[types.ContentBlock]:
    """A result as MCP content: its text, then each image and sound its reference lines name (an image no model
    could take, by type, bytes or pixels, stays a path in the text)."""
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
    if has_references(text):
        for found in media.attachments(text):
            if found.saved.kind == "audio":
                content.append(types.AudioContent(type="audio", data=found.base64, mime_type=found.saved.mime_type))
            elif found.attachable_image():
                content.append(types.ImageContent(type="image", data=found.base64, mime_type=found.saved.mime_type))
    return content


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
        runtime.asking.callers_model = "MCP sampling"  # a client may answer the tools' model requests
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
        #: Serving stateless HTTP (set by :meth:`serve_http`): sessions come only from the session header.
        self.stateless = False
        self._connection_sessions: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self.bus = InMemorySubscriptionBus()
        self._connections: set[Any] = set()
        #: Each client connection's answerers (its approvals for the session live there).
        self._answers: dict[Any, ClientAnswers] = {}
        self._names: tuple[int, frozenset[str]] = (-1, frozenset())
        #: Tool search (issue 43): the deferred tools each connection asked ``tool_describe`` about, which its
        #: tool list then holds beside the bridge (told by ``notifications/tools/list_changed``).
        self._described: weakref.WeakKeyDictionary[Any, list[str]] = weakref.WeakKeyDictionary()
        #: A call that may write finished since the watcher last looked: it may have changed the skills
        #: (``skill_manage``, or any tool that writes files).
        self._wrote = False
        #: What SIGHUP runs to load the plugins again (``Runtime.reload_plugins``); None: SIGHUP is not handled.
        self.reload: Callable[[], dict[str, list[str]]] | None = None
        self.server = _Server("hermes", version=__version__, title="Hermes tools", instructions=INSTRUCTIONS,
                              on_list_tools=self._list_tools, on_call_tool=self._call_tool,
                              on_list_prompts=self._list_prompts, on_get_prompt=self._get_prompt,
                              on_subscriptions_listen=ListenHandler(self.bus))
        self.prompts = SkillPrompts(runtime, self._selected)
        self.server.middleware.append(self._track_connection)

    # -- the tool list ------------------------------------------------------------------------

    def tools(self) -> list[types.Tool]:
        """The tools a client sees now: selected and available."""
        definitions = self.runtime.get_tool_definitions(enabled_toolsets=self.toolsets, quiet_mode=True, format="mcp")
        return [types.Tool.model_validate({**d, "name": self.served_name(d["name"])})
                for d in definitions]

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
            self._names = (generation, frozenset(names))
        return self._names[1]

    def _signature(self) -> str:
        return json.dumps([tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in self.tools()],
                          sort_keys=True)

    async def _list_tools(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        tools = await anyio.to_thread.run_sync(self.tools)
        connection = getattr(ctx.session, "_connection", None)
        described = self._described.get(connection) if connection is not None else None
        if described:
            tools += await anyio.to_thread.run_sync(self._described_tools, described, {tool.name for tool in tools})
        return types.ListToolsResult(tools=tools)

    def _described_tools(self, names: list[str], listed: set[str]) -> list[types.Tool]:
        """The tools of ``names`` still offered, available and not ``listed`` yet, as MCP tools."""
        registry = self.runtime.registry
        offered = [name for name in self.runtime.scope.names(names) if name in self._selected()
                   and self.served_name(name) not in listed and registry.check(name).available]
        entries = [entry for name in offered if (entry := registry.get(name)) is not None]
        definitions = self.runtime.formatter.render([entry.definition() for entry in entries], entries, "mcp")
        return [types.Tool.model_validate({**d, "name": self.served_name(d["name"])}) for d in definitions]

    async def _add_described(self, ctx: Any, text: str) -> None:
        """After a ``tool_describe`` that answered, list the tool for this connection and tell its client."""
        connection = getattr(ctx.session, "_connection", None)
        try:
            name = json.loads(text)["name"]
        except (ValueError, KeyError, TypeError):
            return
        if connection is None or connection not in self._connections or not isinstance(name, str):
            return  # a 2026-era client lists what it was told once; only handshake-era sessions get additions
        described = self._described.setdefault(connection, [])
        if name not in described and len(described) < MAX_DESCRIBED:
            described.append(name)
            await connection.send_tool_list_changed()

    def session_of(self, ctx: Any) -> str | None:
        """The Hermes session of a request: the ``X-Hermes-Session`` header when given, else the MCP session of the
        HTTP connection, else one per connection (stdio: the server's own); None in stateless HTTP without the
        header. A header that is not a plain id (1-128 of letters, digits and ``._:@-``) raises ``ValueError``."""
        headers = getattr(getattr(ctx, "request", None), "headers", None)
        given = headers.get(SESSION_HEADER) if headers is not None else None
        if given is not None:
            if not _SESSION_ID.match(given):
                raise ValueError(f"the {SESSION_HEADER} header must be 1 to 128 of letters, digits and '._:@-'")
            return str(given)
        if self.stateless:
            return None
        connection = getattr(ctx.session, "_connection", None)
        transport_session = getattr(connection, "session_id", None)
        if transport_session:
            return f"mcp-{transport_session}"
        if connection is None:
            return self.session_id
        session = self._connection_sessions.get(connection)
        if session is None:
            session = self._connection_sessions.setdefault(connection, self.session_id or new_session_id())
        return session

    def _approval_timeout(self) -> float:
        return self.runtime.dispatcher.approvals.timeout

    def _client(self, ctx: Any) -> ClientAnswers:
        """The answerers of the connection ``ctx`` came on (kept while the connection lives)."""
        connection = getattr(ctx.session, "_connection", None)
        if connection is None:
            return ClientAnswers(self._approval_timeout)
        answers = self._answers.get(connection)
        if answers is None:
            answers = self._answers[connection] = ClientAnswers(self._approval_timeout)
            connection.exit_stack.callback(self._answers.pop, connection, None)
        return answers

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name = self.registered_name(params.name)
        try:
            session = self.session_of(ctx)
        except ValueError as exc:
            return _error_result(str(exc))
        if session is None and name in _SESSION_TOOLS:
            return _error_result(f"tool '{name}' keeps its state in a session, and stateless HTTP has none: send "
                                 f"the header X-Hermes-Session: <your session id> with each request")
        call_id = f"mcp-{ctx.request_id}"
        call = partial(self.runtime.handle_function_call, name, params.arguments or {},
                       tool_call_id=call_id, session_id=session, enabled_tools=self._selected())
        # the call asks this client's user (elicitation) and model (sampling), and reports progress to it
        asks = self._client(ctx).callbacks(ctx, call_id)
        try:
            with caller_callbacks(user=asks.user, model=asks.model, approval=asks.approval, progress=asks.progress,
                                  notify=asks.notify):
                text = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            # a drain past its timeout (or a client gone) cancels the request; say which call was cut off
            self.abandoned += 1
            log.error("tool call %s (request %s) was cancelled before it finished; its thread may still be "
                      "running", params.name, ctx.request_id)
            raise
        finally:
            entry = self.runtime.registry.get(name)
            self._wrote = self._wrote or entry is None or not entry.read_only
        if name == TOOL_DESCRIBE and not is_error_result(text):
            await self._add_described(ctx, text)
        if session is not None and self.runtime.agent_state.recording:
            await anyio.to_thread.run_sync(partial(self.runtime.agent_state.record_calls, session,
                                                   [OneCall(name, params.arguments or {}, call_id)],
                                                   [text], source="mcp"))
        return types.CallToolResult(content=mcp_content(text, self.runtime.budget.media),
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

    async def reload_on_hangup(self) -> None:
        """On each SIGHUP, reload the plugins (:attr:`reload`) and tell the clients their lists changed. Nothing
        where there is no SIGHUP (Windows) or off the main thread (signals reach only the main thread)."""
        if self.reload is None or not hasattr(signal, "SIGHUP") \
                or threading.current_thread() is not threading.main_thread():
            return
        with anyio.open_signal_receiver(signal.SIGHUP) as signals:
            async for _ in signals:
                try:
                    report = await anyio.to_thread.run_sync(self.reload)
                except Exception as exc:  # a reload gone wrong must not end the server: it serves what it had
                    log.error("SIGHUP: plugins not reloaded: %s: %s", type(exc).__name__, exc)
                    continue
                changes = "; ".join(f"{what} {', '.join(ids)}" for what, ids in report.items()
                                    if ids and what != "kept") or "nothing changed"
                print(f"SIGHUP: plugins reloaded ({changes})", file=sys.stderr, flush=True)
                if changes != "nothing changed":
                    await self.notify_tools_changed()
                    await self.notify_prompts_changed()

    # -- transports ---------------------------------------------------------------------------

    async def serve_stdio(self, stdout: Any = None, stdin: CappedLines | None = None) -> None:
        """Serve one client over ``stdin`` (capped lines; default: the SDK's reading of the process's stdin) and
        ``stdout`` (an async text file; default: the process's stdout)."""
        count = len(await anyio.to_thread.run_sync(self.tools))
        print(f"Hermes MCP server on stdio, {count} tools", file=sys.stderr, flush=True)
        async with stdio_server(stdin=cast(Any, stdin), stdout=stdout) as (read_stream, write_stream), \
                anyio.create_task_group() as group:
            if stdin is not None:
                stdin.refuse = partial(_refuse_oversized, write_stream)
            group.start_soon(self.watch_registry)
            group.start_soon(self.reload_on_hangup)
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

        self.stateless = options.stateless
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
            group.start_soon(self.reload_on_hangup)
            await serve_app(app, sock, options, health)
            group.cancel_scope.cancel()


async def _refuse_oversized(write_stream: Any, request_id: int | str | None) -> None:
    """Answer a message over the line cap: an error for its request, or a log line when it named no id."""
    limit = f"over the {MAX_LINE_BYTES // (1024 * 1024)} MiB a message may have"
    if request_id is None:
        log.warning("dropped a message %s (it named no request id to answer)", limit)
        return
    error = types.ErrorData(code=types.INVALID_REQUEST, message=f"message refused: {limit}")
    await write_stream.send(SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)))
