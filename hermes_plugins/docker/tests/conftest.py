"""A real container runtime for the docker backend's tests: podman through a wrapper executable, with an image
built offline from busybox-static (see podman.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .podman import Podman, make_podman


@pytest.fixture(scope="session")
def podman(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Podman]:
    """podman that works on this machine, with the busybox image imported (skips, saying why, where it cannot)."""
    made = make_podman(tmp_path_factory.mktemp("podman"))
    if isinstance(made, str):
        pytest.skip(made)
    yield made
    made.remove()


@pytest.fixture
def docker_settings(podman: Podman) -> dict[str, object]:
    """``terminal.docker`` for the podman fixture."""
    return {"executable": str(podman.executable), "image": podman.image}


@pytest.fixture
def host_home_entry() -> str | None:
    """Some entry of this machine's home folder (which the container must not see), if it has any."""
    home = Path.home()
    entries = sorted(entry.name for entry in home.iterdir()) if home.is_dir() else []
    return str(home / entries[0]) if entries else None

