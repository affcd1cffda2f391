"""Fixtures for the cron pack: the testing kit's runtime with the pack and a few host tools, on a clock the test
sets (``HERMES_CRON_TEST_CLOCK``, in UTC)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_core import Runtime

START = datetime(2026, 3, 2, 9, 0, 30, tzinfo=UTC)
NUMBER = {"type": "object", "properties": {"text": {"type": "string"}, "seconds": {"type": "number"}}}


class FakeClock:
    """The time the scheduler reads: a file named by ``HERMES_CRON_TEST_CLOCK``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.now = START
        self.set(START)

    def set(self, moment: datetime) -> None:
        self.now = moment
        self.path.write_text(moment.isoformat())

    def advance(self, **delta: float) -> datetime:
        self.set(self.now + timedelta(**delta))
        return self.now


@pytest.fixture
def clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    monkeypatch.setenv("HERMES_CRON_TEST_CLOCK", str(tmp_path / "clock"))
    monkeypatch.setenv("HERMES_TIMEZONE", "UTC")
    for name in ("HERMES_CRON_TIMEOUT", "HERMES_CRON_MAX_PARALLEL"):
        monkeypatch.delenv(name, raising=False)
    return FakeClock(tmp_path / "clock")


@pytest.fixture
def calls() -> list[dict[str, Any]]:
    """The arguments of every call the host tools received."""
    return []


@pytest.fixture
def runtime(hermes_runtime: Runtime, load_hermes_plugin: Any, clock: FakeClock,
            calls: list[dict[str, Any]]) -> Runtime:
    """The testing kit's runtime with the cron pack, and host tools: ``echo`` (returns its text), ``fail`` (an
    error result) and ``sleepy`` (waits ``seconds``, or until ``release`` is set)."""
    load_hermes_plugin("hermes_plugin_cron", "cron")
    release = threading.Event()
    hermes_runtime.release = release  # type: ignore[attr-defined]

    def echo(args: dict[str, Any], **kwargs: Any) -> str:
        calls.append(dict(args))
        return json.dumps({"echo": args.get("text")})

    def fail(args: dict[str, Any], **kwargs: Any) -> str:
        calls.append(dict(args))
        return json.dumps({"error": "the service said no"})

    def sleepy(args: dict[str, Any], **kwargs: Any) -> str:
        calls.append(dict(args))
        release.wait(float(args.get("seconds") or 30))
        return json.dumps({"slept": True})

    for name, handler in (("echo", echo), ("fail", fail), ("sleepy", sleepy)):
        hermes_runtime.register_tool(name, "testing", {"name": name, "description": name, "parameters": NUMBER},
                                     handler, annotations={"read_only": True})
    return hermes_runtime


@pytest.fixture
def cronjob(runtime: Runtime) -> Callable[..., dict[str, Any]]:
    """``cronjob(action, **args)``: the tool's answer, decoded."""

    def call(action: str, **args: Any) -> dict[str, Any]:
        answer: dict[str, Any] = json.loads(runtime.handle_function_call("cronjob", {"action": action, **args}))
        return answer

    return call


@pytest.fixture
def config(hermes_home: Path) -> Callable[[dict[str, Any]], None]:
    """Write the test home's config.yaml."""

    def write(data: dict[str, Any]) -> None:
        (hermes_home / "config.yaml").write_text(yaml.safe_dump(data))

    return write


@pytest.fixture
def outputs(hermes_home: Path) -> Callable[[str], list[str]]:
    """``outputs(job_id)``: the job's output documents, oldest first."""

    def read(job_id: str) -> list[str]:
        folder = hermes_home / "cron" / "output" / job_id
        return [path.read_text() for path in sorted(folder.glob("*.md"))] if folder.exists() else []

    return read


@pytest.fixture
def stored(hermes_home: Path) -> Callable[[], dict[str, Any]]:
    """``stored()``: jobs.json as it is on disk."""

    def read() -> dict[str, Any]:
        data: dict[str, Any] = json.loads((hermes_home / "cron" / "jobs.json").read_text())
        return data

    return read


class Hook:
    """A local webhook receiver on 127.0.0.1: what it was POSTed."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                received.append(json.loads(self.rfile.read(length)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"


@pytest.fixture
def webhook() -> Iterator[Hook]:
    hook = Hook()
    yield hook
    hook.server.shutdown()
    hook.server.server_close()
