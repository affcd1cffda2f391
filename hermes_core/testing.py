"""The pytest plugin for plugin authors (registered through the ``pytest11`` entry point).

Fixtures:

- ``hermes_home``: an isolated, empty ``HERMES_HOME`` for the test.
- ``hermes_runtime``: a fresh :class:`~hermes_core.Runtime` (own registry and plugin manager).
- ``load_hermes_plugin``: load a plugin from a folder path or an importable module name into that runtime.
- ``call_tool``: call a tool through ``handle_function_call`` (hooks included) and decode JSON results.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .approval import set_approval_callback
from .discovery import PluginRecord, locate_package, read_manifest
from .loader import load_plugin
from .runtime import Runtime

__all__ = ["call_tool", "hermes_home", "hermes_runtime", "load_hermes_plugin"]


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
    """``load_hermes_plugin(path_or_module, plugin_id=None)``: load one plugin, failing the test if it errs."""

    def load(target: str | Path, plugin_id: str | None = None) -> PluginRecord:
        if isinstance(target, Path) or Path(str(target)).is_dir():
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
    if importlib.util.find_spec(module.split(".")[0]) is None:
        raise ModuleNotFoundError(f"no module named {module!r}")
    package = locate_package(module)
    manifest = package / "plugin.yaml" if package and (package / "plugin.yaml").is_file() else None
    return PluginRecord(id=plugin_id or module.split(".")[0].replace("_", "-"), source="pip", module=module,
                        path=str(package) if package else None, manifest_path=str(manifest) if manifest else None)


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
