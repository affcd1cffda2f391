"""Fixtures for the browser pack: the system's Chromium, pages served on 127.0.0.1, a runtime with the pack."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from hermes_core import Runtime
from hermes_core.authoring.testing import HttpRequest, LocalHttp


def scaled(seconds: float) -> float:
    """A subprocess timeout for this machine: ``seconds`` times ``HERMES_TEST_TIMEOUT_SCALE`` (default 1)."""
    return seconds * float(os.environ.get("HERMES_TEST_TIMEOUT_SCALE") or 1)


def chromium_or_skip() -> None:
    if not any(shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")):
        pytest.skip("Chromium is not installed (apt-get install chromium); .ci/run installs it")


class PageServer(LocalHttp):
    """The testing kit's server on 127.0.0.1, answering GET and POST of each page added."""

    @property
    def received(self) -> list[HttpRequest]:
        return self.requests

    def add(self, path: str, body: str | bytes, *, status: int = 200, content_type: str = "text/html; charset=utf-8",
            headers: dict[str, str] | None = None) -> str:
        data = body.encode() if isinstance(body, str) else body
        answer = (status, {"Content-Type": content_type, **(headers or {})}, data)
        self.route("GET", path, answer)
        return self.route("POST", path, answer)

    def paths(self) -> list[str]:
        return [urlsplit(request.path).path for request in self.requests]


@pytest.fixture
def pages() -> Iterator[PageServer]:
    server = PageServer()
    yield server
    server.close()


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
