"""One MCP server's connection: transport, handshake, tool listing, calls, and reconnection with backoff.

Everything here runs on the manager's event-loop thread (see ``client.py``); this is the only module of
the client that imports the ``mcp`` SDK.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.to_thread
import httpx2
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from .._version import __version__
from ..config.model import McpServerConfig
from ..errors import McpCallError, McpLoginNeeded
from ..media import Media, ToolResult
from .answering import ServerQuestions
from .callers import Caller
from .oauth import connection_auth
from .tolerant import screen_tool_listing

__all__ = ["DEPTH_VARIABLE", "McpCallError", "ServerConnection", "result_of", "result_text"]

log = logging.getLogger(__name__)


class _QuietParseErrors(logging.Filter):
    """The SDK logs a traceback for every stdout line that is not JSON-RPC; the connection records it in the
    server's log file instead, so the agent's console stays clean."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Failed to parse JSONRPC message")


logging.getLogger("mcp.client.stdio").addFilter(_QuietParseErrors())

#: Set in the environment of stdio servers Hermes starts, so nested Hermes servers stop recursing.
DEPTH_VARIABLE = "HERMES_MCP_DEPTH"
#: First and largest pause between reconnection attempts, in seconds.
BACKOFF_FIRST, BACKOFF_MAX = 0.5, 30.0
#: A connection that lived this long resets the backoff.
STABLE_AFTER = 10.0
#: ``${NAME}``, ``${NAME:-default}`` (Claude Code's spelling) and ``${env:NAME}`` (VS Code's).
_ENV_REFERENCE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class Listener(Protocol):
    """What a connection tells its manager."""

    def on_tools(self, connection: ServerConnection, tools: list[types.Tool]) -> None: ...
    def on_state(self, connection: ServerConnection) -> None: ...


def expand_env(value: str) -> str:
    """``${NAME}`` (or ``${env:NAME}``) replaced by the environment variable, empty when it is unset or empty;
    ``${NAME:-default}`` by ``default`` then."""
    return _ENV_REFERENCE.sub(lambda match: os.environ.get(match.group(1)) or match.group(2) or "", value)


class _WatchedReadStream:
    """A transport's read stream that reports when it ends (the server closed its side), and takes the
    malformed tools out of a tool listing (into ``rejected``) before the SDK validates it."""

    def __init__(self, inner: Any, on_end: Callable[[], None], rejected: dict[str, str]) -> None:
        self._inner = inner
        self._on_end = on_end
        self._rejected = rejected
        #: The negotiated protocol version, once the session knows it.
        self.version: Callable[[], str | None] = lambda: None

    async def receive(self) -> Any:
        try:
            message = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise
        screen_tool_listing(message, self._rejected, self.version())
        return message

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:  # ``last_context`` and the like
        return getattr(self._inner, name)


class _HermesClientSession(ClientSession):
    """A client session that declares elicitation and sampling only when told to. Its callbacks are always set
    (the SDK would declare both then), so a server that asks without the capability still gets a decline or a
    reason, never "not supported" nor a hang."""

    def __init__(self, *args: Any, elicitation: bool, sampling: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._declared = {"elicitation": elicitation, "sampling": sampling}

    def _build_capabilities(self, version: str) -> types.ClientCapabilities:
        capabilities = super()._build_capabilities(version)
        return capabilities.model_copy(update={key: None for key, declared in self._declared.items() if not declared})


class _ProgressRelay:
    """Passes a call's progress notifications on to its reporter, in order (the SDK runs each in its own task),
    from a worker thread (a listener may block); the call waits for those in flight before it returns."""

    #: The longest a finished call waits for its last progress reports.
    DRAIN = 5.0

    def __init__(self, reporter: Callable[[float, float | None, str | None], None]) -> None:
        self.reporter = reporter
        self.lock = anyio.Lock()
        self.running = 0
        self.idle = anyio.Event()
        self.idle.set()

    async def report(self, progress: float, total: float | None, message: str | None) -> None:
        self.running += 1
        if self.idle.is_set():
            self.idle = anyio.Event()
        try:
            async with self.lock:
                await anyio.to_thread.run_sync(self.reporter, progress, total, message, abandon_on_cancel=True)
        finally:
            self.running -= 1
            if not self.running:
                self.idle.set()

    async def drain(self) -> None:
        with anyio.move_on_after(self.DRAIN):
            await self.idle.wait()


class ServerConnection:
    """Keeps one server connected: connect, list tools, serve calls, re-list on change, reconnect on loss.

    ``caller`` gives the answerers of what the server asks outside a call (the runtime's); ``elicitation``: declare
    that the user can be asked (sampling is declared when the user allowed it for this server)."""

    def __init__(self, name: str, config: McpServerConfig, log_path: Path, listener: Listener,
                 caller: Callable[[], Caller] = lambda: Caller(None), *, elicitation: bool = False,
                 token_dir: Path | None = None) -> None:
        self.name = name
        self.config = config
        self.log_path = log_path
        #: Where the OAuth tokens of ``auth: oauth`` servers live.
        self.token_dir = token_dir
        self.listener = listener
        self.elicitation = elicitation
        #: The answerers of the calls in progress, the latest last: a server's question goes to the latest.
        self.callers: list[Caller] = []
        self._caller = caller
        self.questions = ServerQuestions(name, config, self._asker, self._note)
        self.transport = config.transport
        self.state = "connecting"
        self.last_error: str | None = None
        self.server_info: str | None = None
        self.session: ClientSession | None = None
        #: Tools of the last listing that were malformed and left out: name -> reason.
        self.rejected_tools: dict[str, str] = {}
        self._rejecting: dict[str, str] = {}  # filled by the read stream during a listing
        self.attempts = 0
        self.list_changes = 0
        self.relists = 0
        self.protocol_errors = 0
        self._last_protocol_error = ""
        self.stopping = False
        self._stop: anyio.Event | None = None
        self._wake: anyio.Event | None = None
        self._scope: anyio.CancelScope | None = None
        self._relist: anyio.Event | None = None
        self._end_reason: str | None = None
        self._first_attempt_done: Callable[[], None] = lambda: None
        self._log_offset = 0

    # -- configuration ------------------------------------------------------------------------

    def problem(self) -> str | None:
        """Why the configuration cannot work, or None."""
        config = self.config
        if config.type is None and bool(config.command) == bool(config.url):
            return "set either 'command' (a stdio server) or 'url' (a streamable HTTP server), not both or neither"
        if config.transport == "stdio" and (not config.command or config.url):
            return "type 'stdio' needs a 'command' (and no 'url')"
        if config.transport != "stdio" and (not config.url or config.command):
            return f"type {config.transport!r} needs a 'url' (and no 'command')"
        return None

    # -- lifecycle ----------------------------------------------------------------------------

    async def run(self, first_attempt_done: Callable[[], None]) -> None:
        """Connect, and reconnect with backoff whenever the connection is lost, until ``stop``."""
        self._stop = anyio.Event()
        self._first_attempt_done = first_attempt_done
        delay = BACKOFF_FIRST
        try:
            while not self.stopping:
                self.attempts += 1
                started = time.monotonic()
                try:
                    with anyio.CancelScope() as self._scope:
                        await self._connect_and_serve()
                    reason = self._end_reason or "the server closed the connection"
                except Exception as exc:
                    reason = self._explain(exc)
                finally:
                    self.session = None
                first_attempt_done()
                if self.stopping:
                    break
                if time.monotonic() - started > STABLE_AFTER:
                    delay = BACKOFF_FIRST
                self._set_state("unavailable", reason)
                self._note(f"unavailable: {reason}; next attempt in {delay:g} s")
                with anyio.move_on_after(delay):
                    await self._stop.wait()
                delay = min(delay * 2, BACKOFF_MAX)
        finally:
            first_attempt_done()
            self._set_state("closed", self.last_error)

    def stop(self) -> None:
        """Ask ``run`` to end (call on the loop thread)."""
        self.stopping = True
        for event in (self._stop, self._wake):
            if event is not None:
                event.set()
        if self._scope is not None and self.state != "ready":
            self._scope.cancel()  # a handshake in progress would otherwise run to its timeout

    def lost(self, reason: str) -> None:
        """The connection is unusable (call on the loop thread): end this session and reconnect."""
        if self._wake is not None and not self._wake.is_set():
            self._end_reason = reason
            self._wake.set()
            if self.state == "ready":  # refuse new calls at once, not when the teardown is done
                self._set_state("unavailable", reason)

    async def _connect_and_serve(self) -> None:
        self._wake = anyio.Event()
        self._relist = anyio.Event()
        self._end_reason = None
        self.protocol_errors = 0
        if self.stopping:
            return
        async with contextlib.AsyncExitStack() as stack:
            read, write = await self._open_transport(stack)
            watched = _WatchedReadStream(read, lambda: self.lost(self._closed_reason()), self._rejecting)
            session = await stack.enter_async_context(_HermesClientSession(
                watched, write, message_handler=self._on_message,
                client_info=types.Implementation(name="hermes", version=__version__),
                elicitation_callback=self.questions.elicit, sampling_callback=self.questions.sample,
                sampling_capabilities=types.SamplingCapability(tools=types.SamplingToolsCapability()),
                elicitation=self.elicitation, sampling=self.config.sampling_settings is not None))
            watched.version = lambda: session.protocol_version
            timeout = self.config.connect_timeout
            try:
                with anyio.fail_after(timeout):
                    result = await session.initialize()
                    tools = await self._list_tools(session)
            except TimeoutError:
                raise TimeoutError(f"no answer to the MCP handshake within {timeout:g} s"
                                   + self._protocol_hint()) from None
            info = result.server_info
            self.server_info = f"{info.name} {info.version}".strip() if info else None
            self.session = session
            self.listener.on_tools(self, tools)
            self._set_state("ready", None)
            self._first_attempt_done()
            self._note(f"ready: {self.server_info or 'server'} with {len(tools)} tools")
            async with anyio.create_task_group() as group:
                group.start_soon(self._relist_loop, session)
                await self._wake.wait()
                group.cancel_scope.cancel()

    async def _open_transport(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        config = self.config
        problem = self.problem()
        if problem:
            raise ValueError(problem)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        errlog = stack.enter_context(open(self.log_path, "a", encoding="utf-8", errors="replace"))  # noqa: SIM115
        self._log_offset = errlog.tell()
        if config.url:
            url = expand_env(config.url)
            self._note(f"connecting to {url} ({config.transport})", errlog)
            headers = {key: expand_env(value) for key, value in config.headers.items()}
            auth = self._oauth(url)
            if config.transport == "sse":
                return await stack.enter_async_context(
                    sse_client(url, headers=headers, timeout=30.0, sse_read_timeout=config.timeout + 30.0, auth=auth))
            client = await stack.enter_async_context(
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=config.timeout + 30.0),
                                   auth=auth))
            return await stack.enter_async_context(streamable_http_client(url, http_client=client))
        depth = nesting_depth() + 1
        env = {key: expand_env(value) for key, value in config.env.items()}
        env[DEPTH_VARIABLE] = str(depth)
        params = StdioServerParameters(
            command=expand_env(config.command or ""), args=[expand_env(a) for a in config.args], env=env,
            cwd=os.path.expanduser(expand_env(config.cwd)) if config.cwd else None)
        self._note(f"starting {params.command} {' '.join(params.args)}".rstrip(), errlog)
        return await stack.enter_async_context(stdio_client(params, errlog=errlog))

    def _oauth(self, url: str) -> httpx2.Auth | None:
        """The OAuth of an ``auth: oauth`` server: its stored tokens, refreshed by the SDK (``LoginNeeded`` when
        there are none), else None."""
        if not self.config.uses_oauth:
            return None
        if self.token_dir is None:
            raise ValueError("OAuth needs Hermes' home for its tokens; this connection has none")
        return connection_auth(self.name, url, self.config.oauth, self.token_dir, expand_env)

    # -- tools --------------------------------------------------------------------------------

    async def _list_tools(self, session: ClientSession) -> list[types.Tool]:
        self._rejecting.clear()
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(1000):  # a paginator that never ends must not hang the connection
            page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        self.rejected_tools = dict(self._rejecting)
        return tools

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.protocol_errors += 1
            self._last_protocol_error = _protocol_error_text(message)
            self._note(f"ignored output that is not MCP: {self._last_protocol_error}")
        elif isinstance(message, types.LoggingMessageNotification):
            self._note(f"server log ({message.params.level}): {message.params.data}")
        elif isinstance(message, types.ToolListChangedNotification):
            self.list_changes += 1
            if self._relist is not None:
                self._relist.set()

    async def _relist_loop(self, session: ClientSession) -> None:
        while True:
            assert self._relist is not None
            await self._relist.wait()
            self._relist = anyio.Event()  # a change announced while listing triggers one more pass
            try:
                with anyio.fail_after(self.config.connect_timeout):
                    tools = await self._list_tools(session)
            except Exception as exc:
                self._note(f"re-listing tools failed: {self._explain(exc)}")
                log.warning("MCP server %r: re-listing tools failed: %s", self.name, self._explain(exc))
                continue
            self.relists += 1
            self.listener.on_tools(self, tools)

    # -- calls --------------------------------------------------------------------------------

    def _asker(self) -> Caller:
        """Who answers what the server asks now: the latest call in progress, else the runtime."""
        return self.callers[-1] if self.callers else self._caller()

    async def call(self, tool: str, arguments: dict[str, Any], caller: Caller | None = None) -> str | ToolResult:
        """Call ``tool`` (the server's own name); the result as text, with its images and sounds as media (saved
        by the dispatch), or ``McpCallError``. ``caller``: who answers the server's questions during the call and
        hears its progress."""
        session = self.session
        if session is None or self.state != "ready":
            raise McpCallError(f"MCP server '{self.name}' is {self.state}: {self.last_error or 'not connected'}")
        timeout = self.config.timeout
        relay = _ProgressRelay(caller.progress) if caller is not None and caller.progress else None
        if caller is not None:
            self.callers.append(caller)
        try:
            result = await session.call_tool(tool, arguments, read_timeout_seconds=timeout,
                                             progress_callback=relay.report if relay else None)
            if relay is not None:
                await relay.drain()
        except MCPError as exc:
            if exc.code == types.REQUEST_TIMEOUT:
                raise McpCallError(f"MCP server '{self.name}' did not answer within {timeout:g} s") from None
            if exc.code == types.CONNECTION_CLOSED:
                reason = self._closed_reason()
                self.lost(reason)
                raise McpCallError(f"MCP server '{self.name}' went away during the call: {reason}") from None
            raise McpCallError(f"MCP server '{self.name}' refused the call: {exc.error.message}") from None
        except (httpx2.HTTPError, OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            reason = self._explain(exc)
            self.lost(reason)
            raise McpCallError(f"MCP server '{self.name}' could not be reached: {reason}") from None
        except RuntimeError as exc:  # e.g. structured content that does not match the tool's output schema
            raise McpCallError(f"MCP server '{self.name}' returned an invalid result: {exc}") from None
        finally:
            if caller is not None:
                self.callers.remove(caller)
        if result.is_error:
            raise McpCallError(_error_message(result_text(result))
                               or f"MCP tool '{tool}' reported an error without a message")
        return result_of(result)

    # -- bookkeeping --------------------------------------------------------------------------

    def _set_state(self, state: str, error: str | None) -> None:
        self.state = state
        if error is not None or state == "ready":
            self.last_error = error
        self.listener.on_state(self)

    def _note(self, text: str, stream: Any = None) -> None:
        """A line about the connection in the server's log file, beside its stderr."""
        line = f"[hermes {time.strftime('%Y-%m-%d %H:%M:%S')}] {text}\n"
        try:
            if stream is not None:
                stream.write(line)
                stream.flush()
            else:
                with open(self.log_path, "a", encoding="utf-8") as handle:
                    handle.write(line)
        except OSError:
            pass

    def _closed_reason(self) -> str:
        tail = self._stderr_tail()
        what = "the server process exited" if self.transport == "stdio" else "the server closed the connection"
        return f"{what} (stderr: {tail})" if tail else what

    def _stderr_tail(self) -> str:
        """The last line the server wrote to stderr during this connection."""
        try:
            with open(self.log_path, "rb") as handle:
                handle.seek(max(self._log_offset, handle.seek(0, os.SEEK_END) - 4096))
                lines = handle.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        lines = [line.strip() for line in lines if line.strip() and not line.startswith("[hermes ")]
        return lines[-1][:300] if lines else ""

    def _protocol_hint(self) -> str:
        if not self.protocol_errors:
            return ""
        return f"; it wrote {self.protocol_errors} line(s) that are not MCP messages, the last: " \
               f"{self._last_protocol_error}"

    def _explain(self, exc: BaseException) -> str:
        exc = _leaf(exc)
        if isinstance(exc, McpLoginNeeded):
            return str(exc)
        if isinstance(exc, FileNotFoundError) and self.transport == "stdio":
            return f"cannot start {self.config.command!r}: command not found"
        if isinstance(exc, MCPError):
            if exc.code == types.CONNECTION_CLOSED:
                return self._closed_reason()
            return f"MCP error {exc.code}: {exc.error.message}"
        if isinstance(exc, httpx2.HTTPError):
            return f"{type(exc).__name__}: {exc}"
        text = str(exc) or type(exc).__name__
        return text if isinstance(exc, TimeoutError | ValueError) else f"{type(exc).__name__}: {text}"


def _error_message(text: str) -> str:
    """An error result's message; Hermes' own ``{"error": "..."}`` JSON (from another Hermes) unwrapped."""
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        if isinstance(value, dict) and isinstance(value.get("error"), str):
            return value["error"]
    return text


def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _protocol_error_text(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            return repr(first.get("input"))[:200]
        except Exception:
            pass
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def nesting_depth() -> int:
    """How many Hermes MCP clients started this process (through stdio servers)."""
    try:
        return int(os.environ.get(DEPTH_VARIABLE, "0"))
    except ValueError:
        return 0


def result_of(result: types.CallToolResult) -> str | ToolResult:
    """A tool result as the model reads it: text blocks as text; images and sounds (as content, or as embedded
    resources of those types) as media, which the dispatch saves in the results folder within its cap; other
    blocks described."""
    parts = _parts(result)
    if any(isinstance(part, Media) for part in parts):
        return ToolResult(*parts)
    return "\n".join(part for part in parts if isinstance(part, str))


def result_text(result: types.CallToolResult) -> str:
    """A tool result as text only (its media described, not kept): what an error result says."""
    return "\n".join(part if isinstance(part, str) else f"[{part.mime_type}, not shown]" for part in _parts(result))


def _parts(result: types.CallToolResult) -> list[str | Media]:
    parts: list[str | Media] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            parts.append(Media.from_base64(block.data, block.mime_type))
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            mime_type = resource.mime_type or ""
            if isinstance(resource, types.TextResourceContents):
                parts.append(resource.text)
            elif mime_type.startswith(("image/", "audio/")):
                parts.append(Media.from_base64(resource.blob, mime_type))
            else:
                parts.append(f"[resource {resource.uri} ({mime_type or 'binary'}), not shown]")
        elif isinstance(block, types.ResourceLink):
            parts.append(f"[resource link: {block.uri}" + (f" - {block.description}" if block.description else "")
                         + "]")
    if not parts and result.structured_content is not None:
        return [json.dumps(result.structured_content, ensure_ascii=False)]
    return parts
