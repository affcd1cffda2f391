"""The pytest plugin for plugin authors (registered through the ``pytest11`` entry point).

Fixtures:

- ``hermes_home``: an isolated, empty ``HERMES_HOME`` for the test.
- ``hermes_workspace``: an empty folder, the workspace of ``hermes_runtime``.
- ``hermes_runtime``: a fresh :class:`~hermes_core.Runtime` over those two that discovers nothing by itself.
- ``load_hermes_plugin``: load a plugin from a folder path or an importable module name into that runtime
  (an installed module keeps the id of its ``hermes_agent.plugins`` entry point; otherwise the manifest's name).
- ``call_tool``: call a tool through ``handle_function_call`` (hooks included) and decode JSON results.
- ``manifest_drift``: where a plugin's ``plugin.yaml`` and its ``@tool`` functions disagree (``[]`` when they
  do not), as ``hermes plugins validate --imports`` reports it.
- ``result_media``: the images and sounds a result of ``hermes_runtime`` carries (what a reply would attach).
- ``local_http``: a real HTTP server on 127.0.0.1 (:class:`LocalHttp`) that answers the routes a test sets and
  records every request, to stand in for the API a tool calls.

Helpers: :func:`scaled_timeout` turns a test's hang bound into one that holds on a slow or busy machine;
:func:`png_image` makes a real PNG of any size (cheaply, even 20 000 × 20 000) for tools that read images;
:func:`imports_of` says which modules importing one module loads (a check every listing runs should stay light).
"""

from __future__ import annotations

import json
import os
import re
import ssl
import struct
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from ..calls.approval import set_approval_callback
from ..media import Attachment
from ..plugins.discovery import candidate_for_validation, candidate_from_module
from ..plugins.records import PluginRecord
from ..runtime import Runtime

__all__ = ["HttpRequest", "LocalHttp", "call_tool", "hermes_home", "hermes_runtime", "hermes_workspace",
           "imports_of", "load_hermes_plugin", "local_http", "manifest_drift", "png_image", "result_media",
           "scaled_timeout"]

MODULE_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
TIMEOUT_SCALE_VARIABLE = "HERMES_TEST_TIMEOUT_SCALE"


def timeout_scale() -> float:
    """How much longer than on an idle machine a test may wait: ``HERMES_TEST_TIMEOUT_SCALE`` when set, else the
    run queue per core (the 1-minute load average over the CPU count, at least 1): a step that takes 3 s idle
    takes 35 s on two cores shared by ten busy jobs, and a fixed bound then fails a test that did not hang."""
    given = os.environ.get(TIMEOUT_SCALE_VARIABLE, "").strip()
    if given:
        try:
            scale = float(given)
        except ValueError:
            raise ValueError(f"{TIMEOUT_SCALE_VARIABLE} must be a number, not {given!r}") from None
        if scale <= 0:
            raise ValueError(f"{TIMEOUT_SCALE_VARIABLE} must be above 0, not {given!r}")
        return scale
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # Windows has no load average
        return 1.0
    return max(1.0, load / (os.cpu_count() or 1))


def scaled_timeout(seconds: float) -> float:
    """``seconds`` (the bound that holds on an idle machine) times :func:`timeout_scale`: pass it as the
    ``timeout=`` of a subprocess or a wait that only guards against a hang."""
    return seconds * timeout_scale()


@pytest.fixture
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home folder of this test (also set as ``HERMES_HOME``); plugin-selection variables are cleared."""
    home = tmp_path / "hermes-home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HERMES_HOME", str(home))
    for name in ("HERMES_ENABLE_PROJECT_PLUGINS", "HERMES_LOAD_PLUGINS", "HERMES_SAFE_MODE"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def hermes_workspace(tmp_path: Path) -> Path:
    """An empty folder: the workspace of ``hermes_runtime`` (file tools work and commands start there)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    return workspace


@pytest.fixture
def hermes_runtime(hermes_home: Path, hermes_workspace: Path) -> Iterator[Runtime]:
    """A runtime of its own over ``hermes_home`` and ``hermes_workspace``: nothing is discovered (plugins come
    only from ``load_hermes_plugin``), and no tools, hooks or approvals leak in from other tests. Approval
    requests go to the process-wide callback, reset to the default (refuse without a terminal) meanwhile."""
    runtime = Runtime(home=hermes_home, workspace=hermes_workspace, entry_points=())
    previous = set_approval_callback(None)
    yield runtime
    set_approval_callback(previous)
    runtime.close()


@pytest.fixture
def load_hermes_plugin(hermes_runtime: Runtime) -> Callable[..., PluginRecord]:
    """``load_hermes_plugin(path_or_module, plugin_id=None)``: load one plugin, failing the test if it errs.

    A ``Path`` (or a string that is not a dotted module name) is a plugin folder; a module name is a package
    (an installed one keeps the id of its ``hermes_agent.plugins`` entry point, else its manifest's name).
    """

    def load(target: str | Path, plugin_id: str | None = None) -> PluginRecord:
        # a dotted name is a module even when a folder of that name is in the working directory
        if isinstance(target, Path) or not MODULE_NAME.fullmatch(str(target)):
            record = hermes_runtime.load_plugin_from_path(Path(target), plugin_id)
        else:
            record = hermes_runtime.load_candidate(candidate_from_module(str(target), plugin_id))
        if record.state == "error":
            pytest.fail(f"plugin {record.id!r} failed to load: {record.reason}")
        return record

    return load


@pytest.fixture
def call_tool(hermes_runtime: Runtime) -> Callable[..., Any]:
    """``call_tool(name, **args)``: the result through ``handle_function_call``, JSON decoded when it is JSON; the
    call's ``post_tool_call`` observers have run when it returns (see :meth:`~hermes_core.Runtime.flush_hooks`)."""

    def call(name: str, /, **args: Any) -> Any:
        result = hermes_runtime.handle_function_call(name, args)
        hermes_runtime.flush_hooks()
        try:
            return json.loads(result)
        except ValueError:
            return result

    return call


@pytest.fixture
def manifest_drift() -> Callable[..., list[str]]:
    """``manifest_drift(path_or_module)``: each way ``plugin.yaml`` and the plugin's ``@tool`` functions disagree
    (a parameter on one side only, a type, required-ness, a description, ...); imports the modules that hold
    them, never ``register()``. ``hermes plugins compile`` makes the list empty."""
    from .compile import manifest_drift as drift

    def check(target: str | Path) -> list[str]:
        if isinstance(target, Path) or not MODULE_NAME.fullmatch(str(target)):
            candidate = candidate_for_validation(Path(target))
            if candidate is None:
                pytest.fail(f"{target}: no plugin.yaml found")
        else:
            candidate = candidate_from_module(str(target))
        problems, warnings = drift(candidate, imports=True)
        return [*problems, *(f"warning: {warning}" for warning in warnings)]

    return check


@pytest.fixture
def result_media(hermes_runtime: Runtime) -> Callable[[str], list[Attachment]]:
    """``result_media(result)``: the media a result of ``hermes_runtime`` names that a reply would attach, each with
    its saved file (``.saved.path``, ``.saved.mime_type``), its bytes (``.data``) and header (``.info``)."""
    return hermes_runtime.budget.media.attachments


def png_image(width: int, height: int, color: tuple[int, int, int] = (0, 0, 0)) -> bytes:
    """A valid PNG of ``width`` × ``height`` pixels of one ``color`` (8-bit RGB). Large ones are cheap to make and
    small on disk (a 20 000 × 20 000 image is about a megabyte: a decompression bomb for whoever decodes it)."""
    row = b"\0" + bytes(color) * width
    rows_per_block = max(1, min(height, 4_000_000 // len(row)))
    blocks, rest = divmod(height, rows_per_block)
    block = row * rows_per_block
    compressor = zlib.compressobj(9)
    # after a full flush the compressor starts afresh, so each further block of the same rows compresses to the
    # same bytes: compress it once and repeat them; zlib's trailing checksum is then computed here over it all
    first = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH) if blocks > 1 else b""
    end = compressor.compress(row * rest) + compressor.flush()
    checksum = 1
    for _ in range(blocks):
        checksum = zlib.adler32(block, checksum)
    checksum = zlib.adler32(row * rest, checksum)
    stream = first + again * (blocks - 1) + end[:-4] + struct.pack(">I", checksum)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", stream) + chunk(b"IEND", b"")


@dataclass(frozen=True)
class HttpRequest:
    """A request :class:`LocalHttp` received."""

    method: str
    path: str  #: with its query string
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


#: What a route answers: ``(status, headers, body)``; a dict or list body is sent as JSON.
HttpAnswer = tuple[int, dict[str, str], bytes | str | dict[str, Any] | list[Any]]


@dataclass
class LocalHttp:
    """A threaded HTTP server on 127.0.0.1: ``route(method, path, answer)`` sets what a path answers (a fixed
    :data:`HttpAnswer` or a function of the :class:`HttpRequest`); an unknown path is a 404. Every request is kept
    in :attr:`requests`. Given a server-side ``tls`` context (e.g. from ``trustme``), it speaks HTTPS."""

    tls: ssl.SSLContext | None = None
    requests: list[HttpRequest] = field(default_factory=list)
    _routes: dict[tuple[str, str], HttpAnswer | Callable[[HttpRequest], HttpAnswer]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _http_handler(self))
        self._httpd.daemon_threads = True
        if self.tls is not None:
            self._httpd.socket = self.tls.wrap_socket(self._httpd.socket, server_side=True)
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def host(self) -> str:
        """``127.0.0.1:<port>``."""
        return f"127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}{path}"

    def route(self, method: str, path: str, answer: HttpAnswer | Callable[[HttpRequest], HttpAnswer]) -> str:
        """Answer ``method`` requests for ``path`` (without the query string); returns its URL."""
        self._routes[method.upper(), path] = answer
        return self.url(path)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _answer(self, request: HttpRequest) -> HttpAnswer:
        answer = self._routes.get((request.method, urlsplit(request.path).path))
        if answer is None:
            return 404, {"Content-Type": "text/plain"}, f"no route for {request.method} {request.path}"
        return answer(request) if callable(answer) else answer


def _http_handler(server: LocalHttp) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            request = HttpRequest(self.command, self.path, dict(self.headers.items()),
                                  self.rfile.read(length) if length else b"")
            server.requests.append(request)
            try:
                status, headers, body = server._answer(request)
            except Exception as exc:  # the test's route failed: the client sees a 500 naming it
                status, headers, body = 500, {"Content-Type": "text/plain"}, repr(exc)
            if isinstance(body, dict | list):
                body, headers = json.dumps(body), {"Content-Type": "application/json", **headers}
            data = body.encode() if isinstance(body, str) else body
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def local_http() -> Iterator[LocalHttp]:
    """A :class:`LocalHttp` server on 127.0.0.1 for the test, closed afterwards."""
    server = LocalHttp()
    yield server
    server.close()


def imports_of(module: str, *, path: str | os.PathLike[str] | None = None) -> set[str]:
    """The modules a fresh interpreter has loaded once it imported ``module`` (``path`` first on its ``sys.path``)."""
    import subprocess
    import sys

    code = f"import json, sys; import {module}; print(json.dumps(sorted(sys.modules)))"
    env = {**os.environ, **({"PYTHONPATH": os.pathsep.join([str(path), os.environ.get("PYTHONPATH", "")])}
                            if path is not None else {})}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                            timeout=scaled_timeout(60))
    if result.returncode != 0:
        raise AssertionError(f"importing {module} failed:\n{result.stderr}")
    return set(json.loads(result.stdout))
