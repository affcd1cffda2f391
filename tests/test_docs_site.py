"""The built documentation works opened from disk (``file://``), as a reader who downloaded it opens it: headless
Chromium, driven over the Chrome DevTools Protocol, follows the navigation and runs a search."""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core.authoring.testing import scaled_timeout

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: How long the browser may take to start, to load a page, or to answer a search.
WAIT = scaled_timeout(30.0)
#: Flags that keep a headless Chromium quiet on a machine without a network (and runnable as root).
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-port=0", "--remote-allow-origins=*"]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium; "
                                                         ".ci/run installs it)")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        pytest.skip("mkdocs and mkdocs-material are not installed (pip install -e '.[dev]')")
    folder = tmp_path_factory.mktemp("site")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                             "-d", str(folder)], capture_output=True, text=True, timeout=scaled_timeout(300),
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    return folder


#: What the DevTools Protocol answers to an evaluation sent while the tab goes from one document to the next.
NAVIGATING = ("Inspected target navigated or closed", "Cannot find context with specified id")


class Navigating(AssertionError):
    """The tab was between two documents when asked (``wait_for`` asks again)."""


class Page:
    """One browser tab, spoken to over the DevTools Protocol's websocket."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.ids = itertools.count(1)
        #: What the page's scripts threw or logged as errors, for the message of a failing test.
        self.errors: list[str] = []

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Call ``method`` and return its result (events that arrive meanwhile are not needed here)."""
        call = next(self.ids)
        self.socket.send(json.dumps({"id": call, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=WAIT))
            if message.get("method") == "Runtime.exceptionThrown":
                self.errors.append(message["params"]["exceptionDetails"].get("exception", {}).get("description", ""))
            elif message.get("method") == "Runtime.consoleAPICalled" and message["params"]["type"] == "error":
                self.errors.append(" ".join(str(arg.get("value", arg.get("description")))
                                            for arg in message["params"]["args"]))
            if message.get("id") == call:
                if "error" in message:
                    error = message["error"]
                    if any(text in str(error.get("message")) for text in NAVIGATING):
                        raise Navigating(f"{method}: {error}")
                    raise AssertionError(f"{method}: {error}")
                return message.get("result", {})

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str) -> Any:
        """The value of ``expression`` once it is truthy; fails after :data:`WAIT` seconds."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(expression)
            except Navigating:  # the page is between two documents: ask the next one
                value = None
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"{expression} stayed falsy for {WAIT:g} s; the page's errors: {self.errors}")

    def open(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        self.wait_for(f"location.href === {json.dumps(url)} && document.readyState === 'complete'")

    def search(self, text: str) -> None:
        """Open the search box as its toggle does and type ``text`` into it, as keystrokes would."""
        self.evaluate("document.getElementById('__search').click()")
        self.wait_for("document.getElementById('__search').checked")
        # the index loads in a worker (through the file:// shim); until it is ready the box ignores typing
        self.wait_for("!document.querySelector('.md-search-result__meta').textContent.includes('Initializing')")
        self.evaluate("document.querySelector('input.md-search__input').focus()")
        self.send("Input.insertText", text=text)


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Page]:
    profile = tmp_path / "chromium-profile"
    process = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + WAIT
        port_file = profile / "DevToolsActivePort"
        while not port_file.is_file() or not port_file.read_text().strip():
            assert process.poll() is None, f"Chromium exited with {process.returncode}"
            assert time.monotonic() < deadline, "Chromium did not open its DevTools port"
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=WAIT) as answer:
            targets = json.load(answer)
        from websockets.sync.client import connect

        url = next(target["webSocketDebuggerUrl"] for target in targets if target["type"] == "page")
        with connect(url, max_size=None, open_timeout=WAIT) as socket:
            tab = Page(socket)
            tab.send("Page.enable")
            tab.send("Runtime.enable")
            yield tab
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=WAIT)
        if process.poll() is None:
            process.kill()
            process.wait()


def test_pages_opened_from_disk_are_styled_and_their_navigation_leads_to_files(site: Path, page: Page):
    page.open((site / "index.html").as_uri())

    assert "Hermes" in page.evaluate("document.title")
    assert page.evaluate("getComputedStyle(document.querySelector('.md-header')).position") != "static"  # CSS loaded
    links = page.evaluate("[...document.querySelectorAll('nav.md-nav--primary a.md-nav__link[href]')]"
                          ".map(a => a.href)")
    pages = sorted({link.split("#")[0] for link in links if link.startswith("file://")})
    assert len(pages) >= 15
    for link in pages:
        assert link.endswith(".html"), link  # a folder URL would show a file listing, not the page
        assert Path(urllib.request.url2pathname(link.removeprefix("file://"))).is_file(), link

    page.evaluate("[...document.querySelectorAll('a.md-nav__link')].find(a => a.textContent.trim() === "
                  "'Writing a plugin').click()")

    page.wait_for("location.pathname.endsWith('/writing-plugins.html') && document.readyState === 'complete'")
    assert page.evaluate("document.querySelector('article h1').textContent.trim()").startswith("Writing a plugin")


def test_search_works_from_disk_and_its_results_open_their_pages(site: Path, page: Page):
    page.open((site / "mcp.html").as_uri())

    page.search("install-claude")
    count = page.wait_for("document.querySelectorAll('.md-search-result__item').length")

    assert count >= 1
    first = page.evaluate("document.querySelector('.md-search-result__item a').href")
    assert first.startswith("file://") and ".html" in first
    page.evaluate("document.querySelector('.md-search-result__item a').click()")
    page.wait_for(f"location.href.split('#')[0] === {json.dumps(first.split('#')[0])} && "
                  "document.readyState === 'complete'")
    assert "install-claude" in page.evaluate("document.body.innerText")


def test_a_search_without_matches_says_so(site: Path, page: Page):
    page.open((site / "index.html").as_uri())

    page.search("qqzzxxnothinglikethis")

    assert page.wait_for("document.querySelector('.md-search-result__meta').textContent.trim() === "
                         "'No matching documents'")
    assert page.evaluate("document.querySelectorAll('.md-search-result__item').length") == 0


def test_pages_load_nothing_from_another_host(site: Path):
    """No web fonts, styles or scripts from a CDN: opened offline, the site looks the same, at once."""
    pages = sorted(site.glob("*.html"))

    assert len(pages) >= 15
    for html in pages:
        text = html.read_text()
        assert "fonts.googleapis.com" not in text and "fonts.gstatic.com" not in text, html.name
        remote = re.findall(r'<(?:link|script)\b[^>]*\b(?:href|src)="(?:https?:)?//[^"]*"', text)
        assert remote == [], html.name


def test_the_404_page_opened_from_disk_is_styled_and_its_links_lead_to_files(site: Path, page: Page):
    page.open((site / "404.html").as_uri())

    assert page.evaluate("getComputedStyle(document.querySelector('.md-header')).position") != "static"  # CSS loaded
    links = page.evaluate("[...document.querySelectorAll('a[href]')].map(a => a.href)")
    files = {link.split("#")[0] for link in links if link.startswith("file://")}
    assert len(files) >= 15
    for link in files:
        assert Path(urllib.request.url2pathname(link.removeprefix("file://"))).is_file(), link


def test_the_home_pages_code_blocks_fit_a_1280_pixel_window(site: Path, page: Page):
    page.send("Emulation.setDeviceMetricsOverride", width=1280, height=800, deviceScaleFactor=1, mobile=False)
    page.open((site / "index.html").as_uri())

    blocks = page.evaluate("[...document.querySelectorAll('article pre > code')]"
                           ".map(c => [c.scrollWidth, c.clientWidth, c.textContent.split('\\n')[0]])")

    assert blocks
    assert [block for block in blocks if block[0] > block[1]] == []
