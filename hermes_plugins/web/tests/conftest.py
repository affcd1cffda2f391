"""Fixtures for the web pack: an isolated HERMES_HOME and real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from hermes_core import Runtime


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    content_type: str | None = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    send_length: bool = True  # False: no Content-Length, the body ends when the connection closes
    stall: bool = False  # hold the response back until the test ends
    drip: float = 0.0  # > 0: send the whole response one byte at a time, this many seconds apart


@dataclass
class Request:
    path: str
    headers: dict[str, str]


class LocalServer:
    """A threaded HTTP server on 127.0.0.1 that answers the routes a test adds and records requests."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.routes: dict[str, Route] = {}
        self.requests: list[Request] = []
        self.release = threading.Event()
        self._httpd = ThreadingHTTPServer((host, 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    def url(self, path: str = "/") -> str:
        return f"http://{self.host}:{self.port}{path}"

    def add(self, path: str, body: bytes | str = b"", **route: Any) -> str:
        """Serve ``body`` at ``path``; returns the route's URL."""
        self.routes[path] = Route(body=body.encode() if isinstance(body, str) else body, **route)
        return self.url(path)

    def paths(self) -> list[str]:
        return [urlsplit(request.path).path for request in self.requests]

    def close(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def _handler_for(server: LocalServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            server.requests.append(Request(self.path, dict(self.headers.items())))
            route = server.routes.get(urlsplit(self.path).path)
            if route is None:
                self.send_error(404)
                return
            if route.stall:
                server.release.wait(30)
                return
            if route.drip:
                self._drip(route)
                return
            self.send_response(route.status)
            if route.content_type:
                self.send_header("Content-Type", route.content_type)
            if route.send_length:
                self.send_header("Content-Length", str(len(route.body)))
            for name, value in route.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(route.body)

        def _drip(self, route: Route) -> None:
            headers = {"Content-Type": route.content_type, **route.headers, "Content-Length": len(route.body)}
            head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
            raw = f"HTTP/1.1 {route.status} OK\r\n{head}\r\n".encode() + route.body
            for byte in raw:
                if server.release.wait(route.drip):
                    return
                try:
                    self.wfile.write(bytes([byte]))
                except OSError:  # the client gave up
                    return

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def make_server() -> Iterator[Callable[..., LocalServer]]:
    """Start more servers on demand (on any loopback address); all are closed when the test ends."""
    servers: list[LocalServer] = []

    def make(host: str = "127.0.0.1") -> LocalServer:
        servers.append(LocalServer(host))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


@pytest.fixture
def local_server(make_server: Callable[..., LocalServer]) -> LocalServer:
    return make_server()


@pytest.fixture(autouse=True)
def web_handlers(hermes_runtime: Runtime) -> Iterator[None]:
    """The tests call the handler functions directly, as the testing kit's runtime would for the web plugin."""
    with hermes_runtime.tool_context("web").activate():
        yield


@pytest.fixture
def web_config(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Isolate the provider env vars; call it to write the runtime's config.yaml."""
    home = hermes_home
    for name in ("SEARXNG_URL", "BRAVE_API_KEY"):
        monkeypatch.delenv(name, raising=False)

    def write(*, allow_private_networks: bool = False, **settings: Any) -> None:
        config = {
            "web": {"allow_private_networks": allow_private_networks},
            "plugins": {"entries": {"web": {"settings": settings}}},
        }
        (home / "config.yaml").write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML

    write()
    return write
