"""``hermes mcp serve --transport http`` as processes: one serving process, or a supervisor of N workers on one
socket that restarts a worker that dies; each process loads the plugins, runs one session and drains on
SIGTERM (:mod:`hermes_core.mcp.serving`)."""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from ..mcp.serving import Health, HttpOptions, url_of

if TYPE_CHECKING:
    from ..mcp.server import HermesMcpServer
    from ..runtime import Runtime

__all__ = ["serve_http", "serve_process", "session_server", "supervise"]

log = logging.getLogger("hermes.serve")


@contextmanager
def session_server(workspace: Path, toolsets: Iterable[str],
                   read_only: bool) -> Iterator[tuple[Runtime, HermesMcpServer]]:
    """A runtime with its plugins loaded, one session for the server's life (its calls belong to it) and the
    server over it; when the block ends, the session-end hooks run and the runtime closes."""
    from ..mcp.server import HermesMcpServer
    from ..runtime import Runtime

    runtime = Runtime(workspace=workspace)
    try:
        runtime.load_plugins()
        if runtime.mcp is not None:  # the servers Hermes uses may ask this server's clients (elicitation chains)
            runtime.mcp.relays_questions = True
        with runtime.session(platform="mcp") as session_id:
            server = HermesMcpServer(runtime.filtered(read_only=True) if read_only else runtime,
                                     list(toolsets) or runtime.config.toolsets, session_id=session_id)
            server.reload = runtime.reload_plugins  # on SIGHUP
            yield runtime, server
    finally:
        runtime.close()


def serve_process(options: HttpOptions, sock: socket.socket, health: Health | None = None) -> None:
    """One serving process: load plugins, run one session, serve ``sock`` until drained, then run the
    session-end hooks and close the runtime."""
    import anyio

    health = health or Health()
    if threading.current_thread() is threading.main_thread():
        # SIGTERM while plugins load: serve nothing, but still end the session and close the runtime
        signal.signal(signal.SIGTERM, lambda sig, frame: setattr(health, "draining", True))
    with session_server(options.workspace, options.toolsets, options.read_only) as (runtime, server):
        traced = runtime.config.observability.otel and _tracing_ready()
        anyio.run(server.serve_http, sock, options, health, traced)
    if server.abandoned:
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
        for worker in workers:
            if worker.process.is_alive() and worker.process.pid is not None:
                os.kill(worker.process.pid, signal.SIGTERM)
        for worker in workers:
            worker.process.join()  # a second signal meanwhile changes nothing: the workers are draining
        for sig, handler in previous.items():
            signal.signal(sig, handler)
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
