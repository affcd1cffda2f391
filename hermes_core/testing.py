"""The pytest plugin for plugin authors (registered through the ``pytest11`` entry point).

Fixtures:

- ``hermes_home``: an isolated, empty ``HERMES_HOME`` for the test.
- ``hermes_runtime``: a fresh :class:`~hermes_core.Runtime` (own registry and plugin manager).
- ``load_hermes_plugin``: load a plugin from a folder path or an importable module name into that runtime
  (an installed module keeps the id of its ``hermes_agent.plugins`` entry point; otherwise the manifest's name).
- ``call_tool``: call a tool through ``handle_function_call`` (hooks included) and decode JSON results.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from .approval import set_approval_callback
from .discovery import ENTRY_POINT_GROUP, PluginRecord, locate_package, read_manifest, record_from_entry_point
from .loader import load_plugin
from .manifest import ManifestError, load_manifest
from .runtime import Runtime

__all__ = ["call_tool", "hermes_home", "hermes_runtime", "load_hermes_plugin"]

MODULE_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


@pytest.fixture
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ``HERMES_HOME`` of this test; plugin-selection variables are cleared."""
    home = tmp_path / "hermes-home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HERMES_HOME", str(home))
    for name in ("HERMES_ENABLE_PROJECT_PLUGINS", "HERMES_LOAD_PLUGINS", "HERMES_SAFE_MODE"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def hermes_runtime(hermes_home: Path) -> Iterator[Runtime]:
    """A runtime of its own: no tools, hooks or approvals leak in from other tests."""
    runtime = Runtime(home=hermes_home)
    previous = set_approval_callback(None)
    yield runtime
    set_approval_callback(previous)
    runtime.close()


@pytest.fixture
def load_hermes_plugin(hermes_runtime: Runtime) -> Callable[..., PluginRecord]:
    """``load_hermes_plugin(path_or_module, plugin_id=None)``: load one plugin, failing the test if it errs.

    A ``Path`` (or a string that is not a dotted module name) is a plugin folder; a module name is a package.
    """

    def load(target: str | Path, plugin_id: str | None = None) -> PluginRecord:
        # a dotted name is a module even when a folder of that name is in the working directory
        if isinstance(target, Path) or not MODULE_NAME.fullmatch(str(target)):
            record = hermes_runtime.load_plugin_from_path(Path(target), plugin_id)
        else:
            record = _module_record(str(target), plugin_id)
            read_manifest(record)
            if record.state == "pending":
                load_plugin(hermes_runtime, record)
            hermes_runtime.plugins.append(record)
        if record.state == "error":
            pytest.fail(f"plugin {record.id!r} failed to load: {record.reason}")
        return record

    return load


def _module_record(module: str, plugin_id: str | None) -> PluginRecord:
    """The record Hermes would make for ``module``: from its entry point when it is installed with one."""
    if importlib.util.find_spec(module.split(".")[0]) is None:
        raise ModuleNotFoundError(f"no module named {module!r}")
    entry_point = next((ep for ep in entry_points(group=ENTRY_POINT_GROUP)
                        if ep.value.partition(":")[0].strip() == module), None)
    if entry_point is not None:
        record = record_from_entry_point(entry_point, ENTRY_POINT_GROUP)
    else:
        package = locate_package(module)
        manifest = package / "plugin.yaml" if package and (package / "plugin.yaml").is_file() else None
        record = PluginRecord(id=_manifest_name(manifest) or module.split(".")[0].replace("_", "-"), source="pip",
                              module=module, path=str(package) if package else None,
                              manifest_path=str(manifest) if manifest else None)
    if plugin_id:
        record.id = plugin_id
    return record


def _manifest_name(manifest: Path | None) -> str | None:
    try:
        return load_manifest(manifest).name if manifest else None
    except ManifestError:
        return None  # read_manifest records the problem on the record


@pytest.fixture
def call_tool(hermes_runtime: Runtime) -> Callable[..., Any]:
    """``call_tool(name, **args)``: the result through ``handle_function_call``, JSON decoded when it is JSON."""

    def call(name: str, /, **args: Any) -> Any:
        result = hermes_runtime.handle_function_call(name, args)
        try:
            return json.loads(result)
        except ValueError:
            return result

    return call
