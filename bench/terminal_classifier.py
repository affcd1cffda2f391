"""The terminal classifier's cost per command: 10 000 commands of the pack's safe corpora classified by today's
classifier and by a baseline one, loaded in the same run from a commit (by default the one before the classifier
followed every place bash runs a command), so the ratio compares like with like.

Run: python bench/terminal_classifier.py [COMMIT]   (prints figures; asserts nothing; needs git)
"""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACK = ROOT / "hermes_plugins" / "terminal"
sys.path.insert(0, str(PACK))

from hermes_plugin_terminal.danger import classify  # noqa: E402  (the pack is not installed in every venv)

#: The classifier before issue 45 (the commit its branch started from).
BASELINE = "ca27164"
COMMANDS = 10_000
ROUNDS = 5
PACKAGE = "hermes_plugin_terminal"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, PACK / "tests" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def corpus() -> list[str]:
    """The safe corpora (everyday commands, safe look-alikes, inline one-liners), repeated to :data:`COMMANDS`."""
    everyday = _load("test_terminal_everyday")
    safe = [*everyday.EVERYDAY, *everyday.INLINE_ONE_LINERS,
            *(command for command, level, _ in _load("test_terminal_danger").CORPUS if level.value == "safe")]
    return [safe[index % len(safe)] for index in range(COMMANDS)]


def baseline_classifier(commit: str, folder: Path) -> Callable[[str], Any]:
    """``classify`` of the terminal pack at ``commit``, unpacked into ``folder`` and imported under another name."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, str(PACK.relative_to(ROOT) / PACKAGE)],
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    package = folder / PACK.relative_to(ROOT) / PACKAGE
    spec = importlib.util.spec_from_file_location("baseline_terminal", package / "__init__.py",
                                                  submodule_search_locations=[str(package)])
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["baseline_terminal"] = module
    spec.loader.exec_module(module)
    danger = importlib.import_module("baseline_terminal.danger")
    return danger.classify  # type: ignore[no-any-return]


def per_command(function: Callable[[str], Any], commands: list[str]) -> float:
    """The fastest of :data:`ROUNDS` passes over ``commands``, in microseconds per command."""
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for command in commands:
            function(command)
        best = min(best, time.perf_counter() - started)
    return best / len(commands) * 1e6


def main() -> None:
    commit = sys.argv[1] if len(sys.argv) > 1 else BASELINE
    commands = corpus()
    with tempfile.TemporaryDirectory() as folder:
        baseline = baseline_classifier(commit, Path(folder))
        for function in (baseline, classify):  # warm both: the parser, the regular expressions
            for command in commands[:500]:
                function(command)
        before = per_command(baseline, commands)
        now = per_command(classify, commands)
    print(f"classifying {len(commands):,} safe-corpus commands: {now:.0f} µs per command, baseline ({commit}) "
          f"{before:.0f} µs ({now / before:.2f}x; target at most 2x)")


if __name__ == "__main__":
    main()
