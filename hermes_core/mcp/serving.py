"""Streamable HTTP for ``hermes mcp serve``: the listening socket, health endpoints, and a graceful drain on
SIGTERM in the order a load balancer expects (the processes and workers are :mod:`hermes_core.cli.serve`'s).

The drain: ``/readyz`` answers 503 for ``drain_grace`` seconds while calls are still served (health checks
take the replica out of rotation), then the listening socket closes, in-flight calls get ``drain_timeout``
seconds to finish (a call still running then is cancelled and logged), and the session-end hooks and
``Runtime.close()`` run before the process exits 0.

Idle and half-sent connections are closed: a client has ``header_timeout`` seconds from connecting (or from the
first byte of its next request) to send a request's headers, then ``body_timeout`` seconds to send its body (a
body sent a byte at a time holds a connection no longer), and a kept-alive connection that sends nothing is
closed after :data:`KEEP_ALIVE_SECONDS` (uvicorn has the last deadline, this module adds the first two).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Final

log = logging.getLogger("hermes.serve")

#: Seconds a kept-alive connection may stay idle between requests.
KEEP_ALIVE_SECONDS: Final = 5

__all__ = ["Health", "HealthRoutes", "HttpOptions", "bind", "serve_app", "url_of"]

@dataclass(frozen=True)
class HttpOptions:
    """What ``hermes mcp serve --transport http`` was asked for (picklable: workers get a copy)."""

    workspace: Path
    toolsets: tuple[str, ...] = ()
    read_only: bool = False
    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    token: str | None = None
    stateless: bool = False
    workers: int = 1
    drain_grace: float = 5.0
    drain_timeout: float = 30.0
    header_timeout: float = 10.0
    body_timeout: float = 30.0


class Health:
    """The state ``/healthz`` and ``/readyz`` report: ready once plugins are loaded and the socket serves."""

    def __init__(self, on_ready: Callable[[], object] | None = None) -> None:
        self.ready = False
        self.draining = False
        self.on_ready = on_ready

    def mark_ready(self) -> None:
        self.ready = True
        if self.on_ready is not None:
            self.on_ready()


_HEALTH_PATHS = frozenset({"/healthz", "/readyz"})


class HealthRoutes:
    """ASGI middleware answering ``GET /healthz`` (200 while alive) and ``GET /readyz`` (200 when ready, 503
    before and while draining) ahead of any bearer check: they reveal the state and nothing else."""

    def __init__(self, app: Any, health: Health) -> None:
        self.app = app
        self.health = health

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] not in _HEALTH_PATHS:
            await self.app(scope, receive, send)
            return
        if scope["method"] not in ("GET", "HEAD"):
            status, state = 405, b"method not allowed"
        elif scope["path"] == "/healthz":
            status, state = 200, b"alive"
        elif self.health.draining:
            status, state = 503, b"draining"
        else:
            status, state = (200, b"ready") if self.health.ready else (503, b"starting")
        body = b'{"status": "' + state + b'"}'
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"cache-control", b"no-store"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


def _uvicorn_server_class() -> Any:
    import uvicorn

    class DrainingServer(uvicorn.Server):
        """uvicorn's server, with SIGTERM first marking the server draining for ``grace`` seconds; uvicorn's
        own shutdown then stops accepting and waits ``timeout_graceful_shutdown`` for in-flight requests.
        SIGINT skips the grace; a second signal stops at once. The signal is not re-raised at the end, so a
        drained server exits 0."""

        def __init__(self, config: Any, health: Health, grace: float) -> None:
            super().__init__(config)
            self.health = health
            self.grace = grace
            self.drain_deadline: float | None = None

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            originals = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in originals.items():
                    signal.signal(sig, handler)

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if sig == signal.SIGTERM and self.drain_deadline is None and not self.should_exit:
                self.health.draining = True
                self.drain_deadline = time.monotonic() + self.grace
                log.warning("SIGTERM: draining; /readyz answers 503 for %g s, then new connections are refused "
                            "and in-flight calls get %g s", self.grace, self.config.timeout_graceful_shutdown)
                return
            self.health.draining = True
            super().handle_exit(sig, frame)

        async def on_tick(self, counter: int) -> bool:
            if self.drain_deadline is not None and not self.should_exit and time.monotonic() >= self.drain_deadline:
                log.warning("drain grace over: refusing new connections, finishing in-flight calls")
                self.should_exit = True
            return bool(await super().on_tick(counter))

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.health.draining:  # told to stop before it served: nobody routes to it yet
                self.should_exit = True
            elif self.started:
                self.health.mark_ready()

    return DrainingServer


def _request_deadlines(header_timeout: float, body_timeout: float) -> type:
    """uvicorn's HTTP protocol (h11, or httptools when installed), closing a connection whose request headers do
    not arrive within ``header_timeout`` seconds of its start, or of the first byte of its next request, or whose
    request body does not arrive within ``body_timeout`` seconds of its headers."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    limits = {"headers": header_timeout, "body": body_timeout}

    class RequestDeadlines(AutoHTTPProtocol):  # type: ignore[misc,valid-type]
        _deadline: asyncio.TimerHandle | None = None
        #: What the client is due to send now: ``headers``, ``body``, or nothing (None).
        _due: str | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._follow()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._follow()

        def connection_lost(self, exc: Exception | None) -> None:
            self._arm(None)
            super().connection_lost(exc)

        def _awaited(self) -> str | None:
            if self.cycle is None or self.cycle.response_complete:
                return "headers"
            return "body" if self.cycle.more_body else None

        def _follow(self) -> None:
            """Start the deadline of what is due now, when that changed (a phase's deadline is not reset by the
            bytes that arrive within it)."""
            due = self._awaited()
            if due != self._due:
                self._arm(due)

        def _arm(self, due: str | None) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            self._due = due
            if due is not None:
                self._deadline = self.loop.call_later(limits[due], self._too_slow, due)

        def _too_slow(self, due: str) -> None:
            self._deadline = None
            if self._awaited() == due and not self.transport.is_closing():
                log.info("closing a connection whose request %s did not arrive within %g s", due, limits[due])
                self.transport.close()

    return RequestDeadlines


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (0 picks a free port), listening before anyone is told the URL."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def url_of(sock: socket.socket, path: str) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{path}"


async def serve_app(app: Any, sock: socket.socket, options: HttpOptions, health: Health) -> None:
    """Serve ``app`` (health routes in front) on ``sock`` until a signal has drained it."""
    import uvicorn

    config = uvicorn.Config(HealthRoutes(app, health), log_level="warning", lifespan="on",
                            timeout_graceful_shutdown=max(1, round(options.drain_timeout)),
                            http=_request_deadlines(options.header_timeout, options.body_timeout),
                            timeout_keep_alive=KEEP_ALIVE_SECONDS)
    await _uvicorn_server_class()(config, health, options.drain_grace).serve(sockets=[sock])
