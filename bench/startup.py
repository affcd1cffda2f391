"""Start-up cost: discovery plus ``get_tool_definitions`` with 4 plugins and with 200 plugin distributions
declaring 1 000 tools, each against ``python -c "import hermes_core"`` measured in the same run.

Run: python bench/startup.py   (prints figures; asserts nothing)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROBE = """
import sys, hermes_core
runtime = hermes_core.Runtime()
runtime.load_plugins()
definitions = runtime.get_tool_definitions()
plugin_modules = [m for m in sys.modules if m.startswith(("bench_plugin_", "hermes_plugins."))]
print(len(definitions), len(plugin_modules))
"""


def make_site(root: Path, plugins: int, tools_each: int) -> Path:
    """Fake installed distributions: an entry point, a package and a plugin.yaml declaring its tools."""
    site = root / f"site-{plugins}"
    site.mkdir()
    for index in range(plugins):
        package = f"bench_plugin_{index}"
        (site / package).mkdir()
        (site / package / "__init__.py").write_text("raise RuntimeError('a benchmark plugin was imported')\n")
        tools = "".join(
            f"  - name: bench_{index}_{tool}\n    toolset: bench_{index}\n"
            f"    description: Tool {tool} of plugin {index}; it reads a file and returns its words.\n"
            f"    parameters: {{type: object, properties: {{path: {{type: string}}}}, required: [path]}}\n"
            f"    handler: {package}.tools:run\n"
            for tool in range(tools_each))
        (site / package / "plugin.yaml").write_text(f"name: bench-{index}\nversion: 1.0\ntools:\n{tools}")
        dist = site / f"{package}-1.0.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 1.0\n")
        (dist / "entry_points.txt").write_text(f"[hermes_agent.plugins]\nbench-{index} = {package}\n")
    return site


def run_once(code: str, env: dict[str, str]) -> tuple[float, str]:
    """Wall time of a fresh interpreter running ``code``, and what it printed."""
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, result.stdout.strip()


def timed(cases: dict[str, tuple[str, dict[str, str]]], rounds: int = 9) -> dict[str, tuple[float, str]]:
    """Median wall time of each case, the cases run interleaved round by round (a busy moment of the
    machine then falls on all of them alike)."""
    for code, env in cases.values():
        run_once(code, env)  # warm the file cache and write the discovery cache
    times: dict[str, list[float]] = {name: [] for name in cases}
    outputs: dict[str, str] = {}
    for _ in range(rounds):
        for name, (code, env) in cases.items():
            seconds, outputs[name] = run_once(code, env)
            times[name].append(seconds)
    return {name: (statistics.median(times[name]), outputs[name]) for name in cases}


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as tmp:
        root = Path(tmp)
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
        cases = {"baseline": ("import hermes_core", {**base_env, "HERMES_HOME": str(root / "home-base")})}
        for plugins, tools_each in ((4, 1), (200, 5)):
            site = make_site(root, plugins, tools_each)
            env = {**base_env, "PYTHONPATH": str(site), "HERMES_HOME": str(root / f"home-{plugins}")}
            cases[f"{plugins} cached"] = (PROBE, env)
            cases[f"{plugins} no cache"] = (PROBE, {**env, "HERMES_NO_CACHE": "1"})
        results = timed(cases)
        baseline = results.pop("baseline")[0]
        print(f"python -c 'import hermes_core':               {baseline * 1000:7.1f} ms (baseline)")
        for name, (seconds, output) in results.items():
            count, imported = output.split()
            plugins, label = name.split(" ", 1)
            print(f"{plugins:>3} plugins, {count:>4} tools, {label:<8}: {seconds * 1000:7.1f} ms "
                  f"({seconds / baseline:.2f} × baseline), plugin modules imported: {imported}")
        for label in ("cached", "no cache"):
            ratio = results[f"200 {label}"][0] / results[f"4 {label}"][0]
            print(f"1 000 tools vs 4 plugins ({label}): {ratio:.2f} ×  (target ≤ 1.3 ×)")


if __name__ == "__main__":
    main()
