"""Fixtures for the file tools: an isolated HERMES_HOME, a workspace, and a directory outside it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

Call = Callable[..., dict[str, Any]]


@pytest.fixture
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    return home


@pytest.fixture
def workspace(tmp_path: Path, hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The workspace root, selected through ``HERMES_WORKSPACE``."""
    root = tmp_path / "workspace"
    root.mkdir()
    monkeypatch.setenv("HERMES_WORKSPACE", str(root))
    return root


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


@pytest.fixture
def call() -> Call:
    """Call a handler the way the core does and decode its JSON result."""

    def run(handler: Callable[..., str], **args: Any) -> dict[str, Any]:
        result = handler(args, task_id=None, session_id=None, tool_call_id=None, user_task=None)
        assert isinstance(result, str)
        return json.loads(result)

    return run
