"""One checkpoint of a 5 000-file workspace beside ``git add -A && git commit`` run directly, in the same run
(target ≤ 1.2 ×).

Two cases, each timed against its own floor on an identical copy of the workspace:

- the first checkpoint (a fresh store; every file is hashed and written) beside ``git init`` + ``git add -A`` +
  ``git commit`` in a fresh repository;
- a later one, after 10 files changed, beside ``git add -A`` + ``git commit`` of the same change.

The direct git runs with the same isolation from the user's git configuration as the store. Wall time (the work is
git's, in child processes), the best of several interleaved rounds.

Run: python bench/checkpoints.py   (prints figures; asserts nothing)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from hermes_core.checkpoints.store import CheckpointStore
from hermes_core.config.model import CheckpointsConfig

FILES = 5_000
ROUNDS = 5
#: Later checkpoints per round (each after 10 files changed).
LATER = 5
CHANGED = 10
GIT_ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_CONFIG_SYSTEM": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "bench",
           "GIT_AUTHOR_EMAIL": "bench@local", "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@local"}


def make_workspace(folder: Path) -> Path:
    """5 000 small text files in 50 folders (about 1 KB each)."""
    for index in range(FILES):
        path = folder / f"package{index % 50:02d}" / f"module{index:04d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# module {index}\n" + f"VALUE_{index} = {index}\n" * 40)
    return folder


def change(folder: Path, round_number: int) -> None:
    for index in range(CHANGED):
        path = folder / f"package{index % 50:02d}" / f"module{index:04d}.py"
        path.write_text(path.read_text() + f"CHANGED = {round_number}\n")


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, env=GIT_ENV, check=True, capture_output=True)


def commit(folder: Path, *, init: bool = False) -> None:
    """What the checkpoint is measured against: ``git add -A && git commit`` (after ``git init``, for the first)."""
    if init:
        git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "snapshot")


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    base = Path(tempfile.mkdtemp(prefix="hermes-bench-checkpoints-"))
    template = make_workspace(base / "template")
    settings = CheckpointsConfig(enabled=True)
    first: dict[str, list[float]] = {"git": [], "checkpoint": []}
    later: dict[str, list[float]] = {"git": [], "checkpoint": []}
    try:
        for round_number in range(ROUNDS):
            plain = shutil.copytree(template, base / f"plain{round_number}")
            watched = shutil.copytree(template, base / f"watched{round_number}")
            store = CheckpointStore(base / f"store{round_number}", settings)

            first["git"].append(timed(partial(commit, plain, init=True)))
            first["checkpoint"].append(timed(partial(store.take, watched, "first")))
            for step in range(LATER):
                change(plain, round_number * LATER + step)
                change(watched, round_number * LATER + step)
                later["git"].append(timed(partial(commit, plain)))
                later["checkpoint"].append(timed(partial(store.take, watched, "later")))
            assert len(store.list(watched)) == 1 + LATER
    finally:
        shutil.rmtree(base, ignore_errors=True)
    for label, times in (("first checkpoint", first), (f"after {CHANGED} files changed", later)):
        floor, ours = min(times["git"]), min(times["checkpoint"])
        print(f"{label:<28} git add -A && git commit {floor * 1e3:8.1f} ms   checkpoint {ours * 1e3:8.1f} ms   "
              f"{ours / floor:.2f} x (target <= 1.2 x)")


if __name__ == "__main__":
    main()
