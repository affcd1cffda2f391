"""``browser.cdp_url``: a Chromium that runs elsewhere (here: started by the test, on 127.0.0.1), same policies;
WebSockets through the guard; the interpreter's exit closes the browser."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_plugin_browser.chromium import plan_launch
from hermes_plugin_browser.settings import BrowserSettings

from .conftest import chromium_or_skip, scaled


@pytest.fixture
def remote_chromium(tmp_path: Path) -> Iterator[str]:
    """A headless Chromium listening for CDP on 127.0.0.1 (started as the pack would: sandboxed); its URL."""
    chromium_or_skip()
    scratch = tmp_path / "remote"
    scratch.mkdir()
    plan = plan_launch(BrowserSettings(), scratch)
    flags = ["--headless", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
             f"--user-data-dir={scratch / 'profile'}", *(["--no-sandbox"] if plan.sandbox == "off" else []),
             "about:blank"]
    process = subprocess.Popen([plan.executable, *flags], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = scratch / "profile" / "DevToolsActivePort"
    deadline = time.monotonic() + scaled(60)
    port = ""
    while not port and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
        with contextlib.suppress(OSError):  # Chromium creates the file, then writes the port into it
            port = next(iter(port_file.read_text().split()), "")
    try:
        if not port:
            pytest.fail(f"the remote Chromium did not start (exit code {process.poll()})")
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(scaled(30))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(scaled(30))


def test_a_remote_browser_gets_the_same_guard_and_per_session_contexts(browser, browser_config, pages,
                                                                        remote_chromium) -> None:
    browser_config(cdp_url=remote_chromium)
    private = pages.add("/private", "<title>secret</title>")

    refused = browser("browser_navigate", url=private)
    browser_config(cdp_url=remote_chromium, allow_private=True)
    opened = browser("browser_navigate", url=pages.add("/page", """<title>remote</title><script>
        fetch('http://169.254.169.254/').catch(() => console.log('blocked'));</script>"""))
    browser("browser_snapshot")

    assert refused["success"] is False and "loopback" in refused["error"]
    assert opened["success"] and opened["title"] == "remote"
    assert "/private" not in pages.paths()
    assert any(m["source"] == "guard" and "169.254.169.254" in m["text"]
               for m in browser("browser_console")["console_messages"])
    assert browser("browser_navigate", url="file:///etc/passwd")["success"] is False


def test_a_websocket_to_a_refused_address_is_closed_by_the_guard(browser, pages) -> None:
    browser("browser_navigate", url=pages.add("/ws", """<script>
        const socket = new WebSocket('ws://169.254.169.254/feed');
        socket.onclose = event => console.log('closed ' + event.code);
    </script>"""))
    deadline = time.monotonic() + scaled(30)
    messages = browser("browser_console")["console_messages"]
    while not any(m["text"].startswith("closed") for m in messages) and time.monotonic() < deadline:
        time.sleep(0.1)  # the page's script logs once its socket is closed: on a busy machine, after a while
        messages = browser("browser_console")["console_messages"]

    assert any(m["source"] == "guard" and "ws://169.254.169.254/feed" in m["text"] for m in messages)


def test_the_interpreters_exit_closes_the_browser_and_removes_its_files(pages, tmp_path) -> None:
    chromium_or_skip()
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(json.dumps({"browser": {"allow_private": True}}))
    url = pages.add("/", "<title>left open</title>")
    code = """if True:
        import json, sys
        from hermes_core import Runtime
        from hermes_core.plugins.discovery import candidate_from_module
        runtime = Runtime(home=sys.argv[1], entry_points=())
        runtime.load_candidate(candidate_from_module("hermes_plugin_browser"))
        print(json.loads(runtime.handle_function_call("browser_navigate", {"url": sys.argv[2]}))["title"])
    """  # no runtime.close(): the interpreter's exit must do it
    pack = str(Path(__file__).resolve().parent.parent)
    result = subprocess.run([sys.executable, "-c", code, str(home), url], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": pack}, timeout=scaled(180))

    assert result.stdout.strip() == "left open", result.stderr
    assert list((home / "tmp").iterdir()) == []
