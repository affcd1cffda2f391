"""Start-up cost as users feel it: whole ``hermes`` processes against the interpreter floor, measured in one run.

- ``hermes plugins list`` and ``hermes tools list`` (with whatever packs are installed beside this
  interpreter; ``make bench`` installs the first-party packs) against ``python -c "import click,
  pluggy, yaml"`` (what any click + pluggy + YAML tool pays) and ``python -c pass``;
- ``hermes tools list`` and ``hermes --help`` with one configured MCP server that never answers
  (``connect_timeout: 5``) against the same commands with no server;
- ``import hermes_core``, with the top entries of ``-X importtime``;
- discovery plus ``get_tool_definitions()`` with 4 plugins and with 200 plugin distributions declaring
  1 000 tools (with and without the discovery cache), against ``python -c pass``;
- when ``HERMES_AGENT_PYTHON`` names an interpreter with ``hermes-agent==0.19.0`` installed (``make
  bench-vs-hermes-agent``): Hermes Agent's ``hermes plugins list --plain`` and ``hermes tools list``.

Every case runs once to warm the file cache and the caches in its home, then the cases run interleaved,
round by round (a busy moment of the machine falls on all of them alike); medians are printed.

Run: python bench/startup.py [--rounds N]   (prints figures; asserts nothing)
"""

from __future__ import annotations

import argparse
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
NEVER_ANSWERS = f"""mcp_servers:
  silent:
    command: {sys.executable}
    args: ["-c", "import time; time.sleep(3600)"]
    connect_timeout: 5
"""

Case = tuple[list[str], dict[str, str]]


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


def run_once(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Wall time of one process, and what it printed (run in its home, so that no source tree in the working
    directory shadows the installed packages)."""
    started = time.perf_counter()
    result = subprocess.run(command, env=env, cwd=env["HERMES_HOME"], capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {result.stderr.strip()[-500:]}")
    return elapsed, result.stdout.strip()


def timed(cases: dict[str, Case], rounds: int) -> tuple[dict[str, list[float]], dict[str, str]]:
    """Each case's wall times, the cases run interleaved round by round (so that the figures of one round
    can be paired: a busy moment of the machine falls on all of them alike), and what each printed."""
    for command, env in cases.values():
        run_once(command, env)  # warm the file cache and the caches of the home
    times: dict[str, list[float]] = {name: [] for name in cases}
    outputs: dict[str, str] = {}
    for _ in range(rounds):
        for name, (command, env) in cases.items():
            seconds, outputs[name] = run_once(command, env)
            times[name].append(seconds)
    return times, outputs


def paired(times: dict[str, list[float]], case: str, baseline: str) -> float:
    """The median over rounds of ``case``'s time divided by ``baseline``'s in the same round."""
    return statistics.median(a / b for a, b in zip(times[case], times[baseline], strict=True))


def paired_difference(times: dict[str, list[float]], case: str, baseline: str) -> float:
    """The median over rounds of ``case``'s time minus ``baseline``'s in the same round (seconds)."""
    return statistics.median(a - b for a, b in zip(times[case], times[baseline], strict=True))


def importtime_top(env: dict[str, str], count: int = 8) -> list[tuple[str, int]]:
    """The modules with the largest cumulative import time under ``import hermes_core`` (µs): hermes_core
    itself, then the others."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", "import hermes_core"], env=env,
                            cwd=env["HERMES_HOME"], capture_output=True, text=True, check=True)
    rows = []
    for line in result.stderr.splitlines()[1:]:
        if line.startswith("import time:") and line.count("|") == 2:
            _, cumulative, name = line.split("|")
            rows.append((name.rstrip(), int(cumulative)))
    rows.sort(key=lambda row: -row[1])
    return [row for row in rows if row[0].strip() == "hermes_core"] + \
        [row for row in rows if row[0].strip() != "hermes_core"][:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=11, help="timed rounds of every case (default 11)")
    options = parser.parse_args()
    hermes = str(Path(sys.executable).with_name("hermes"))
    agent = os.environ.get("HERMES_AGENT_PYTHON")
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as tmp:
        root = Path(tmp)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "PYTHON"))}

        def home(name: str, config: str | None = None) -> dict[str, str]:
            folder = root / name
            folder.mkdir()
            if config is not None:
                (folder / "config.yaml").write_text(config)
            return {**base, "HERMES_HOME": str(folder)}

        plain, dead = home("plain"), home("dead-mcp", NEVER_ANSWERS)
        cases: dict[str, Case] = {
            "pass": ([sys.executable, "-c", "pass"], plain),
            "floor": ([sys.executable, "-c", "import click, pluggy, yaml"], plain),
            "import": ([sys.executable, "-c", "import hermes_core"], plain),
            "plugins list": ([hermes, "plugins", "list"], plain),
            "tools list": ([hermes, "tools", "list"], plain),
            "--help": ([hermes, "--help"], plain),
            "tools list, dead MCP server": ([hermes, "tools", "list"], dead),
            "--help, dead MCP server": ([hermes, "--help"], dead),
        }
        for plugins, tools_each in ((4, 1), (200, 5)):
            env = {**home(f"home-{plugins}"), "PYTHONPATH": str(make_site(root, plugins, tools_each))}
            cases[f"{plugins} cached"] = ([sys.executable, "-c", PROBE], env)
            cases[f"{plugins} no cache"] = ([sys.executable, "-c", PROBE], {**env, "HERMES_NO_CACHE": "1"})
        if agent:
            agent_home = home("hermes-agent")
            agent_bin = Path(agent).with_name("hermes")
            cases["Hermes Agent plugins list"] = ([str(agent_bin), "plugins", "list", "--plain"], agent_home)
            cases["Hermes Agent tools list"] = ([str(agent_bin), "tools", "list"], agent_home)
        times, outputs = timed(cases, options.rounds)
        seconds = {name: statistics.median(values) for name, values in times.items()}
        print(f"Medians of {options.rounds} interleaved rounds, whole processes ({sys.executable});")
        print("ratios and differences are medians of the pairs taken in the same round")
        floor_label = 'python -c "import click, pluggy, yaml" (floor)'
        print(f"{'python -c pass':<48} {seconds['pass'] * 1000:7.1f} ms")
        print(f"{floor_label:<48} {seconds['floor'] * 1000:7.1f} ms")
        for name in ("import", "plugins list", "tools list", "--help", *(n for n in seconds if n.startswith("Hermes"))):
            label = "python -c 'import hermes_core'" if name == "import" else \
                name if name.startswith("Hermes") else f"hermes {name}"
            print(f"{label:<48} {seconds[name] * 1000:7.1f} ms  {paired(times, name, 'floor'):5.2f} × floor  "
                  f"{paired(times, name, 'pass'):5.2f} × python -c pass")
        for command in ("tools list", "--help"):
            extra = paired_difference(times, f"{command}, dead MCP server", command)
            print(f"{'hermes ' + command + ', MCP server that never answers':<48} "
                  f"{seconds[command + ', dead MCP server'] * 1000:7.1f} ms  ({extra * 1000:+.1f} ms against none)")
        print("targets: plugins list ≤ 100 ms and ≤ 1.8 × floor; import hermes_core ≤ 60 ms; "
              "a dead MCP server ≤ +50 ms")
        print("\nimport hermes_core, -X importtime, largest cumulative (µs):")
        for name, micros in importtime_top(plain):
            print(f"  {micros:>8}  {name}")
        print("\nDiscovery + get_tool_definitions() in a fresh process:")
        for plugins in (4, 200):
            for label in ("cached", "no cache"):
                case = f"{plugins} {label}"
                count, imported = outputs[case].split()
                print(f"  {plugins:>3} plugins, {count:>4} tools, {label:<8}: {seconds[case] * 1000:7.1f} ms "
                      f"({paired(times, case, 'pass'):.2f} × python -c pass), plugin modules imported: {imported}")
        for label in ("cached", "no cache"):
            print(f"  1 000 tools vs 4 plugins ({label}): {paired(times, f'200 {label}', f'4 {label}'):.2f} ×")


if __name__ == "__main__":
    main()
