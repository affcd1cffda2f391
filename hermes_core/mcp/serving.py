"""``hermes mcp serve --transport http``: one process or N workers on one socket, health endpoints, and a
graceful drain on SIGTERM in the order a load balancer expects.

The drain: ``/readyz`` answers 503 for ``drain_grace`` seconds while calls are still served (health checks
take the replica out of rotation), then the listening socket closes, in-flight calls get ``drain_timeout``
seconds to finish (a call still running then is cancelled and logged), and the session-end hooks and
``Runtime.close()`` run before the process exits 0.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

log = logging.getLogger("hermes.serve")

__all__ = ["Health", "HealthRoutes", "HttpOptions", "bind", "serve_http", "serve_process", "supervise"]

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
                            timeout_graceful_shutdown=max(1, round(options.drain_timeout)))
    await _uvicorn_server_class()(config, health, options.drain_grace).serve(sockets=[sock])


def serve_process(options: HttpOptions, sock: socket.socket, health: Health | None = None) -> None:
    """One serving process: load plugins, run one session, serve ``sock`` until drained, then run the
    session-end hooks and close the runtime."""
    import anyio

    from ..runtime import Runtime
    from .server import HermesMcpServer

    health = health or Health()
    if threading.current_thread() is threading.main_thread():
        # SIGTERM while plugins load: serve nothing, but still end the session and close the runtime
        signal.signal(signal.SIGTERM, lambda sig, frame: setattr(health, "draining", True))
    runtime = Runtime(workspace=options.workspace)
    server: HermesMcpServer | None = None
    try:
        runtime.load_plugins()
        traced = runtime.config.observability.otel and _tracing_ready()
        with runtime.session(platform="mcp") as session_id:
            server = HermesMcpServer(runtime.filtered(read_only=True) if options.read_only else runtime,
                                     list(options.toolsets) or runtime.config.toolsets, session_id=session_id)
            anyio.run(server.serve_http, sock, options, health, traced)
    finally:
        runtime.close()
    if server is not None and server.abandoned:
        # A Python thread cannot be stopped, and the interpreter would wait for the cancelled calls' threads
        # at exit: the hooks and Runtime.close() have run, so leave now.
        log.warning("exiting with %d cancelled call(s) still running in their threads", server.abandoned)
        if "hermes_core.calls.tracing" in sys.modules:
            sys.modules["hermes_core.calls.tracing"].flush()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def _tracing_ready() -> bool:
    """Set up the tracer provider from ``OTEL_*`` now, before the first call; False without OpenTelemetry."""
    try:
        from ..calls.tracing import telemetry
    except ImportError:
        return False  # the runtime's dispatcher says so once, at the first call
    telemetry()
    return True


def _worker(options: HttpOptions, sock: socket.socket, started: Any) -> None:
    serve_process(options, sock, Health(on_ready=started.set))


class _Worker:
    """A worker process and the event it sets once it serves."""

    def __init__(self, context: Any, options: HttpOptions, sock: socket.socket) -> None:
        self.started = context.Event()  # held here: the child unpickles it after start() returns
        self.announced = False
        self.process = context.Process(target=_worker, args=(options, sock, self.started))
        self.process.start()


def supervise(options: HttpOptions, sock: socket.socket, poll: float = 0.5) -> int:
    """Run ``options.workers`` worker processes on ``sock`` (each loads the plugins itself); restart one that
    dies after it served, logging it; stop when one dies before it ever served (it would fail the same way
    again). On SIGTERM or SIGINT pass SIGTERM on so each worker drains; 0 when all exited 0."""
    context = multiprocessing.get_context("spawn")  # no fork: plugin threads and locks stay in their process
    stopping = threading.Event()

    def stop(sig: int, frame: FrameType | None) -> None:
        stopping.set()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    workers = [_Worker(context, options, sock) for _ in range(options.workers)]
    log.warning("supervisor %d: %d workers (%s)", os.getpid(), len(workers),
                ", ".join(str(worker.process.pid) for worker in workers))
    failed = False
    try:
        while not stopping.wait(poll):
            for index, worker in enumerate(workers):
                if worker.process.is_alive():
                    if not worker.announced and worker.started.is_set():
                        worker.announced = True
                        log.warning("worker %d serves", worker.process.pid)
                    continue
                if not worker.started.is_set():
                    log.error("worker %d exited (code %s) before it served; stopping", worker.process.pid,
                              worker.process.exitcode)
                    failed = True
                    stopping.set()
                    break
                workers[index] = _Worker(context, options, sock)
                log.warning("worker %d died (exit code %s); restarted as worker %d", worker.process.pid,
                            worker.process.exitcode, workers[index].process.pid)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for worker in workers:
            if worker.process.is_alive() and worker.process.pid is not None:
                os.kill(worker.process.pid, signal.SIGTERM)
        for worker in workers:
            worker.process.join()
    codes = [worker.process.exitcode for worker in workers]
    log.warning("supervisor %d: workers exited with %s", os.getpid(), codes)
    # a worker stopped while its interpreter still started had nothing to drain
    return 0 if not failed and all(w.process.exitcode == 0 for w in workers if w.started.is_set()) else 1


def serve_http(options: HttpOptions, sock: socket.socket) -> int:
    """Print the URL and serve ``sock`` in this process or in ``options.workers`` workers; the exit code."""
    print(f"Hermes MCP server listening on {url_of(sock, options.path)}"
          + (f" ({options.workers} workers)" if options.workers > 1 else ""), file=sys.stderr, flush=True)
    try:
        if options.workers > 1:
            return supervise(options, sock)
        serve_process(options, sock)
        return 0
    finally:
        sock.close()
