"""Fixtures for the browser pack: the system's Chromium, pages served on 127.0.0.1, a runtime with the pack."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from hermes_core import Runtime


def scaled(seconds: float) -> float:
    """A subprocess timeout for this machine: ``seconds`` times ``HERMES_TEST_TIMEOUT_SCALE`` (default 1)."""
    return seconds * float(os.environ.get("HERMES_TEST_TIMEOUT_SCALE") or 1)


def chromium_or_skip() -> None:
    if not any(shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")):
        pytest.skip("Chromium is not installed (apt-get install chromium); .ci/run installs it")


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class PageServer:
    """A threaded HTTP server on 127.0.0.1: ``pages[path] = (status, headers, body)``; requests are recorded."""

    pages: dict[str, tuple[int, dict[str, str], bytes]] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    port: int = 0

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def add(self, path: str, body: str | bytes, *, status: int = 200, content_type: str = "text/html; charset=utf-8",
            headers: dict[str, str] | None = None) -> str:
        data = body.encode() if isinstance(body, str) else body
        self.pages[path] = (status, {"Content-Type": content_type, **(headers or {})}, data)
        return self.url(path)

    def paths(self) -> list[str]:
        return [urlsplit(request.path).path for request in self.received]


def _handler(server: PageServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            server.received.append(Received(self.command, self.path, dict(self.headers.items()), body))
            page = server.pages.get(urlsplit(self.path).path)
            if page is None:
                self.send_error(404)
                return
            status, headers, data = page
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def pages() -> Iterator[PageServer]:
    server = PageServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    httpd.daemon_threads = True
    server.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    httpd.shutdown()
    httpd.server_close()


def write_config(home: Path, **browser: Any) -> None:
    (home / "config.yaml").write_text(json.dumps({"browser": browser}), encoding="utf-8")  # JSON is YAML


@pytest.fixture
def browser_config(hermes_home: Path) -> Callable[..., None]:
    """Call it to write the runtime's ``browser:`` section (the default: loopback allowed, for the test pages)."""

    def write(**browser: Any) -> None:
        write_config(hermes_home, **browser)

    write(allow_private=True)
    return write


@pytest.fixture
def browser(hermes_runtime: Runtime, load_hermes_plugin: Callable[..., Any],
            browser_config: Callable[..., None]) -> Callable[..., dict[str, Any]]:
    """``browser(tool, **args)``: call a browser tool of a runtime with the pack loaded; the decoded result."""
    chromium_or_skip()
    load_hermes_plugin("hermes_plugin_browser")

    def call(name: str, /, session_id: str | None = None, **args: Any) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(hermes_runtime.handle_function_call(name, args, session_id=session_id))
        return result

    return call
