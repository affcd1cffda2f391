"""Fixtures for the agent pack's tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_core import Runtime


@pytest.fixture
def agent_runtime(hermes_runtime: Runtime, hermes_home: Path,
                  load_hermes_plugin: Callable[..., Any]) -> Callable[[dict[str, Any]], Runtime]:
    """``agent_runtime(config)``: the test's runtime with this pack loaded and ``config`` as its config.yaml."""

    def make(config: dict[str, Any]) -> Runtime:
        (hermes_home / "config.yaml").write_text(yaml.safe_dump(config))
        load_hermes_plugin("hermes_plugin_agent", plugin_id="agent")
        return hermes_runtime

    return make
