"""Fixtures for the file tools: the pack loaded into the testing kit's runtime, and a directory outside it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_core import Runtime
from hermes_core.plugins.discovery import candidate_from_module

Call = Callable[..., dict[str, Any]]


@pytest.fixture
def workspace(hermes_workspace: Path) -> Path:
    """The workspace root: the testing kit runtime's workspace."""
    return hermes_workspace


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace holding a secret the tools must never reach."""
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "secret.txt").write_text("TOP SECRET\n")
    return directory


@pytest.fixture
def file_settings(hermes_home: Path) -> Callable[..., None]:
    """Write ``plugins.entries.file.settings`` into the isolated config.yaml."""

    def write(**settings: Any) -> None:
        config = {"plugins": {"entries": {"file": {"settings": settings}}}}
        (hermes_home / "config.yaml").write_text(yaml.safe_dump(config))

    return write


def _calling(runtime: Runtime) -> Call:
    """Call a handler's tool through ``runtime`` (hooks and argument checks included), JSON decoded."""

    def run(handler: Callable[..., str], **args: Any) -> dict[str, Any]:
        result = runtime.handle_function_call(handler.__name__, args)
        assert isinstance(result, str)
        return json.loads(result)

    return run


@pytest.fixture
def call(load_hermes_plugin, hermes_runtime: Runtime) -> Call:
    """Call a handler's tool the way an agent does, in the testing kit's runtime."""
    load_hermes_plugin("hermes_plugin_file", "file")
    return _calling(hermes_runtime)


@pytest.fixture
def call_with(hermes_home: Path) -> Iterator[Callable[..., Call]]:
    """``call_with(workspace=...)``: like ``call``, in another runtime over the same home made with these options."""
    made: list[Runtime] = []

    def make(**options: Any) -> Call:
        runtime = Runtime(home=hermes_home, entry_points=(), **options)
        runtime.load_candidate(candidate_from_module("hermes_plugin_file", "file"))
        made.append(runtime)
        return _calling(runtime)

    yield make
    for runtime in made:
        runtime.close()
