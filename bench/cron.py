"""What a scheduler tick costs when nothing is due: whole ``hermes cron tick`` processes against ``python -c pass``,
measured in one run.

- ``hermes cron tick`` on a home with 1 000 jobs, none due (what a Kubernetes CronJob or a systemd timer pays
  every minute), and on a home with no job;
- ``hermes --help`` (the command line's own start) and ``python -c pass`` (the interpreter's), as floors.

Run with the interpreter of a venv where hermes-tools and hermes-tools-cron are installed (``make bench`` does).
Cases run once to warm the caches, then interleaved round by round; medians are printed.

Run: python bench/cron.py [--rounds N] [--jobs N]   (prints figures; asserts nothing)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path


def jobs_file(folder: Path, count: int) -> None:
    """``count`` jobs in Hermes Agent's format, the next run of each a day away."""
    later = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    schedule = {"kind": "cron", "expr": "0 9 * * *", "display": "0 9 * * *"}
    jobs = [{"id": f"{index:012x}", "name": f"job {index}", "prompt": "", "tool": "echo", "arguments": {"i": index},
             "schedule": schedule, "schedule_display": "0 9 * * *", "repeat": {"times": None, "completed": 0},
             "enabled": True, "state": "scheduled", "next_run_at": later, "last_run_at": None, "deliver": "local"}
            for index in range(count)]
    (folder / "cron").mkdir(parents=True)
    (folder / "cron" / "jobs.json").write_text(json.dumps({"jobs": jobs}, indent=2))


def run_once(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, env=env, cwd=env["HERMES_HOME"], capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {result.stderr.strip()[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=11, help="timed rounds of every case (default 11)")
    parser.add_argument("--jobs", type=int, default=1000, help="jobs in the busy home (default 1000)")
    options = parser.parse_args()
    hermes = str(Path(sys.executable).with_name("hermes"))
    base = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "PYTHON"))}
    with tempfile.TemporaryDirectory(prefix="hermes-bench-cron-") as tmp:
        empty, busy = Path(tmp) / "empty", Path(tmp) / "busy"
        empty.mkdir()
        jobs_file(busy, options.jobs)
        cases = {
            "pass": ([sys.executable, "-c", "pass"], {**base, "HERMES_HOME": str(empty)}),
            "help": ([hermes, "--help"], {**base, "HERMES_HOME": str(empty)}),
            "tick, no job": ([hermes, "cron", "tick"], {**base, "HERMES_HOME": str(empty)}),
            "tick, busy": ([hermes, "cron", "tick"], {**base, "HERMES_HOME": str(busy)}),
        }
        for command, env in cases.values():
            run_once(command, env)
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(options.rounds):
            for name, (command, env) in cases.items():
                times[name].append(run_once(command, env))
        before = (busy / "cron" / "jobs.json").stat().st_mtime_ns
        run_once(*cases["tick, busy"])
        unchanged = (busy / "cron" / "jobs.json").stat().st_mtime_ns == before
    seconds = {name: statistics.median(values) for name, values in times.items()}

    def ratio(case: str, floor: str) -> float:
        return statistics.median(a / b for a, b in zip(times[case], times[floor], strict=True))

    print(f"Medians of {options.rounds} interleaved rounds, whole processes ({sys.executable})")
    print(f"{'python -c pass':<44} {seconds['pass'] * 1000:7.1f} ms")
    for name, label in (("help", "hermes --help"), ("tick, no job", "hermes cron tick, no job"),
                        ("tick, busy", f"hermes cron tick, {options.jobs} jobs, none due")):
        print(f"{label:<44} {seconds[name] * 1000:7.1f} ms  {ratio(name, 'pass'):5.2f} × python -c pass  "
              f"{ratio(name, 'help'):5.2f} × hermes --help")
    print(f"{options.jobs} jobs against none: {ratio('tick, busy', 'tick, no job'):.2f} ×; "
          f"jobs.json left unwritten by a tick with nothing due: {unchanged}")


if __name__ == "__main__":
    main()
