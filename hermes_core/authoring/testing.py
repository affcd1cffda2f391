"""The pytest plugin for plugin authors (registered through the ``pytest11`` entry point).

Fixtures:

- ``hermes_home``: an isolated, empty ``HERMES_HOME`` for the test.
- ``hermes_workspace``: an empty folder, the workspace of ``hermes_runtime``.
- ``hermes_runtime``: a fresh :class:`~hermes_core.Runtime` over those two that discovers nothing by itself.
- ``load_hermes_plugin``: load a plugin from a folder path or an importable module name into that runtime
  (an installed module keeps the id of its ``hermes_agent.plugins`` entry point; otherwise the manifest's name).
- ``call_tool``: call a tool through ``handle_function_call`` (hooks included) and decode JSON results.
- ``manifest_drift``: where a plugin's ``plugin.yaml`` and its ``@tool`` functions disagree (``[]`` when they
  do not), as ``hermes plugins validate --imports`` reports it.

Helper: :func:`scaled_timeout` turns a test's hang bound into one that holds on a slow or busy machine.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ..calls.approval import set_approval_callback
from ..plugins.discovery import candidate_for_validation, candidate_from_module
from ..plugins.records import PluginRecord
from ..runtime import Runtime

__all__ = ["call_tool", "hermes_home", "hermes_runtime", "hermes_workspace", "load_hermes_plugin", "manifest_drift",
           "scaled_timeout"]

MODULE_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
TIMEOUT_SCALE_VARIABLE = "HERMES_TEST_TIMEOUT_SCALE"


def timeout_scale() -> float:
    """How much longer than on an idle machine a test may wait: ``HERMES_TEST_TIMEOUT_SCALE`` when set, else the
    run queue per core (the 1-minute load average over the CPU count, at least 1): a step that takes 3 s idle
    takes 35 s on two cores shared by ten busy jobs, and a fixed bound then fails a test that did not hang."""
    given = os.environ.get(TIMEOUT_SCALE_VARIABLE, "").strip()
    if given:
        try:
            scale = float(given)
        except ValueError:
            raise ValueError(f"{TIMEOUT_SCALE_VARIABLE} must be a number, not {given!r}") from None
        if scale <= 0:
            raise ValueError(f"{TIMEOUT_SCALE_VARIABLE} must be above 0, not {given!r}")
        return scale
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # Windows has no load average
        return 1.0
    return max(1.0, load / (os.cpu_count() or 1))


def scaled_timeout(seconds: float) -> float:
    """``seconds`` (the bound that holds on an idle machine) times :func:`timeout_scale`: pass it as the
    ``timeout=`` of a subprocess or a wait that only guards against a hang."""
    return seconds * timeout_scale()


@pytest.fixture
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home folder of this test (also set as ``HERMES_HOME``); plugin-selection variables are cleared."""
    home = tmp_path / "hermes-home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HERMES_HOME", str(home))
    for name in ("HERMES_ENABLE_PROJECT_PLUGINS", "HERMES_LOAD_PLUGINS", "HERMES_SAFE_MODE"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def hermes_workspace(tmp_path: Path) -> Path:
    """An empty folder: the workspace of ``hermes_runtime`` (file tools work and commands start there)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    return workspace


@pytest.fixture
def hermes_runtime(hermes_home: Path, hermes_workspace: Path) -> Iterator[Runtime]:
    """A runtime of its own over ``hermes_home`` and ``hermes_workspace``: nothing is discovered (plugins come
    only from ``load_hermes_plugin``), and no tools, hooks or approvals leak in from other tests. Approval
    requests go to the process-wide callback, reset to the default (refuse without a terminal) meanwhile."""
    runtime = Runtime(home=hermes_home, workspace=hermes_workspace, entry_points=())
    previous = set_approval_callback(None)
    yield runtime
    set_approval_callback(previous)
    runtime.close()


@pytest.fixture
def load_hermes_plugin(hermes_runtime: Runtime) -> Callable[..., PluginRecord]:
    """``load_hermes_plugin(path_or_module, plugin_id=None)``: load one plugin, failing the test if it errs.

    A ``Path`` (or a string that is not a dotted module name) is a plugin folder; a module name is a package
    (an installed one keeps the id of its ``hermes_agent.plugins`` entry point, else its manifest's name).
    """

    def load(target: str | Path, plugin_id: str | None = None) -> PluginRecord:
        # a dotted name is a module even when a folder of that name is in the working directory
        if isinstance(target, Path) or not MODULE_NAME.fullmatch(str(target)):
            record = hermes_runtime.load_plugin_from_path(Path(target), plugin_id)
        else:
            record = hermes_runtime.load_candidate(candidate_from_module(str(target), plugin_id))
        if record.state == "error":
            pytest.fail(f"plugin {record.id!r} failed to load: {record.reason}")
        return record

    return load


@pytest.fixture
def call_tool(hermes_runtime: Runtime) -> Callable[..., Any]:
    """``call_tool(name, **args)``: the result through ``handle_function_call``, JSON decoded when it is JSON; the
    call's ``post_tool_call`` observers have run when it returns (see :meth:`~hermes_core.Runtime.flush_hooks`)."""

    def call(name: str, /, **args: Any) -> Any:
        result = hermes_runtime.handle_function_call(name, args)
        hermes_runtime.flush_hooks()
        try:
            return json.loads(result)
        except ValueError:
            return result

    return call


@pytest.fixture
def manifest_drift() -> Callable[..., list[str]]:
    """``manifest_drift(path_or_module)``: each way ``plugin.yaml`` and the plugin's ``@tool`` functions disagree
    (a parameter on one side only, a type, required-ness, a description, ...); imports the modules that hold
    them, never ``register()``. ``hermes plugins compile`` makes the list empty."""
    from .compile import manifest_drift as drift

    def check(target: str | Path) -> list[str]:
        if isinstance(target, Path) or not MODULE_NAME.fullmatch(str(target)):
            candidate = candidate_for_validation(Path(target))
            if candidate is None:
                pytest.fail(f"{target}: no plugin.yaml found")
        else:
            candidate = candidate_from_module(str(target))
        problems, warnings = drift(candidate, imports=True)
        return [*problems, *(f"warning: {warning}" for warning in warnings)]

    return check
