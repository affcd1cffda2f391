"""The public faces, which import nothing until a name is used, and the paths of 0.2 kept for one release.

Each face (``hermes_core``, ``hermes_core.plugin``, ``hermes_core.backends``) lists its names once, in its stub
(``.pyi``): type checkers read the stub, and :func:`attach` reads it at import to know where each name lives
(Scientific Python's SPEC 1 pattern), so a command pays only for the modules it uses.

Names and modules of 0.2 that moved in 0.3 keep working for one release with a ``DeprecationWarning``.

Modules moved into subpackages (``hermes_core.registry`` is ``hermes_core.tools.registry``), or from one
subpackage to another (``hermes_core.calls.registry`` likewise): a finder first on ``sys.meta_path`` answers for
these names (and the modules of a moved package) with the module at its new place, the same object, and passes
every other name on after a dictionary lookup per dotted level. ``hermes_core.config``,
``hermes_core.index``, ``hermes_core.backends`` and ``hermes_core.authoring`` became packages of the same name
(the last keeps 0.2's ``@tool`` names through :func:`moved_names`).
"""

from __future__ import annotations

import sys
import warnings
from importlib import import_module

TYPE_CHECKING = False  # ``typing`` costs an import that ``import hermes_core`` need not pay
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from types import ModuleType
    from typing import Any


def read_stub(path: str) -> dict[str, str]:
    """Each name a face's stub re-exports (``from .module import (name as name, ...)`` at the start of a line),
    and the module, relative to the face, it comes from. (String methods, not ``re``: this runs at import.)"""
    with open(path, encoding="utf-8") as stub:
        text = "\n" + "\n".join(line.partition("#")[0] for line in stub)
    table: dict[str, str] = {}
    for statement in text.split("\nfrom ")[1:]:
        module, _, names = statement.partition(" import ")
        if module.startswith("."):
            names = names.lstrip()
            names = names[1:].partition(")")[0] if names.startswith("(") else names.partition("\n")[0]
            for item in names.split(","):
                if item.strip():
                    table[item.split(" as ")[-1].strip()] = module
    return table


def attach(face: str, stub: str, moved: Mapping[str, str] | None = None) -> tuple[
        Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for the face ``face`` whose names ``stub`` lists; ``moved``
    maps names the face no longer has to the module that has them now (see :func:`moved_names`)."""
    table = read_stub(stub)
    package = face if stub.endswith("__init__.pyi") else face.rpartition(".")[0]
    names = sorted(table)
    old_name = moved_names(face, moved or {})

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            return old_name(name)
        value = getattr(import_module(module, package), name)
        sys.modules[face].__dict__[name] = value
        return value

    def __dir__() -> list[str]:
        return names

    return __getattr__, __dir__, names


def moved_names(module: str, moved: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for the names ``module`` had in 0.2 and ``moved`` maps to where they are now: each
    still works, with a ``DeprecationWarning`` that names the new place."""
    def __getattr__(name: str) -> Any:
        if name not in moved:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} moved to {moved[name]}.{name}; the old name goes away in the next release",
                      DeprecationWarning, stacklevel=2)
        return getattr(import_module(moved[name]), name)

    return __getattr__


#: Old module (under ``hermes_core.``) -> its new place.
MOVED_MODULES = {
    "configdata": "config.data",
    "home": "config.home",
    "yamlmodel": "config.yamlmodel",
    "cachefile": "config.cachefile",
    "discovery": "plugins.discovery",
    "selection": "plugins.selection",
    "manifest": "plugins.manifest",
    "loader": "plugins.loader",
    "context": "plugins.context",
    "contributions": "plugins.contributions",
    "records": "plugins.records",
    "cache": "plugins.cache",
    "references": "tools.references",
    "websearch": "tools.websearch",
    "registry": "tools.registry",
    "toolsets": "tools.toolsets",
    "arguments": "calls.arguments",
    "dispatch": "calls.dispatch",
    "hooks": "calls.hooks",
    "deadline": "workers.executor",
    "budget": "calls.budget",
    "approval": "calls.approval",
    "policies": "tools.policies",
    "views": "host.views",
    "toolcalls": "tools.toolcalls",
    "formats": "tools.formats",
    "schema_patches": "host.schema_patches",
    "asyncbridge": "workers.asyncbridge",
    "exitguard": "workers.exitguard",
    "toolcontext": "calls.toolcontext",
    "sessions": "calls.sessions",
    "shellbackend": "backends.shell",
    "output": "backends.output",
    "indexbuild": "index.build",
    "installer": "index.installer",
    "wheelmeta": "index.wheelmeta",
    "compile": "authoring.compile",
    "scaffold": "authoring.scaffold",
    "testing": "authoring.testing",
    "compat": "plugins.compat",
    # 0.3: calls/ split into the pipeline (calls), the tool namespace (tools), worker threads (workers) and
    # the host API (host)
    "calls.asyncbridge": "workers.asyncbridge",
    "calls.executor": "workers.executor",
    "calls.exitguard": "workers.exitguard",
    "calls.streams": "workers.streams",
    "calls.registry": "tools.registry",
    "calls.toolnames": "tools.toolnames",
    "calls.references": "tools.references",
    "calls.toolsets": "tools.toolsets",
    "calls.policies": "tools.policies",
    "calls.websearch": "tools.websearch",
    "calls.formats": "tools.formats",
    "calls.toolcalls": "tools.toolcalls",
    "calls.views": "host.views",
    "calls.schema_patches": "host.schema_patches",
}

#: Names ``hermes_core`` had in 0.2 and now leaves to a narrower face (plugin authors, backend authors, errors).
MOVED_NAMES = {
    "PluginContext": "hermes_core.plugin",
    "ToolAnnotations": "hermes_core.plugin",
    "ToolContext": "hermes_core.plugin",
    "ToolError": "hermes_core.plugin",
    "ToolSpec": "hermes_core.plugin",
    "UNLIMITED": "hermes_core.plugin",
    "WebSearchProvider": "hermes_core.plugin",
    "hookimpl": "hermes_core.plugin",
    "hookspec": "hermes_core.plugin",
    "tool": "hermes_core.plugin",
    "tool_context": "hermes_core.plugin",
    "tool_entry": "hermes_core.plugin",
    "tool_error": "hermes_core.plugin",
    "tool_spec": "hermes_core.plugin",
    "BackendError": "hermes_core.backends",
    "BackendSetup": "hermes_core.backends",
    "BackendUnavailable": "hermes_core.backends",
    "CommandResult": "hermes_core.backends",
    "ExecutionBackend": "hermes_core.backends",
    "LocalBackend": "hermes_core.backends",
    "MissingDirectory": "hermes_core.backends",
    "OutputBuffer": "hermes_core.backends",
    "Process": "hermes_core.backends",
    "ShellBackend": "hermes_core.backends",
    "ShellProcess": "hermes_core.backends",
    "Staged": "hermes_core.backends",
    "ArgumentError": "hermes_core.errors",
    "ManifestError": "hermes_core.errors",
    "PolicyError": "hermes_core.errors",
    "ToolsetCycleError": "hermes_core.errors",
    "UnknownToolsetError": "hermes_core.errors",
    "AnthropicToolResult": "hermes_core.tools.toolcalls",
    "AnthropicToolUse": "hermes_core.tools.toolcalls",
    "ChatCompletionsToolCall": "hermes_core.tools.toolcalls",
    "ChatCompletionsToolMessage": "hermes_core.tools.toolcalls",
    "GeminiFunctionCall": "hermes_core.tools.toolcalls",
    "GeminiFunctionResponsePart": "hermes_core.tools.toolcalls",
    "PlainToolCall": "hermes_core.tools.toolcalls",
    "ResponsesFunctionCall": "hermes_core.tools.toolcalls",
    "ResponsesFunctionCallOutput": "hermes_core.tools.toolcalls",
    "PluginCandidate": "hermes_core.plugins.discovery",
}


class _Alias:
    """Finds and "loads" an old module name as the module that now holds its code (the same object)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if not fullname.startswith(_PREFIX) or _new_name(fullname) is None:
            return None
        from importlib.util import spec_from_loader

        return spec_from_loader(fullname, self)  # type: ignore[arg-type]  # a loader by protocol, not importlib.abc's

    def create_module(self, spec: Any) -> ModuleType:
        new = _new_name(spec.name)
        assert new is not None
        warnings.warn(f"{spec.name} moved to {new}; the old path goes away in the next release",
                      DeprecationWarning, stacklevel=outside_import_machinery())
        return import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was imported under its new name."""


_PREFIX = f"{__package__}."


def _new_name(fullname: str) -> str | None:
    """Where old module ``fullname`` (or a module of an old package) is now, or None if it did not move."""
    old = fullname[len(_PREFIX):]
    while old:
        new = MOVED_MODULES.get(old)
        if new is not None:
            return f"{_PREFIX}{new}{fullname[len(_PREFIX) + len(old):]}"
        old = old.rpartition(".")[0]
    return None


def outside_import_machinery() -> int:
    """The ``stacklevel`` that points a warning at the first frame outside the import machinery."""
    frame, level = sys._getframe(1), 1
    while frame is not None and (frame.f_code.co_filename.startswith("<frozen importlib")
                                 or frame.f_globals.get("__name__") == __name__):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


def install() -> None:
    """Answer the old module paths (once per process)."""
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
