"""Per-call overhead of ``handle_function_call`` over calling the handler directly, and the figures issue 26 sets:

- without hooks: the overhead (target ≤ 2 µs);
- with 3 no-op ``pre_tool_call`` + 3 no-op ``post_tool_call`` under deadlines, against a floor measured in the same
  run: one bare ``ThreadPoolExecutor`` submit+result round trip plus the same six hooks called inline (target ≤ 2 ×);
- with ``hook_timeout: 0`` (inline), against pluggy calling six no-op implementations (target ≤ 3 ×);
- the line count of the hook executor (``hermes_core/workers/executor.py``).

Also 1 + 1 hooks, ``post_hooks: background``, a plugin's tool (its handler under ``tools.call_timeout``, on a worker
thread), and, when ``HERMES_AGENT_PYTHON`` names an interpreter with ``hermes-agent==0.19.0`` installed
(``make bench-vs-hermes-agent``), Hermes Agent's own ``handle_function_call``.

The same figures are measured for the core of another git ref in the same run (``--against REF``, default
``main``): its ``hermes_core`` is extracted with ``git archive`` into a temporary folder and measured in a subprocess,
alternating with this tree's, and each figure is printed as a ratio to that ref's.

Run: python bench/dispatch.py [--against REF]   (prints figures; asserts nothing)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import timeit
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pluggy

from hermes_core import Runtime

SCHEMA = {"description": "Add two numbers", "parameters": {
    "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}
ROUNDS = 15
ROOT = Path(__file__).resolve().parent.parent
#: Runs of each core, alternating (the best of each figure over them is kept).
ALTERNATIONS = 3


def add(args, **kwargs):
    return json.dumps({"sum": args["a"] + args["b"]})


def best_of(statements: dict[str, tuple[Callable[[], object], int]], rounds: int = ROUNDS,
            timer: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Seconds per call of each statement: the best of several rounds, run interleaved so that a busy
    moment of the machine falls on all of them alike. Work done in one thread is timed in the process's CPU
    time (``timer=time.process_time``), which other processes on a busy machine do not inflate; a hand-off to
    another thread only in wall time."""
    times: dict[str, list[float]] = {name: [] for name in statements}
    for _ in range(rounds):
        for name, (statement, number) in statements.items():
            times[name].append(timeit.Timer(statement, timer=timer).timeit(number=number) / number)
    return {name: min(slot) for name, slot in times.items()}


def runtime_with_hooks(pairs: int, hook_timeout: float = 30, post_hooks: str = "wait") -> Runtime:
    """A runtime with the ``add`` tool and ``pairs`` no-op pre_tool_call + post_tool_call implementations."""
    home = Path(tempfile.mkdtemp(prefix="hermes-bench-"))
    (home / "config.yaml").write_text(f"plugins:\n  hook_timeout: {hook_timeout}\n  post_hooks: {post_hooks}\n")
    runtime = Runtime(home=home, entry_points=())
    runtime.register_tool("add", "math", SCHEMA, add)
    for index in range(pairs):
        context = runtime.context(f"hooks-{index}")
        context.register_hook("pre_tool_call", lambda tool_name, args: None)
        context.register_hook("post_tool_call", lambda tool_name, result: None)
    return runtime


def pluggy_six() -> Callable[[], object]:
    """pluggy itself calling 6 no-op implementations of one hook (no deadline, no isolation)."""
    mark, spec = pluggy.HookimplMarker("bench"), pluggy.HookspecMarker("bench")

    class Spec:
        @spec
        def post_tool_call(self, tool_name, result):
            """no-op"""

    manager = pluggy.PluginManager("bench")
    manager.add_hookspecs(Spec)
    for index in range(6):
        manager.register(type(f"P{index}", (), {"post_tool_call": staticmethod(mark(lambda tool_name, result: None))}),
                         name=f"p{index}")
    return lambda: manager.hook.post_tool_call(tool_name="add", result="{}")


def floor() -> tuple[Callable[[], object], Callable[[], object]]:
    """The floor of 3 + 3 hooks under deadlines: one bare ``ThreadPoolExecutor`` round trip (submit and wait for the
    result of a no-op), and the six no-op hooks called inline (each with the keywords it takes, as Hermes calls
    them)."""
    pool = ThreadPoolExecutor(max_workers=1)
    pool.submit(int).result()
    pre = [lambda tool_name, args: None] * 3
    post = [lambda tool_name, result: None] * 3
    args = {"a": 2, "b": 3}

    def six() -> None:
        for hook in pre:
            hook(tool_name="add", args=args)
        for hook in post:
            hook(tool_name="add", result="{}")

    return (lambda: pool.submit(int).result()), six


HERMES_AGENT_PROBE = """
import json, sys, timeit
sys.argv = ["bench"]
from tools.registry import registry
import model_tools

def add(args, **kwargs):
    return json.dumps({"sum": args["a"] + args["b"]})

registry.register(name="bench_add", toolset="bench", handler=add, schema={
    "name": "bench_add", "description": "Add two numbers", "parameters": {"type": "object", "properties": {
        "a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}})
args = {"a": 2, "b": 3}
model_tools.handle_function_call("bench_add", args)
best = lambda f, n: min(timeit.repeat(f, number=n, repeat=ROUNDS)) / n
print(json.dumps({"direct": best(lambda: add(args), 20000),
                  "via": best(lambda: model_tools.handle_function_call("bench_add", args), 2000)}))
""".replace("ROUNDS", str(ROUNDS))


def hermes_agent() -> dict[str, float] | None:
    python = os.environ.get("HERMES_AGENT_PYTHON")
    if not python:
        return None
    with tempfile.TemporaryDirectory(prefix="hermes-agent-bench-") as home:
        result = subprocess.run([python, "-c", HERMES_AGENT_PROBE], capture_output=True, text=True, timeout=600,
                                env={**os.environ, "HERMES_HOME": home})
    if result.returncode != 0:
        print(f"Hermes Agent probe failed: {result.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(result.stdout.strip().splitlines()[-1])


def measure(rounds: int = ROUNDS) -> dict[str, float]:
    """Seconds per call of each figure, for the core this interpreter imports."""
    args = {"a": 2, "b": 3}
    text = json.dumps(args)
    plain, one, three, inline, background = (runtime_with_hooks(0), runtime_with_hooks(1), runtime_with_hooks(3),
                                             runtime_with_hooks(3, hook_timeout=0),
                                             runtime_with_hooks(3, post_hooks="background"))
    runtimes = (plain, one, three, inline, background)
    plain.context("pack").register_tool("pack_add", "math", SCHEMA, add)  # a plugin's tool
    for runtime in runtimes:
        runtime.handle_function_call("add", args)  # warm: validators compiled, hook workers started
    plain.handle_function_call("pack_add", args)
    round_trip, six_inline = floor()
    times = best_of({  # in one thread: CPU time
        "direct": (lambda: add(args), 20_000),
        "dict": (lambda: plain.handle_function_call("add", args), 20_000),
        "json": (lambda: plain.handle_function_call("add", text), 20_000),
        "decode": (lambda: json.loads(text), 20_000),
        "3+3 inline": (lambda: inline.handle_function_call("add", args), 5_000),
        "pluggy": (pluggy_six(), 20_000),
    }, rounds, timer=time.process_time)
    times |= best_of({  # hand-offs to another thread: wall time, the direct call again as their baseline
        "direct wall": (lambda: add(args), 20_000),
        "plugin tool": (lambda: plain.handle_function_call("pack_add", args), 2_000),
        "1+1": (lambda: one.handle_function_call("add", args), 2_000),
        "3+3": (lambda: three.handle_function_call("add", args), 2_000),
        "3+3 background": (lambda: background.handle_function_call("add", args), 2_000),
        "round trip": (round_trip, 2_000),
        "six inline": (six_inline, 20_000),
    }, rounds)
    for runtime in runtimes:
        runtime.close()
    return times


def core_of(ref: str, folder: Path) -> Path:
    """``hermes_core`` of git ``ref``, extracted under ``folder``; the folder to put on ``PYTHONPATH``."""
    archive = subprocess.run(["git", "archive", ref, "hermes_core"], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def measured(core: Path) -> dict[str, float]:
    """:func:`measure` in a subprocess that imports the core under ``core``."""
    result = subprocess.run([sys.executable, __file__, "--measure"], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONPATH": str(core), "PYTHONDONTWRITEBYTECODE": "1"})
    return json.loads(result.stdout.strip().splitlines()[-1])


def both(ref: str) -> tuple[dict[str, float], dict[str, float]]:
    """Each figure for this tree's core and for ``ref``'s, measured alternately in fresh processes (best of each)."""
    with tempfile.TemporaryDirectory(prefix="hermes-bench-ref-") as folder:
        theirs_core = core_of(ref, Path(folder))
        ours: dict[str, float] = {}
        theirs: dict[str, float] = {}
        for _ in range(ALTERNATIONS):
            for core, kept in ((ROOT, ours), (theirs_core, theirs)):
                for name, value in measured(core).items():
                    kept[name] = min(value, kept.get(name, value))
    return ours, theirs


def report(times: dict[str, float], theirs: dict[str, float], ref: str) -> None:
    direct = times["direct"]

    def row(label: str, key: str, baseline: str = "direct") -> None:
        overhead, before = times[key] - times[baseline], theirs[key] - theirs[baseline]
        print(f"{label:<52} {times[key] * 1e6:8.2f} µs/call  overhead {overhead * 1e6:7.2f} µs  "
              f"({ref}: {before * 1e6:7.2f} µs, {overhead / max(before, 1e-9):5.2f} ×)")

    print(f"CPU time for the work of one thread; wall time for the hand-offs to a hook thread; each figure beside "
          f"the core of {ref}, measured in the same run")
    print(f"{'handler called directly (baseline)':<52} {direct * 1e6:8.2f} µs/call")
    row("handle_function_call, no hooks, dict args", "dict")
    row("handle_function_call, no hooks, JSON args", "json")
    print(f"  of which json.loads of the arguments: {times['decode'] * 1e6:5.2f} µs")
    row("a plugin's tool, no hooks (handler under a deadline)", "plugin tool", "direct wall")
    row("with 1 pre_tool_call + 1 post_tool_call (deadlines)", "1+1", "direct wall")
    row("with 3 pre_tool_call + 3 post_tool_call (deadlines)", "3+3", "direct wall")
    row("with 3 + 3, post_hooks: background", "3+3 background", "direct wall")
    row("with 3 + 3, hook_timeout: 0 (inline, no deadline)", "3+3 inline")
    print(f"{'anchor: pluggy calling 6 no-op implementations':<52} {times['pluggy'] * 1e6:8.2f} µs/call")
    print(f"{'anchor: a bare ThreadPoolExecutor round trip':<52} {times['round trip'] * 1e6:8.2f} µs")
    print(f"{'anchor: the same six hooks called inline':<52} {times['six inline'] * 1e6:8.2f} µs")
    hooked = times["3+3"] - times["direct wall"]
    hooked_before = theirs["3+3"] - theirs["direct wall"]
    floor_time = times["round trip"] + times["six inline"]
    inline_over = times["3+3 inline"] - direct
    executor = ROOT / "hermes_core" / "workers" / "executor.py"
    lines = len(executor.read_text().splitlines())
    print()
    print(f"no-hook overhead:                      {(times['dict'] - direct) * 1e6:6.2f} µs   (target ≤ 2 µs)")
    print(f"3 + 3 hooks with deadlines vs {ref}:  {hooked / hooked_before:6.2f} ×   (target ≤ 1 ×: no slower)")
    print(f"3 + 3 hooks with deadlines vs floor:   {hooked / floor_time:6.2f} ×   (target ≤ 2 ×; the floor: one "
          f"round trip + six inline hooks, {floor_time * 1e6:.1f} µs)")
    handed = (times["plugin tool"] - times["direct wall"]) / times["round trip"]
    print(f"a plugin's tool vs a bare round trip:  {handed:6.2f} ×   (its handler's hand-off to a worker, under "
          "tools.call_timeout)")
    print(f"hook_timeout: 0 vs pluggy, six hooks:  {inline_over / times['pluggy']:6.2f} ×   (target ≤ 3 ×)")
    print(f"hook executor (hermes_core/workers/executor.py): {lines} lines")
    agent = hermes_agent()
    if agent is not None:
        overhead = agent["via"] - agent["direct"]
        print(f"{'Hermes Agent 0.19 handle_function_call, no hooks':<52} {agent['via'] * 1e6:8.2f} µs/call  "
              f"overhead {overhead * 1e6:7.2f} µs  ({overhead / max(times['dict'] - direct, 1e-9):.1f} × ours)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="REF", default="main", help="the git ref to compare with (default: main)")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)  # (one run, as JSON)
    options = parser.parse_args()
    if options.measure:
        print(json.dumps(measure(ROUNDS // ALTERNATIONS)))
        return
    ours, theirs = both(options.against)
    report(ours, theirs, options.against)


if __name__ == "__main__":
    main()
