"""Browser pack: navigate + snapshot through Hermes against Playwright driving the same Chromium directly.

Run: python bench/browser.py [--rounds N] [--sessions N]   (prints figures; asserts nothing; needs Chromium)

Both paths open the same page, served on 127.0.0.1, in the same system Chromium started the same way (the
pack's launch plan: inside bubblewrap where it works). The direct path is Playwright's async API on its own
loop: ``page.goto`` then ``aria_snapshot`` of the body. The Hermes path is ``Runtime.handle_function_call``
from a synchronous caller: ``browser_navigate`` (which returns a compact snapshot) and then
``browser_snapshot``; every request goes through the guard's interception and the pinning proxy. The two
paths alternate round by round. Memory is the proportional set size (PSS, Linux) of the Hermes browser's
process tree with one session open, then per added session.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hermes_plugins" / "browser"))

PAGE = ("<html><head><title>Bench</title></head><body><h1>Orders</h1>"
        + "".join(f"<p>Order {i}: <a href='/o/{i}'>details</a> <button>Cancel {i}</button></p>" for i in range(60))
        + "<form><label>Search <input name=q></label><button>Go</button></form></body></html>").encode()


def serve() -> str:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/"


class Direct:
    """Playwright on its own event-loop thread, the same Chromium and launch plan; timings taken in that loop."""

    def __init__(self, scratch: Path) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.scratch = scratch
        self.run(self._start())

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(120)

    async def _start(self) -> None:
        from hermes_plugin_browser.chromium import plan_launch
        from hermes_plugin_browser.settings import BrowserSettings
        from playwright.async_api import async_playwright

        plan = plan_launch(BrowserSettings(), self.scratch)
        self.playwright = await async_playwright().start()
        self.browser = await self.playwright.chromium.launch(executable_path=plan.executable, headless=True,
                                                             chromium_sandbox=plan.sandbox != "off")
        self.page = await (await self.browser.new_context()).new_page()

    async def _round(self, url: str) -> float:
        start = time.perf_counter()
        await self.page.goto(url, wait_until="load")
        await self.page.locator("body").aria_snapshot()
        return time.perf_counter() - start

    def round(self, url: str) -> float:
        return float(self.run(self._round(url)))

    def close(self) -> None:
        async def stop() -> None:
            await self.browser.close()
            await self.playwright.stop()

        self.run(stop())


def pss_kib(root: int) -> int:
    """PSS of ``root``'s descendants (the browser's processes), in KiB."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(entry.name))
    total, frontier = 0, list(children.get(root, []))
    while frontier:
        pid = frontier.pop()
        frontier += children.get(pid, [])
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--sessions", type=int, default=4)
    args = parser.parse_args()

    from hermes_core import Runtime
    from hermes_core.plugins.discovery import candidate_from_module

    url = serve()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        home.mkdir()
        (home / "config.yaml").write_text(json.dumps({"browser": {"allow_private": True}}))
        runtime = Runtime(home=home, workspace=folder, entry_points=())
        runtime.load_candidate(candidate_from_module("hermes_plugin_browser"))
        scratch = Path(folder) / "direct"
        scratch.mkdir()
        direct = Direct(scratch)

        def hermes(snapshot_call: bool) -> float:
            start = time.perf_counter()
            opened = json.loads(runtime.handle_function_call("browser_navigate", {"url": url}))
            if snapshot_call:
                runtime.handle_function_call("browser_snapshot", {})
            elapsed = time.perf_counter() - start
            assert opened["success"], opened
            return elapsed

        for _ in range(3):  # warm up: browser start, first page
            hermes(True)
            direct.round(url)
        timings: dict[str, list[float]] = {"playwright": [], "hermes navigate": [], "hermes navigate+snapshot": []}
        for _ in range(args.rounds):
            timings["playwright"].append(direct.round(url))
            timings["hermes navigate"].append(hermes(False))
            timings["hermes navigate+snapshot"].append(hermes(True))
        direct.close()

        base = statistics.median(timings["playwright"])
        print(f"navigate + snapshot of a local page, median of {args.rounds} rounds (alternating):")
        for name, values in timings.items():
            median = statistics.median(values)
            print(f"  {name:26} {median * 1000:7.1f} ms   {median / base:5.2f} x Playwright directly")

        if sys.platform == "linux":
            one = pss_kib(os.getpid())
            for session in range(1, args.sessions):
                runtime.handle_function_call("browser_navigate", {"url": url}, session_id=f"bench-{session}")
            many = pss_kib(os.getpid())
            print(f"memory of the browser process tree (PSS; Playwright's driver included): {one / 1024:.0f} MiB with "
                  f"one session, {(many - one) / 1024 / max(1, args.sessions - 1):.1f} MiB per further session")
        runtime.close()


if __name__ == "__main__":
    main()
