"""Throughput of ``hermes mcp serve --transport http --stateless`` against the MCP SDK's own ``MCPServer``
serving the same function, both on loopback, in the same run.

Run: python bench/serve.py [--calls N] [--rounds R]   (prints figures; asserts nothing)

Each configuration is a fresh server process (Hermes with 1 and 2 workers, Hermes with tracing on, and the raw
SDK server, stateless with JSON responses like Hermes'); 8 and then 32 MCP SDK clients, each with its own
session, call ``echo`` concurrently from this process. Printed per run: calls/s, p50 and p99 latency, and the
server's CPU seconds (all its processes) per 1000 calls. On a 2-core machine this process's clients take
about a core, so a second worker has at most the other one: compare calls per server CPU-second too.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from dataclasses import dataclass
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path, where this file would shadow the SDK.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

WARMUP = 20  # calls per client before the clock starts
CLIENT_COUNTS = (8, 32)


def echo(text: str) -> str:
    """Return the text."""
    return text


PLUGIN = '''
def echo(args, **kwargs):
    return args["text"]


def register(ctx):
    ctx.register_tool("echo", "bench", {"description": "Return the text", "parameters": {
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}, echo)
'''


def serve_raw() -> None:
    """The SDK's MCPServer with the same function, stateless and answering with JSON, on a free port."""
    import uvicorn
    from mcp.server import MCPServer

    server = MCPServer("bench")
    server.tool()(echo)
    app = server.streamable_http_app(stateless_http=True, json_response=True)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    print(f"raw MCPServer listening on http://127.0.0.1:{sock.getsockname()[1]}/mcp", file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


@dataclass
class Result:
    label: str
    clients: int
    calls: int
    seconds: float
    latencies: list[float]
    cpu_seconds: float

    @property
    def rate(self) -> float:
        return self.calls / self.seconds

    @property
    def per_cpu(self) -> float:
        """Calls per second of server CPU time."""
        return self.calls / self.cpu_seconds

    def line(self) -> str:
        cuts = statistics.quantiles(self.latencies, n=100)
        return (f"{self.label:<24} {self.clients:>3} clients  {self.rate:7.1f} calls/s  "
                f"p50 {cuts[49] * 1000:6.1f} ms  p99 {cuts[98] * 1000:6.1f} ms  "
                f"server CPU {self.cpu_seconds / self.calls * 1000:5.2f} s/1000 calls  "
                f"{self.per_cpu:6.1f} calls/CPU-s")


class Server:
    """A server process; its URL read from its stderr."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True, env={**os.environ, **env})
        assert self.process.stderr is not None
        for line in self.process.stderr:
            if match := re.search(r"listening on (http://\S+)", line):
                self.url = match.group(1)
                break
        else:
            raise SystemExit(f"{command} exited ({self.process.wait()}) without serving")
        threading.Thread(target=self.process.stderr.read, daemon=True).start()

    def cpu_seconds(self) -> float:
        """User + system CPU time of the process and all its descendants so far (Linux /proc)."""
        tick = os.sysconf("SC_CLK_TCK")
        parents: dict[int, int] = {}
        times: dict[int, float] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
            times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
        tree = {self.process.pid}
        grew = True
        while grew:
            found = {pid for pid, parent in parents.items() if parent in tree} - tree
            grew = bool(found)
            tree |= found
        return sum(times.get(pid, 0.0) for pid in tree)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


async def load(server: Server, clients: int, calls: int) -> tuple[float, list[float], float]:
    """``clients`` sessions making ``calls`` calls each at once, after their warm-up; (wall seconds, each
    call's latency, the server's CPU seconds meanwhile)."""
    from contextlib import AsyncExitStack

    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    latencies: list[float] = []
    ready = asyncio.Barrier(clients + 1)
    go = asyncio.Event()

    async def client() -> None:
        async with AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(streamable_http_client(server.url))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            for _ in range(WARMUP):
                await session.call_tool("echo", {"text": "ping"})
            await ready.wait()
            await go.wait()
            for _ in range(calls):
                started = time.perf_counter()
                result = await session.call_tool("echo", {"text": "ping"})
                latencies.append(time.perf_counter() - started)
                assert not result.is_error and result.content[0].text == "ping", result

    tasks = [asyncio.create_task(client()) for _ in range(clients)]
    await ready.wait()
    cpu = server.cpu_seconds()
    started = time.perf_counter()
    go.set()
    await asyncio.gather(*tasks)
    return time.perf_counter() - started, latencies, server.cpu_seconds() - cpu


def measure(label: str, server: Server, clients: int, total: int) -> Result:
    calls = max(1, total // clients)
    seconds, latencies, cpu = asyncio.run(load(server, clients, calls))
    return Result(label, clients, clients * calls, seconds, latencies, cpu)


def median_run(runs: list[Result]) -> Result:
    """The median of the runs, each figure on its own (the machine is shared: rounds alternate the servers)."""
    def middle(values: list[float]) -> float:
        return statistics.median(values)

    calls = runs[0].calls
    seconds = calls / middle([run.rate for run in runs])
    latencies = sorted(runs, key=lambda run: statistics.median(run.latencies))[len(runs) // 2].latencies
    return Result(runs[0].label, runs[0].clients, calls, seconds, latencies,
                  middle([run.cpu_seconds for run in runs]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=800, help="timed calls per run, all clients (default 800)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each server and client count (default 3)")
    options = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="hermes-bench-serve-"))
    (home / "plugins" / "bench").mkdir(parents=True)
    (home / "plugins" / "bench" / "plugin.yaml").write_text("name: bench\nversion: '1.0'\ndescription: bench\n")
    (home / "plugins" / "bench" / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    traced_home = home / "traced"
    (traced_home / "plugins").mkdir(parents=True)
    (traced_home / "plugins" / "bench").symlink_to(home / "plugins" / "bench")
    (home / "config.yaml").write_text("plugins:\n  enabled: [bench]\n")
    (traced_home / "config.yaml").write_text("plugins:\n  enabled: [bench]\nobservability:\n  otel: true\n")
    hermes = [str(Path(sys.executable).parent / "hermes"), "mcp", "serve", "--transport", "http", "--stateless",
              "--port", "0", "--workspace", str(home), "--drain-grace", "0"]
    # spans are made and sampled; exporting them is the collector's cost, not Hermes'
    quiet_otel = {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}
    configurations = [
        ("raw SDK MCPServer", [sys.executable, str(Path(__file__).resolve()), "--raw"], {}),
        ("hermes, 1 worker", hermes, {"HERMES_HOME": str(home)}),
        ("hermes, 2 workers", [*hermes, "--workers", "2"], {"HERMES_HOME": str(home)}),
        ("hermes, 1 worker, otel", hermes, {"HERMES_HOME": str(traced_home), **quiet_otel}),
    ]
    print(f"MCP tools/call of echo over loopback HTTP (stateless, JSON), {options.calls} timed calls per run, "
          f"{os.cpu_count()} CPUs")
    servers = {label: Server(command, env) for label, command, env in configurations}
    runs: dict[tuple[str, int], list[Result]] = {(label, clients): [] for label in servers for clients in CLIENT_COUNTS}
    try:
        for round_number in range(options.rounds):
            for clients in CLIENT_COUNTS:
                for label, server in servers.items():
                    runs[label, clients].append(measure(label, server, clients, options.calls))
                    print(f"round {round_number + 1}: {runs[label, clients][-1].line()}", flush=True)
    finally:
        for server in servers.values():
            server.stop()
    results = {label: [median_run(runs[label, clients]) for clients in CLIENT_COUNTS] for label in servers}
    print(f"\nmedians of {options.rounds} rounds (each figure on its own):")
    for label in servers:
        for result in results[label]:
            print(result.line())
    raw, one, two, traced = (results[label] for label, _, _ in configurations)
    print()
    for index, clients in enumerate(CLIENT_COUNTS):
        print(f"{clients} clients, Hermes 1 worker vs the raw SDK server: {one[index].rate / raw[index].rate:.2f} x "
              f"in calls/s, {one[index].per_cpu / raw[index].per_cpu:.2f} x in calls per server CPU-second "
              f"(target >= 0.95)")
        print(f"{clients} clients, 2 workers vs 1: {two[index].rate / one[index].rate:.2f} x in calls/s, "
              f"{two[index].per_cpu / one[index].per_cpu:.2f} x in calls per server CPU-second (target >= 1.5)")
        print(f"{clients} clients, tracing on: {(one[index].per_cpu / traced[index].per_cpu - 1) * 100:+.1f} % "
              f"server CPU per call, {(traced[index].rate / one[index].rate - 1) * 100:+.1f} % calls/s "
              f"(target: costs <= 15 %)")


if __name__ == "__main__":
    if "--raw" in sys.argv:
        serve_raw()
    else:
        main()
