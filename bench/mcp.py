"""Latency of an MCP tool call through the registry against a raw SDK ``ClientSession`` call, same server.

Run: python bench/mcp.py [--calls N]   (prints figures; asserts nothing)

Both paths talk to a copy of the same stdio server (this file with ``--serve``: an SDK ``MCPServer`` with
one ``echo`` tool). The raw path awaits ``ClientSession.call_tool`` on its own event loop; the registry
path is ``Runtime.handle_function_call("mcp__bench__echo", ...)`` from a synchronous caller, which hops
onto the MCP manager's loop thread and back. The two paths alternate call by call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

WARMUP = 100
# Run as a script, this file's folder comes first on sys.path, where this file would shadow the SDK.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]


def serve() -> None:
    from mcp.server import MCPServer

    server = MCPServer("bench")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    server.run()


class RawClient:
    """An SDK ClientSession on its own event-loop thread; timings are taken inside that loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.opened = threading.Event()
        self.task = asyncio.run_coroutine_threadsafe(self._hold(), self.loop)
        if not self.opened.wait(60):
            raise SystemExit(f"the raw client did not connect: {self.task.exception(timeout=1)}")

    async def _hold(self) -> None:
        """Open the session, keep it until ``close``, and close it in the task that opened it."""
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        self.stop = asyncio.Event()
        params = StdioServerParameters(command=sys.executable, args=[str(Path(__file__).resolve()), "--serve"])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            self.session = session
            self.opened.set()
            await self.stop.wait()

    async def _timed(self) -> float:
        started = time.perf_counter()
        await self.session.call_tool("echo", {"text": "ping"})
        return time.perf_counter() - started

    def timed(self) -> float:
        """Seconds one ``call_tool`` took, measured inside the session's loop."""
        return asyncio.run_coroutine_threadsafe(self._timed(), self.loop).result(timeout=60)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        self.task.result(timeout=60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=1000, help="calls timed on each path (default 1000)")
    options = parser.parse_args()

    import yaml

    from hermes_core import Runtime

    home = Path(tempfile.mkdtemp(prefix="hermes-bench-mcp-"))
    (home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"bench": {
        "command": sys.executable, "args": [str(Path(__file__).resolve()), "--serve"]}}}))
    runtime = Runtime(home=home)
    runtime.load_plugins()
    status = runtime.start_mcp().server_status("bench")  # loading connects no server; connect it now
    if status.state != "ready":
        raise SystemExit(f"the bench server did not start: {status.last_error}")
    raw = RawClient()

    def through_registry() -> float:
        started = time.perf_counter()
        result = runtime.handle_function_call("mcp__bench__echo", {"text": "ping"})
        elapsed = time.perf_counter() - started
        assert result == "ping", result
        return elapsed

    try:
        for _ in range(WARMUP):
            through_registry(), raw.timed()
        registry_times: list[float] = []
        raw_times: list[float] = []
        for _ in range(options.calls):  # alternate call by call, so the machine's drift hits both paths alike
            registry_times.append(through_registry())
            raw_times.append(raw.timed())
    finally:
        raw.close()
        runtime.close()
    registry_median = statistics.median(registry_times)
    raw_median = statistics.median(raw_times)
    print(f"MCP tool call over stdio, median of {len(raw_times)} calls on each path (same server, same run)")
    print(f"raw ClientSession.call_tool:             {raw_median * 1e6:8.1f} µs/call (baseline)")
    print(f"through the registry (handle_function_call): {registry_median * 1e6:8.1f} µs/call  "
          f"overhead {(registry_median - raw_median) * 1e6:6.1f} µs")
    print(f"ratio: {registry_median / raw_median:.3f} × the raw call (target ≤ 1.15)")


if __name__ == "__main__":
    if "--serve" in sys.argv:
        serve()
    else:
        main()
