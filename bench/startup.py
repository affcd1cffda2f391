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


def timed(code: str, env: dict[str, str], runs: int = 7) -> tuple[float, str]:
    """Median wall time of a fresh interpreter running ``code``, and its last output."""
    times, output = [], ""
    for _ in range(runs):
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - started)
        output = result.stdout.strip()
    return statistics.median(times), output


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as tmp:
        root = Path(tmp)
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
        baseline, _ = timed("import hermes_core", {**base_env, "HERMES_HOME": str(root / "home-base")})
        print(f"python -c 'import hermes_core':                 {baseline * 1000:7.1f} ms (baseline)")
        results = {}
        for plugins, tools_each in ((4, 1), (200, 5)):
            site = make_site(root, plugins, tools_each)
            env = {**base_env, "PYTHONPATH": str(site), "HERMES_HOME": str(root / f"home-{plugins}")}
            for label, extra in (("cached", {}), ("no cache", {"HERMES_NO_CACHE": "1"})):
                seconds, output = timed(PROBE, {**env, **extra})
                count, imported = output.split()
                results[(plugins, label)] = seconds
                print(f"{plugins:>3} plugins, {count:>4} tools, {label:<8}: {seconds * 1000:7.1f} ms "
                      f"({seconds / baseline:.2f} × baseline), plugin modules imported: {imported}")
        for label in ("cached", "no cache"):
            ratio = results[(200, label)] / results[(4, label)]
            print(f"1 000 tools vs 4 plugins ({label}): {ratio:.2f} ×  (target ≤ 1.3 × with the cache)")


if __name__ == "__main__":
    main()
