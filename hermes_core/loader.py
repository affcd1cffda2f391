"""Load selected plugins: declared tools behind lazy handlers, otherwise import and ``register(ctx)``."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import time
import types
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet

from ._version import __version__
from .context import PluginContext
from .discovery import PluginRecord, debug_enabled
from .hooks import KNOWN_HOOKS
from .manifest import PluginManifest, ToolDeclaration
from .references import LazyReference
from .registry import Requirements, ToolEntry
from .toolsets import Toolset

if TYPE_CHECKING:
    from .runtime import Runtime

__all__ = ["HERMES_AGENT_INTERNALS", "NAMESPACE", "load_plugin", "mount_directory_plugin"]

NAMESPACE = "hermes_plugins"
#: Top-level modules of Hermes Agent itself; plugins that import them rely on internals, not the contract.
HERMES_AGENT_INTERNALS = frozenset({"tools", "hermes_cli", "agent", "gateway", "run_agent", "model_tools",
                                    "toolsets", "hermes_state", "cron", "hermes_constants", "acp_adapter"})


class _DirectoryPluginFinder(importlib.abc.MetaPathFinder):
    """Maps ``hermes_plugins.<slug>`` to a plugin folder, so its relative imports work."""

    def __init__(self) -> None:
        self.folders: dict[str, Path] = {}

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        folder = self.folders.get(fullname)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(fullname, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])


_finder = _DirectoryPluginFinder()


def mount_directory_plugin(record: PluginRecord) -> None:
    """Make ``record.module`` importable from its folder, dropping a stale module of the same name."""
    if NAMESPACE not in sys.modules:
        namespace = types.ModuleType(NAMESPACE, "Runtime namespace of directory plugins (owned by the loader).")
        namespace.__path__ = []
        sys.modules[NAMESPACE] = namespace
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    folder = Path(record.path or "")
    if _finder.folders.get(record.module) != folder:
        for name in [n for n in sys.modules if n == record.module or n.startswith(record.module + ".")]:
            del sys.modules[name]
    _finder.folders[record.module] = folder


def load_plugin(runtime: Runtime, record: PluginRecord) -> None:
    """Bring one selected plugin into ``runtime``; failures are recorded on ``record``, never raised."""
    manifest = record.manifest
    if manifest is not None and manifest.requires_hermes and \
            not SpecifierSet(manifest.requires_hermes).contains(__version__, prereleases=True):
        record.fail(f"requires hermes-tools {manifest.requires_hermes}, but this is {__version__}")
        return
    if record.source != "pip":
        mount_directory_plugin(record)
    context = PluginContext(runtime, record.id, manifest)
    try:
        if manifest is not None and manifest.tools is not None:
            _register_declared(runtime, context, record, manifest)
        if manifest is None or not manifest.declarative:
            _import_and_register(runtime, context, record)
        else:
            record.state = "declared"
    except _LoadError as exc:
        context.rollback()
        record.fail(str(exc))
    finally:
        if debug_enabled():
            print(f"[hermes plugins] {record.id} ({record.source}): {record.state} {record.reason}".rstrip(),
                  file=sys.stderr)
    if record.active:
        registry = runtime.registry
        record.tools = [name for name in dict.fromkeys(context.registered_tools)
                        if (entry := registry.get(name)) is not None and entry.plugin == record.id]
        record.hooks = runtime.hooks.hooks_of(record.id)
        record.warnings += [f"hook {hook!r} is not a Hermes hook; kept, but nothing calls it unless the agent "
                            "loop does" for hook in record.hooks if hook not in KNOWN_HOOKS]


class _LoadError(Exception):
    pass


def _register_declared(runtime: Runtime, context: PluginContext, record: PluginRecord,
                       manifest: PluginManifest) -> None:
    for tool in manifest.tools or ():
        context.add_entry(declared_entry(tool, record))
    for toolset in manifest.toolsets:
        runtime.toolsets.define(Toolset(toolset.name, toolset.description, tuple(toolset.tools),
                                        tuple(toolset.includes), source=f"plugin:{record.id}"))
    context.on_rollback(lambda: runtime.toolsets.remove_source(f"plugin:{record.id}"))


def declared_entry(tool: ToolDeclaration, record: PluginRecord) -> ToolEntry:
    """A registry entry for a manifest-declared tool; its handler is imported on the first call."""
    package = record.module
    check = tool.check
    return ToolEntry(
        name=tool.name, toolset=tool.toolset,
        schema={"name": tool.name, "description": tool.description, "parameters": tool.parameters},
        handler=LazyReference(tool.handler, package, record.id),
        check_fn=LazyReference(tool.check_fn, package, record.id) if tool.check_fn else None,
        requirements=Requirements(tuple(check.env), tuple(check.bins), tuple(check.modules)) if check
        else Requirements(),
        requires_env=[env.name for env in (record.manifest.requires_env if record.manifest else [])],
        is_async=tool.is_async, description=tool.description, emoji=tool.emoji,
        max_result_size_chars=tool.max_result_size_chars, plugin=record.id, parallel_safe=tool.parallel_safe,
        path_args=tuple(tool.path_args),
    )


def _import_and_register(runtime: Runtime, context: PluginContext, record: PluginRecord) -> None:
    started = time.perf_counter()
    try:
        module = importlib.import_module(record.module)
    except ModuleNotFoundError as exc:
        raise _LoadError(_missing_module_message(record, exc)) from None
    except BaseException as exc:  # a plugin's import may raise anything, SystemExit included
        if isinstance(exc, KeyboardInterrupt):
            raise
        where = f" ({exc.filename}:{exc.lineno})" if isinstance(exc, SyntaxError) else ""
        raise _LoadError(f"import of {record.module!r} failed: {type(exc).__name__}: {exc}{where}") from None
    finally:
        record.import_ms = (time.perf_counter() - started) * 1000
    record.imported = True
    register = getattr(module, record.attr or "register", None)
    if not callable(register):
        raise _LoadError(f"module {record.module!r} has no callable `{record.attr or 'register'}`; a plugin "
                         "module defines register(ctx)")
    handle = runtime.hooks.add_module(record.id, module)
    if handle is not None:
        context.on_rollback(lambda: runtime.hooks.remove(handle))
    started = time.perf_counter()
    try:
        register(context)
    except ModuleNotFoundError as exc:
        raise _LoadError(_missing_module_message(record, exc)) from None
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise _LoadError(f"register() raised {type(exc).__name__}: {exc}") from None
    finally:
        record.register_ms = (time.perf_counter() - started) * 1000
    record.state = "loaded"


def _missing_module_message(record: PluginRecord, exc: ModuleNotFoundError) -> str:
    missing = exc.name or ""
    if missing.split(".")[0] in HERMES_AGENT_INTERNALS:
        return (f"imports {missing!r}, a Hermes Agent internal module that is not part of the plugin contract; "
                "the plugin must use only what register(ctx) is given")
    return f"import of {record.module!r} failed: module {missing!r} is not installed"

