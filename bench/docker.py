"""A command on the ``docker`` backend beside ``docker exec`` run directly, in the same run (target ≤ 1.2 ×).

Both go through the same podman (the wrapper and busybox image of the docker pack's tests, built here) into the same
running container: the backend's ``run("echo hi")`` (its preamble, ``setsid``, output pumping and cwd report), and
``podman exec CONTAINER sh -c 'echo hi'`` with its output read by ``subprocess.run``. Wall time, the best of several
interleaved rounds.

Run: python bench/docker.py   (prints figures; asserts nothing; needs podman, busybox-static and root)
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 7
PER_ROUND = 10


def _podman_support() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hermes_docker_podman",
                                                  ROOT / "hermes_plugins" / "docker" / "tests" / "podman.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclass looks itself up there)
    spec.loader.exec_module(module)
    return module


def best(statements: dict[str, Callable[[], object]]) -> dict[str, float]:
    """Seconds per run of each statement: the best round, rounds interleaved."""
    times: dict[str, list[float]] = {name: [] for name in statements}
    for _ in range(ROUNDS):
        for name, statement in statements.items():
            started = time.perf_counter()
            for _ in range(PER_ROUND):
                statement()
            times[name].append((time.perf_counter() - started) / PER_ROUND)
    return {name: min(slot) for name, slot in times.items()}


def main() -> None:
    from hermes_core.backends import BackendSetup

    sys.path.insert(0, str(ROOT / "hermes_plugins" / "docker"))
    from hermes_plugin_docker.backend import DockerBackend

    folder = Path(tempfile.mkdtemp(prefix="hermes-bench-docker-"))
    podman = _podman_support().make_podman(folder)
    if isinstance(podman, str):
        print(f"skipped: {podman}")
        return
    workspace = folder / "workspace"
    workspace.mkdir()
    backend = DockerBackend(BackendSetup("docker", {"executable": str(podman.executable), "image": podman.image},
                                         workspace, folder))
    try:
        direct = [str(podman.executable), "exec", backend.container.name, "sh", "-c", "echo hi"]
        assert subprocess.run(direct, capture_output=True, text=True, check=True).stdout == "hi\n"
        assert backend.run("echo hi", cwd=str(workspace), timeout=60, max_output_chars=1000).output == "hi\n"
        times = best({
            "direct": lambda: subprocess.run(direct, capture_output=True, check=True),
            "backend": lambda: backend.run("echo hi", cwd=str(workspace), timeout=60, max_output_chars=1000),
        })
    finally:
        backend.close()
        podman.remove()
    print(f"{'podman exec CONTAINER sh -c (direct)':<44} {times['direct'] * 1e3:8.1f} ms/command")
    print(f"{'the docker backend run()':<44} {times['backend'] * 1e3:8.1f} ms/command  "
          f"{times['backend'] / times['direct']:.2f} x direct (target <= 1.2 x)")


if __name__ == "__main__":
    main()
