"""``McpManager``: every configured MCP server's session on one background event-loop thread, and the
servers' tools in the registry as ``mcp__<server>__<tool>`` (toolset ``mcp-<server>``, alias ``<server>``).

Listing never waits for a server: :meth:`McpManager.load` registers each server's tools from its last
successful listing (``listing.py``), without a connection and without importing the ``mcp`` SDK. A server
is connected on the first call of one of its tools, by :meth:`McpManager.list_new` (a server never listed
yet, once, bounded by its ``connect_timeout``) or by :meth:`McpManager.connect`; every live listing is kept
for the next process.
"""

from __future__ import annotations

import atexit
import contextlib
import fnmatch
import json
import logging
import threading
import time
import weakref
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ..tools.registry import ToolAnnotations, ToolEntry, ToolRegistry, tool_entry
from ..tools.toolsets import ALL_NAMES, HERMES_AGENT_TOOLSETS, LEGACY_TOOLSETS, PRESETS, Toolsets
from .callers import Caller
from .listing import ListingCache
from .naming import ToolNames, log_file_name, toolset_name

if TYPE_CHECKING:
    import asyncio
    import concurrent.futures
    from collections.abc import Callable, Iterable, Mapping
    from pathlib import Path

    from ..calls.asking import Asking
    from ..config.model import McpServerConfig
    from ..media import ToolResult
    from .session import ServerConnection

__all__ = ["MAX_DEPTH", "McpManager", "ServerStatus"]

log = logging.getLogger(__name__)

#: Hermes MCP servers started by Hermes MCP clients stop starting stdio servers this deep.
MAX_DEPTH = 3
#: Extra seconds a synchronous caller waits beyond a server's own call timeout before giving up on the loop.
_SYNC_GRACE = 10.0


@dataclass
class ServerStatus:
    """What ``hermes mcp list`` shows about one configured server."""

    #: The server's name in ``mcp_servers``.
    name: str
    #: ``stdio``, ``http`` or ``sse``.
    transport: str
    #: ``connecting`` (never listed, or its first connection is under way), ``cached`` (its tools come from
    #: its last listing; not connected yet), ``ready``, ``unavailable``, ``disabled`` (in config.yaml),
    #: ``sdk-missing`` (the ``mcp`` extra is not installed), ``not-started`` (nested too deep) or ``closed``.
    state: str
    #: Registry names of the tools it contributes now.
    tools: list[str] = field(default_factory=list)
    #: Why it is not ready (or the last failure), else None.
    last_error: str | None = None
    #: The server's own name and version, once connected.
    server: str | None = None
    #: Tools it offers that were not registered, and why.
    skipped: dict[str, str] = field(default_factory=dict)
    #: ``notifications/tools/list_changed`` received, and re-lists done.
    list_changes: int = 0
    relists: int = 0
    #: Connection attempts so far.
    attempts: int = 0
    #: Where its stderr (and Hermes' notes about it) go.
    log_file: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Server:
    name: str
    #: Its ``mcp_servers`` entry as plain data, defaults filled in.
    config: dict[str, Any]
    names: ToolNames
    connection: ServerConnection | None = None
    #: Why it does not run, and its state for that reason (``disabled``, ``sdk-missing``, ``not-started``).
    disabled: str | None = None
    off_state: str = "disabled"
    tools: dict[str, ToolEntry] = field(default_factory=dict)
    fingerprints: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    first_attempt: threading.Event = field(default_factory=threading.Event)
    future: concurrent.futures.Future[None] | None = None
    #: Its tools were registered from its last listing.
    cached: bool = False
    #: Never listed, and its first connection failed lately (the error, with when): listings do not retry it.
    backoff: str | None = None

    @property
    def plugin(self) -> str:
        return f"mcp:{self.name}"


def selects(rules: Mapping[str, Any], tool: str) -> bool:
    """Whether a server's ``tools: {include, exclude}`` lets ``tool`` through (names or shell-style patterns)."""
    include, exclude = rules.get("include"), rules.get("exclude") or ()
    if include is not None and not any(fnmatch.fnmatchcase(tool, pattern) for pattern in include):
        return False
    return not any(fnmatch.fnmatchcase(tool, pattern) for pattern in exclude)


def transport(config: Mapping[str, Any]) -> str:
    """``stdio``, ``http`` or ``sse``: a server entry's ``type``, else ``http`` with a ``url``, else ``stdio``
    (``McpServerConfig.transport`` on the entry's plain data)."""
    return config.get("type") or ("http" if config.get("url") else "stdio")


def _plain(config: McpServerConfig | Mapping[str, Any]) -> dict[str, Any]:
    return config.model_dump(mode="json") if hasattr(config, "model_dump") else dict(config)


class _RemoteTool:
    """The registry handler of one remote tool: a synchronous call that hops onto the manager's loop."""

    __slots__ = ("manager", "original", "server")

    def __init__(self, manager: McpManager, server: str, original: str) -> None:
        self.manager = manager
        self.server = server
        self.original = original

    def __call__(self, args: dict[str, Any], **_context: Any) -> str | ToolResult:
        return self.manager.call(self.server, self.original, args, Caller.here(self.manager.asking))

    async def acall(self, args: dict[str, Any], **_context: Any) -> str | ToolResult:
        """The call from a coroutine (the async dispatch path awaits it without a thread)."""
        return await self.manager.acall(self.server, self.original, args, Caller.here(self.manager.asking))


class _Pending:
    """One synchronous caller's call on the loop: started there, waited for with a lock here."""

    __slots__ = ("done", "error", "result", "task")

    def __init__(self) -> None:
        self.done = threading.Lock()
        self.done.acquire()
        self.task: asyncio.Task[None] | None = None
        self.result: str | ToolResult | None = None
        self.error: BaseException | None = None

    def start(self, loop: asyncio.AbstractEventLoop, coroutine: Any) -> None:
        self.task = loop.create_task(self._run(coroutine))

    async def _run(self, coroutine: Any) -> None:
        import asyncio

        try:
            self.result = await coroutine
        except asyncio.CancelledError:
            self.error = RuntimeError("the MCP call was cancelled: Hermes is closing its MCP connections")
            raise
        except Exception as exc:
            self.error = exc
        finally:
            self.release()  # here, not in a done callback: the caller wakes one loop iteration sooner

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def release(self, error: BaseException | None = None) -> None:
        if error is not None and self.error is None and self.result is None:
            self.error = error
        with contextlib.suppress(RuntimeError):  # already released
            self.done.release()

    def outcome(self) -> str | ToolResult:
        if self.error is not None:
            raise self.error
        if self.result is None:
            raise RuntimeError("the MCP call did not run")
        return self.result


class McpManager:
    """Owns the event-loop thread, one connection per enabled server, and their tools in the registry.

    ``servers`` are the ``mcp_servers`` entries (models, or their plain data with defaults filled in);
    ``cache_dir`` keeps each server's last listing (None: no listing is kept); ``asking``: who answers the
    servers' questions (the runtime's user and model; None: nobody); ``token_dir``: where OAuth tokens live.
    """

    def __init__(self, registry: ToolRegistry, toolsets: Toolsets,
                 servers: Mapping[str, McpServerConfig | Mapping[str, Any]], log_dir: Path,
                 cache_dir: Path | None = None, asking: Asking | None = None, token_dir: Path | None = None) -> None:
        self.registry = registry
        self.asking = asking
        self.token_dir = token_dir
        #: The tools' callers may answer questions though the runtime has no user callback (``hermes mcp serve``
        #: asks each call's client): servers connected from now on are told the user can be asked.
        self.relays_questions = False
        self.toolsets = toolsets
        self.configured = {name: _plain(config) for name, config in servers.items()}
        self.log_dir = log_dir
        self.listings = ListingCache(cache_dir) if cache_dir is not None else None
        self._servers: dict[str, _Server] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._changed = threading.Condition()
        self._connect_lock = threading.Lock()
        self._pending: set[_Pending] = set()
        self._awaited: set[concurrent.futures.Future[str | ToolResult]] = set()
        self._closed = False

    # -- lifecycle ----------------------------------------------------------------------------

    def load(self) -> McpManager:
        """Register each enabled server's tools from its last listing: no connection, no ``mcp`` import."""
        for name, config in self.configured.items():
            if name in self._servers:
                continue
            server = self._servers[name] = _Server(name, config, ToolNames(name), disabled=None
                                                   if config.get("enabled", True) else "disabled in config.yaml")
            tools = self.listings.load(name, config) if self.listings and server.disabled is None else None
            if tools is not None:
                self._sync_tools(server, tools)
                server.cached = True
            elif self.listings and server.disabled is None and (failed := self.listings.failure(name, config)):
                error, age = failed
                server.backoff = f"{error} ({age:.0f} s ago; `hermes mcp list` retries now)"
        return self

    def start(self) -> McpManager:
        """Connect every enabled server; return once each has connected or failed its first attempt."""
        return self.connect(wait=True)

    def list_new(self, timeout: float | None = None,
                 waiting: Callable[[list[str]], None] | None = None) -> list[str]:
        """Connect the servers never listed yet and wait for their first attempt (each bounded by its
        ``connect_timeout``, all by ``timeout`` when given: ``mcp.list_timeout``): once per server, so later calls
        do not wait. ``waiting`` is told the names first. A server whose first attempt fails is not tried again
        by this for ``FAILURE_BACKOFF`` seconds, in this process or the next; one still connecting when
        ``timeout`` runs out goes on in the background (its listing is cached when it lands) and backs off as a
        failure does. Returns those."""
        self.load()
        fresh = [s for s in self._servers.values()
                 if s.disabled is None and not s.cached and s.backoff is None and s.future is None]
        if not fresh:
            return []
        if waiting is not None:
            waiting([s.name for s in fresh])
        self.connect([s.name for s in fresh], wait=True, timeout=timeout)
        pending = [s.name for s in fresh if s.connection is not None and not s.first_attempt.is_set()]
        for server in fresh:
            connection = server.connection
            if self.listings is not None and connection is not None and connection.state != "ready":
                error = (f"no answer within {timeout:g} s (mcp.list_timeout)" if server.name in pending else
                         connection.last_error or f"no answer within {server.config['connect_timeout']} s")
                self.listings.store_failure(server.name, server.config, error)
        return pending

    def connect(self, names: Iterable[str] | None = None, *, wait: bool = True,
                timeout: float | None = None) -> McpManager:
        """Start the connections of the enabled servers (``names``: only those) that have none yet — this
        imports ``mcp`` — and with ``wait`` return once each has connected or failed its first attempt (or
        ``timeout`` seconds have passed: those not done go on in the background)."""
        self.load()
        with self._connect_lock:
            if self._closed:
                return self
            chosen = [s for s in self._servers.values() if (names is None or s.name in names)
                      and s.disabled is None and s.connection is None]
            running = self._connections(chosen)
            if running:
                self._start_loop()
                import asyncio

                assert self._loop is not None
                for server in running:
                    assert server.connection is not None
                    server.future = asyncio.run_coroutine_threadsafe(
                        server.connection.run(server.first_attempt.set), self._loop)
        if wait and running:
            longest = max(s.config["connect_timeout"] for s in running) + 5.0
            deadline = time.monotonic() + (longest if timeout is None else min(timeout, longest))
            for server in running:
                server.first_attempt.wait(max(0.0, deadline - time.monotonic()))
        return self

    def _connections(self, servers: list[_Server]) -> list[_Server]:
        """Give ``servers`` their connections (the ``mcp`` SDK is imported here); those that can run."""
        if not servers:
            return []
        try:
            from .session import ServerConnection, nesting_depth
        except ImportError as exc:
            for server in servers:
                server.disabled = f"the 'mcp' package is not installed ({exc}); pip install 'hermes-tools[mcp]'"
                server.off_state = "sdk-missing"
            return []
        from ..config.model import McpServerConfig

        for server in servers:
            if server.config.get("command") and nesting_depth() >= MAX_DEPTH:
                server.disabled = f"not started: Hermes MCP servers are nested {nesting_depth()} deep"
                server.off_state = "not-started"
                continue
            server.connection = ServerConnection(server.name, McpServerConfig.model_validate(server.config),
                                                 self.log_dir / log_file_name(server.name), self,
                                                 partial(Caller, self.asking), elicitation=self.can_ask_user(),
                                                 token_dir=self.token_dir)
        return [s for s in servers if s.connection is not None]

    def can_ask_user(self) -> bool:
        """Whether a server's questions can reach a user (checked when it connects: its capability)."""
        return self.relays_questions or Caller.here(self.asking).who_answers_user() is None

    def _start_loop(self) -> None:
        if self._loop is not None:
            return
        import asyncio

        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run_loop, name="hermes-mcp", daemon=True)
        self._thread.start()
        _live.add(self)

    def _run_loop(self) -> None:
        import asyncio

        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.wait(pending, timeout=5.0))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()

    def close(self) -> None:
        """Disconnect every server (its child process included) and remove its tools."""
        if self._closed:
            return
        self._closed = True
        _live.discard(self)
        loop = self._loop
        running = [s for s in self._servers.values() if s.future is not None]
        if loop is not None and not loop.is_closed():
            for server in running:
                assert server.connection is not None
                loop.call_soon_threadsafe(server.connection.stop)
            # Each connection closes its child's stdin, then terminates its process group if it lingers.
            import concurrent.futures

            futures = [s.future for s in running if s.future is not None]
            concurrent.futures.wait(futures, timeout=20.0)
            for future in futures:
                future.cancel()
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(timeout=10.0)
        for pending in list(self._pending):  # calls whose task never ran or never finished
            pending.release(RuntimeError("Hermes closed its MCP connections during the call"))
        for awaited in list(self._awaited):
            awaited.cancel()
        for server in self._servers.values():
            self._remove_tools(server)
        self._notify()

    def __enter__(self) -> McpManager:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # -- what callers see ---------------------------------------------------------------------

    def status(self) -> list[ServerStatus]:
        """One status per configured server, in config order."""
        self.load()
        statuses = []
        for server in self._servers.values():
            connection = server.connection
            if connection is not None:
                state, error = connection.state, connection.last_error
            elif server.disabled is not None:
                state, error = server.off_state, server.disabled
            elif server.backoff is not None:
                state, error = "unavailable", server.backoff
            else:
                state, error = ("cached" if server.cached else "connecting"), None
            status = ServerStatus(server.name, transport(server.config), state,
                                  sorted(entry.name for entry in list(server.tools.values())), error,
                                  skipped=dict(server.skipped))
            if connection is not None:
                status.server = connection.server_info
                status.list_changes, status.relists = connection.list_changes, connection.relists
                status.attempts = connection.attempts
                status.log_file = str(connection.log_path)
            statuses.append(status)
        return statuses

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Block until ``predicate()`` holds (re-checked after every state or tool change) or ``timeout``."""
        with self._changed:
            return self._changed.wait_for(predicate, timeout)

    def check(self, name: str) -> bool:
        """The ``check_fn`` of a server's tools: raises with the reason while it cannot answer. Tools listed
        from the cache count as available until a connection shows otherwise (a call connects)."""
        server = self._servers[name]
        connection = server.connection
        if connection.state in ("ready", "connecting") if connection is not None else server.disabled is None:
            return True
        state = server.off_state if connection is None else connection.state
        reason = server.disabled if connection is None else connection.last_error
        raise RuntimeError(f"MCP server '{name}' is {state}" + (f": {reason}" if reason else ""))

    def _connected(self, name: str, *, wait: bool) -> tuple[ServerConnection, asyncio.AbstractEventLoop]:
        """Server ``name``'s connection and the manager's loop. A server not connected yet is connected now, and
        with ``wait`` one still connecting is waited for (at most its ``connect_timeout``)."""
        server = self._servers[name]
        if server.connection is None:
            self.connect([name], wait=False)
        connection = server.connection
        loop = self._loop
        if connection is None or loop is None or self._closed:
            raise RuntimeError(f"MCP server '{name}' is not connected" +
                               (f": {server.disabled}" if server.disabled else ""))
        if wait and connection.state == "connecting":
            self.wait_for(lambda: connection.state != "connecting", connection.config.connect_timeout + _SYNC_GRACE)
        return connection, loop

    def call(self, name: str, tool: str, arguments: dict[str, Any], caller: Caller | None = None
             ) -> str | ToolResult:
        """Call ``tool`` (the server's own name) of server ``name`` from any thread but the loop's; a server
        not connected yet is connected first (waiting at most its ``connect_timeout``). ``caller`` answers the
        server's questions during the call and hears its progress."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("an MCP tool cannot be called from the MCP event-loop thread itself")
        connection, loop = self._connected(name, wait=True)
        # A bare lock, not run_coroutine_threadsafe's future: the hop between threads is most of the
        # overhead a registry call adds to the remote call, and a lock is the cheapest way back.
        pending = _Pending()
        self._pending.add(pending)
        try:
            loop.call_soon_threadsafe(pending.start, loop, connection.call(tool, arguments, caller))
        except RuntimeError:  # the loop closed under us
            self._pending.discard(pending)
            raise RuntimeError(f"MCP server '{name}' is not connected") from None
        limit = connection.config.timeout + _SYNC_GRACE
        try:
            if not pending.done.acquire(timeout=limit):
                loop.call_soon_threadsafe(pending.cancel)
                raise TimeoutError(f"MCP server '{name}' did not answer within {limit:g} s")
        finally:
            self._pending.discard(pending)
        return pending.outcome()

    async def acall(self, name: str, tool: str, arguments: dict[str, Any], caller: Caller | None = None
                    ) -> str | ToolResult:
        """:meth:`call` from a coroutine on any event loop: the call runs on the manager's loop and is awaited
        without blocking the caller's; cancelling the awaiting task cancels the call. A server not connected
        yet is connected first, off the caller's loop (that imports ``mcp`` and waits for the handshake)."""
        import asyncio

        server = self._servers[name]
        on_own_loop = self._loop is not None and asyncio.get_running_loop() is self._loop
        if not on_own_loop and (server.connection is None or server.connection.state == "connecting"):
            connection, loop = await asyncio.to_thread(partial(self._connected, name, wait=True))
        else:
            connection, loop = self._connected(name, wait=False)
        if asyncio.get_running_loop() is loop:
            return await connection.call(tool, arguments, caller)
        future = asyncio.run_coroutine_threadsafe(connection.call(tool, arguments, caller), loop)
        self._awaited.add(future)
        limit = connection.config.timeout + _SYNC_GRACE
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), limit)
        except TimeoutError:
            raise TimeoutError(f"MCP server '{name}' did not answer within {limit:g} s") from None
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if future.cancelled() and not (task is not None and task.cancelling()):
                raise RuntimeError("the MCP call was cancelled: Hermes is closing its MCP connections") from None
            raise
        finally:
            self._awaited.discard(future)

    # -- Listener: called by connections on the loop thread ------------------------------------

    def on_state(self, connection: ServerConnection) -> None:
        self.registry.invalidate_checks()
        self._notify()

    def on_tools(self, connection: ServerConnection, tools: list[Any]) -> None:
        server = self._servers[connection.name]
        listed = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]
        try:
            self._sync_tools(server, listed)
            for original, reason in connection.rejected_tools.items():
                if server.skipped.get(original) != reason:
                    log.warning("MCP server %r: tool %r skipped: %s", server.name, original, reason)
                server.skipped[original] = reason
            if self.listings is not None:
                self.listings.store(server.name, server.config, listed)
        finally:
            self.registry.invalidate_checks()
            self._notify()

    # -- the registry -------------------------------------------------------------------------

    def _sync_tools(self, server: _Server, tools: list[dict[str, Any]]) -> None:
        """Make the registry hold exactly the listed (and selected) tools of ``server`` (MCP's wire form)."""
        registry = self.registry
        rules = server.config.get("tools") or {}
        listed = {tool["name"]: tool for tool in tools if selects(rules, tool["name"])}
        for original in [o for o in server.tools if o not in listed]:
            entry = server.tools.pop(original)
            server.fingerprints.pop(original, None)
            if registry.get(entry.name) is entry:
                registry.deregister(entry.name)
            server.names.forget(original)
        for original in [o for o in server.skipped if o not in listed]:
            del server.skipped[original]
        for original, tool in listed.items():
            name = server.names.registered(original)
            existing = registry.get(name)
            if existing is not None and existing.plugin != server.plugin:
                owner = f"toolset '{existing.toolset}'" + (f", plugin '{existing.plugin}'" if existing.plugin else "")
                reason = f"a tool named '{name}' already exists ({owner})"
                if server.skipped.get(original) != reason:
                    log.warning("MCP server %r: tool %r skipped: %s", server.name, original, reason)
                server.skipped[original] = reason
                continue
            server.skipped.pop(original, None)
            fingerprint = json.dumps(tool, sort_keys=True)
            if existing is not None and existing is server.tools.get(original) \
                    and server.fingerprints.get(original) == fingerprint:
                continue
            try:
                entry = self._entry(server, original, name, tool)
            except ValueError as exc:  # this tool's definition is unusable; the others are not
                log.warning("MCP server %r: tool %r skipped: %s", server.name, original, exc)
                server.skipped[original] = str(exc)
                continue
            if registry.register(entry):
                server.tools[original] = entry
                server.fingerprints[original] = fingerprint
            else:
                server.skipped[original] = registry.refusals[-1].reason if registry.refusals else "refused"
        if server.tools:
            self._add_alias(server.name)

    def _entry(self, server: _Server, original: str, name: str, tool: dict[str, Any]) -> ToolEntry:
        description = tool.get("description") or tool.get("title") or \
            f"{original} (a tool of MCP server '{server.name}')"
        parameters = dict(tool.get("inputSchema") or {})
        parameters.setdefault("type", "object")
        if parameters["type"] != "object" or not isinstance(parameters.get("properties", {}), dict):
            raise ValueError(f"malformed tool definition: its inputSchema must be an object schema (type "
                             f"{parameters['type']!r}, properties {type(parameters.get('properties')).__name__})")
        parameters.setdefault("properties", {})
        annotations = (ToolAnnotations.from_mcp(tool.get("annotations"))
                       if server.config.get("trust_annotations", True) else None)
        return tool_entry(name, toolset_name(server.name), _RemoteTool(self, server.name, original),
                          description=description, parameters=parameters, check_fn=partial(self.check, server.name),
                          plugin=server.plugin, annotations=annotations)

    def _add_alias(self, name: str) -> None:
        toolsets = self.toolsets
        target = toolset_name(name)
        current = toolsets.aliases().get(name)
        if current == target:
            return
        if current is not None or name in ALL_NAMES or name in PRESETS or name in HERMES_AGENT_TOOLSETS \
                or name in LEGACY_TOOLSETS \
                or toolsets.declared(name) or name in self.registry.toolsets():
            log.warning("MCP server %r: no toolset alias %r, a toolset of that name exists; use %r", name, name,
                        target)
            return
        toolsets.add_alias(name, target, f"mcp:{name}")

    def _remove_tools(self, server: _Server) -> None:
        registry = self.registry
        for entry in server.tools.values():
            if registry.get(entry.name) is entry:
                registry.deregister(entry.name)
        server.tools.clear()
        server.fingerprints.clear()
        if self.toolsets.aliases().get(server.name) == toolset_name(server.name):
            self.toolsets.remove_source(server.plugin)

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()


_live: weakref.WeakSet[McpManager] = weakref.WeakSet()


@atexit.register
def _close_live() -> None:
    """Managers still open when the interpreter exits take their child processes with them."""
    for manager in list(_live):
        try:
            manager.close()
        except Exception:
            log.debug("closing an MCP manager at exit failed", exc_info=True)
