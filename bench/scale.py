"""Costs as an ecosystem grows: listing, definitions and dispatch from 10 to 1 000 declarative user plugins (5 to
5 000 tools... 50 to 5 000 here: five tools each), each figure a ratio to the 10-plugin one of the same run.

For each size a home holds that many plugin folders (``$HERMES_HOME/plugins/<id>/``: a ``plugin.yaml`` declaring
five tools and the ``tools.py`` their handlers live in). Fresh processes, the discovery cache warm unless said:

- ``hermes tools call`` of one tool (of the middle plugin);
- ``hermes tools list --json``, warm, and cold (the home's ``cache/`` removed before each run);
- ``get_tool_definitions()`` in a fresh interpreter: with ``tools.tool_search`` as Hermes Agent's default
  (``auto``: at 1 000 plugins the bridge stands in for the plugins' tools) and with it ``false`` (every
  definition rendered);
- in-process dispatch of one tool: the median of many ``handle_function_call`` calls in one loaded runtime.

Every case runs once to warm the file cache and the home's caches; then the cases run interleaved, round by round
(a busy moment of the machine falls on all of them alike); a ratio is the median over rounds of the pair taken in
the same round. Targets (issue 43): call ≤ 1.3×, warm list ≤ 2×, definitions ≤ 2×, cold list ≤ 4×, in-process
dispatch ≤ 1.1×.

Run: python bench/scale.py [--rounds N] [--sizes 10,100,1000]   (prints figures; asserts nothing)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from startup import run_once

TOOLS_EACH = 5
VERBS = ("Read", "List", "Create", "Update", "Delete", "Search", "Export", "Summarise", "Archive", "Sync")
THINGS = ("invoices", "tickets", "calendar events", "contacts", "build logs", "deployments", "playlists",
          "dashboards", "feature flags", "support chats", "purchase orders", "wiki pages", "alerts")
DEFINITIONS = """
import hermes_core
print(len(hermes_core.get_tool_definitions()))
"""
DISPATCH = """
import json, statistics, sys, time
import hermes_core
runtime = hermes_core.Runtime()
runtime.load_plugins()
name, args = sys.argv[1], json.loads(sys.argv[2])
assert "error" not in runtime.handle_function_call(name, args)
samples = []
for _ in range(31):
    started = time.perf_counter()
    for _ in range(200):
        runtime.handle_function_call(name, args)
    samples.append((time.perf_counter() - started) / 200)
print(statistics.median(samples) * 1e6)
"""
HANDLER = '''import json


def run(args, **kwargs):
    return json.dumps({"plugin": __name__, "words": len(str(args.get("query", "")).split())})
'''


def make_home(root: Path, plugins: int, tool_search: bool | None = None, name: str = "") -> Path:
    """A home whose plugin folder holds ``plugins`` declarative user plugins of :data:`TOOLS_EACH` tools each."""
    home = root / f"home-{plugins}{name}" if tool_search is None else root / f"home-{plugins}-search-{tool_search}"
    (home / "plugins").mkdir(parents=True)
    if tool_search is not None:
        (home / "config.yaml").write_text(f"tools:\n  tool_search: {str(tool_search).lower()}\n")
    for index in range(plugins):
        folder = home / "plugins" / f"scale-{index}"
        folder.mkdir()
        (folder / "tools.py").write_text(HANDLER)
        tools = "".join(_tool(index, number) for number in range(TOOLS_EACH))
        (folder / "plugin.yaml").write_text(f"name: scale-{index}\nversion: 1.0.0\ndescription: Plugin {index} of "
                                            f"the scale benchmark\ntools:\n{tools}")
    return home


def _tool(index: int, number: int) -> str:
    verb, thing = VERBS[(index + number) % len(VERBS)], THINGS[(index * 7 + number) % len(THINGS)]
    return (f"  - name: scale_{index}_{number}\n    toolset: scale_{index}\n"
            f"    description: {verb} {thing} of workspace {index} and return them as JSON; the query narrows "
            f"them by words, the limit caps the count.\n"
            "    parameters: {type: object, properties: {query: {type: string, description: Words to match}, "
            "limit: {type: integer, minimum: 1, maximum: 100}}, required: [query]}\n"
            "    handler: .tools:run\n"
            f"    annotations: {{read_only: {'true' if number % 2 else 'false'}}}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=9, help="timed rounds of every case (default 9)")
    parser.add_argument("--sizes", default="10,100,1000", help="plugin counts, the first is the base")
    options = parser.parse_args()
    sizes = [int(size) for size in options.sizes.split(",")]
    hermes = str(Path(sys.executable).with_name("hermes"))
    with tempfile.TemporaryDirectory(prefix="hermes-scale-") as tmp:
        root = Path(tmp)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "PYTHON"))}
        cases: dict[str, tuple[list[str], dict[str, str], Path | None]] = {
            "pass": ([sys.executable, "-c", "pass"], {**base, "HERMES_HOME": str(root)}, None)}
        for size in sizes:
            env = {**base, "HERMES_HOME": str(make_home(root, size))}
            off = {**base, "HERMES_HOME": str(make_home(root, size, tool_search=False))}
            cold = {**base, "HERMES_HOME": str(make_home(root, size, name="-cold"))}  # its cache removed per run
            middle = size // 2
            call_args = json.dumps({"query": "open invoices", "limit": 3})
            cases[f"call {size}"] = ([hermes, "tools", "call", f"scale_{middle}_1", call_args], env, None)
            cases[f"list {size}"] = ([hermes, "tools", "list", "--json"], env, None)
            cases[f"cold list {size}"] = ([hermes, "tools", "list", "--json"], cold,
                                          Path(cold["HERMES_HOME"]) / "cache")
            cases[f"definitions {size}"] = ([sys.executable, "-c", DEFINITIONS], env, None)
            cases[f"definitions, search off {size}"] = ([sys.executable, "-c", DEFINITIONS], off, None)
        times, outputs = _timed(cases, options.rounds)
        dispatch = {size: _dispatch_micros(root / f"home-{size}", base, size) for size in sizes}
        _report(sizes, times, outputs, dispatch, options.rounds)


def _timed(cases: dict[str, tuple[list[str], dict[str, str], Path | None]],
           rounds: int) -> tuple[dict[str, list[float]], dict[str, str]]:
    """Each case's wall times over interleaved rounds (a case with a folder has it removed before each run: cold)."""
    for command, env, _ in cases.values():
        run_once(command, env)
    times: dict[str, list[float]] = {name: [] for name in cases}
    outputs: dict[str, str] = {}
    for _ in range(rounds):
        for name, (command, env, cold) in cases.items():
            if cold is not None:
                shutil.rmtree(cold, ignore_errors=True)
            seconds, outputs[name] = run_once(command, env)
            times[name].append(seconds)
    return times, outputs


def _dispatch_micros(home: Path, base: dict[str, str], size: int) -> float:
    """Median microseconds of one in-process ``handle_function_call`` of one tool among ``size`` plugins' tools."""
    args = json.dumps({"query": "open invoices", "limit": 3})
    result = subprocess.run([sys.executable, "-c", DISPATCH, f"scale_{size // 2}_1", args],
                            env={**base, "HERMES_HOME": str(home)}, cwd=home, capture_output=True, text=True,
                            timeout=600, check=True)
    return float(result.stdout.strip())


def _ratio(times: dict[str, list[float]], case: str, base: str) -> float:
    return statistics.median(a / b for a, b in zip(times[case], times[base], strict=True))


def _report(sizes: list[int], times: dict[str, list[float]], outputs: dict[str, str], dispatch: dict[int, float],
            rounds: int) -> None:
    first = sizes[0]
    print(f"Medians of {rounds} interleaved rounds, whole processes ({sys.executable}); python -c pass: "
          f"{statistics.median(times['pass']) * 1000:.1f} ms")
    print(f"each ratio: the median over rounds of the figure against the {first}-plugin one of the same round\n")
    header = f"{'plugins (tools)':<28}" + "".join(f"{f'{s} ({s * TOOLS_EACH})':>22}" for s in sizes)
    print(header)
    rows = [("hermes tools call (1 tool)", "call", 1.3), ("hermes tools list, warm", "list", 2.0),
            ("get_tool_definitions()", "definitions", 2.0),
            ("  tool_search: false", "definitions, search off", 2.0), ("hermes tools list, cold", "cold list", 4.0)]
    for label, case, target in rows:
        cells = []
        for size in sizes:
            median = statistics.median(times[f"{case} {size}"]) * 1000
            ratio = _ratio(times, f"{case} {size}", f"{case} {first}")
            cells.append(f"{median:8.0f} ms {ratio:5.2f}×")
        print(f"{label:<28}" + "".join(f"{cell:>22}" for cell in cells) + f"   target ≤ {target}×")
    cells = [f"{dispatch[size]:8.1f} µs {dispatch[size] / dispatch[first]:5.2f}×" for size in sizes]
    print(f"{'in-process dispatch':<28}" + "".join(f"{cell:>22}" for cell in cells) + "   target ≤ 1.1×")
    counts = "  ".join(f"{size}: {outputs[f'definitions {size}']} / {outputs[f'definitions, search off {size}']}"
                       for size in sizes)
    print(f"\ndefinitions returned (tool_search default / false): {counts}")


if __name__ == "__main__":
    main()
