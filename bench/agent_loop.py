"""The async call path: the overhead of ``ahandle_function_call`` over awaiting the handler directly, and 8
parallel-safe I/O-bound calls through ``arun_tool_calls`` against one call.

Run: python bench/agent_loop.py   (prints figures; asserts nothing)
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable

from hermes_core import Runtime

SCHEMA = {"description": "Add two numbers", "parameters": {
    "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}
IO_SCHEMA = {"description": "Wait for a slow service", "parameters": {"type": "object", "properties": {}}}
IO_SECONDS = 0.05


async def add(args, **kwargs):
    return json.dumps({"sum": args["a"] + args["b"]})


def sync_add(args, **kwargs):
    return json.dumps({"sum": args["a"] + args["b"]})


async def slow_service(args, **kwargs):
    await asyncio.sleep(IO_SECONDS)
    return "done"


def slow_sync_service(args, **kwargs):
    time.sleep(IO_SECONDS)
    return "done"


async def per_call(cases: list[Callable[[], Awaitable[object]]], number: int, rounds: int = 7) -> list[float]:
    """Seconds per await of each case: the best of several rounds, run interleaved."""
    times: list[list[float]] = [[] for _ in cases]
    for _ in range(rounds):
        for slot, case in zip(times, cases, strict=True):
            started = time.perf_counter()
            for _ in range(number):
                await case()
            slot.append((time.perf_counter() - started) / number)
    return [min(slot) for slot in times]


async def wall(case: Callable[[], Awaitable[object]], rounds: int = 7) -> float:
    """Median seconds of one await of ``case``."""
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        await case()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


async def main() -> None:
    runtime = Runtime(home=tempfile.mkdtemp(prefix="hermes-bench-"), entry_points=[])
    runtime.register_tool("add", "math", SCHEMA, add, is_async=True)
    runtime.register_tool("sync_add", "math", SCHEMA, sync_add)
    runtime.register_tool("slow", "io", IO_SCHEMA, slow_service, is_async=True, parallel_safe=True)
    runtime.register_tool("slow_sync", "io", IO_SCHEMA, slow_sync_service, parallel_safe=True)
    args = {"a": 2, "b": 3}

    direct, through, sync_thread, sync_through = await per_call([
        lambda: add(args), lambda: runtime.ahandle_function_call("add", args),
        lambda: asyncio.to_thread(sync_add, args), lambda: runtime.ahandle_function_call("sync_add", args)], 2_000)
    print("ahandle_function_call, no hooks")
    print(f"  async handler awaited directly:          {direct * 1e6:8.2f} µs/call (baseline)")
    print(f"  async handler via ahandle_function_call: {through * 1e6:8.2f} µs/call  overhead "
          f"{(through - direct) * 1e6:6.2f} µs  ({through / direct:.2f} × the baseline)")
    print(f"  sync handler via asyncio.to_thread:      {sync_thread * 1e6:8.2f} µs/call (baseline)")
    print(f"  sync handler via ahandle_function_call:  {sync_through * 1e6:8.2f} µs/call  overhead "
          f"{(sync_through - sync_thread) * 1e6:6.2f} µs  ({sync_through / sync_thread:.2f} × the baseline)")

    print(f"\n8 parallel-safe I/O-bound calls ({IO_SECONDS * 1000:.0f} ms each) through arun_tool_calls")
    for name, kind in (("slow", "async handlers"), ("slow_sync", "sync handlers on worker threads")):
        one = await wall(lambda name=name: runtime.arun_tool_calls([{"name": name, "arguments": {}}]))
        eight = await wall(lambda name=name: runtime.arun_tool_calls([{"name": name, "arguments": {}}] * 8))
        print(f"  {kind}: one call {one * 1000:6.1f} ms (baseline), eight calls {eight * 1000:6.1f} ms  "
              f"({eight / one:.2f} × the baseline; 8.00 × if they ran one after another)")


if __name__ == "__main__":
    asyncio.run(main())
