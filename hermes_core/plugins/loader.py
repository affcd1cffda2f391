"""Load a selected plugin: declared tools behind lazy handlers, otherwise import it and call ``register(ctx)``.

The loader sees a candidate, the contributions it writes into (through the plugin's context) and
nothing else of the runtime; what happened is returned as a :class:`LoadResult`, never raised.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import sys
import time
import types
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from .._version import __version__
from ..calls.hooks import KNOWN_HOOKS
from ..errors import HermesError
from ..tools.references import LazyReference, ReferenceImportError
from ..tools.registry import UNLIMITED, DeclaredEntry, Requirements, ToolEntry, Undo, tool_entry
from ..tools.toolsets import Toolset
from ..workers.executor import DeadlineExceeded, call_with_deadline
from ..workers.exitguard import refusing_exit
from ..workers.interop import INTEROP
from ..workers.streams import kept_streams
from .discovery import PluginCandidate, core_satisfies
from .loadoutput import capturing

if TYPE_CHECKING:
    import importlib.machinery

    from .context import PluginContext
    from .contributions import Contributions

__all__ = ["NAMESPACE", "LoadResult", "declared_entry", "declares_only", "importable_package", "load_declared",
           "load_plugin", "mount_directory_plugin", "reference_problems"]

#: The ``@tool`` module: looked up in ``sys.modules``, never imported here (it costs pydantic).
_TOOL_MODULE = f"{__package__}.tool"

NAMESPACE = "hermes_plugins"


class LoadResult(NamedTuple):
    """What loading one plugin did."""

    #: ``loaded`` (register ran), ``declared`` (manifest only, not imported) or ``error``.
    state: Literal["loaded", "declared", "error"]
    reason: str = ""
    #: The package its code imports as (directory plugins: ``hermes_plugins.<slug>``).
    module: str = ""
    tools: tuple[str, ...] = ()
    hooks: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    imported: bool = False
    import_ms: float | None = None
    register_ms: float | None = None


class _DirectoryPluginFinder:
    """Maps ``hermes_plugins.<slug>`` to a plugin folder, so its relative imports work (a meta path finder;
    not derived from ``importlib.abc``, whose import costs every command a few milliseconds)."""

    def __init__(self) -> None:
        #: module name -> (folder, the owner that mounted it: a runtime's contributions)
        self.mounts: dict[str, tuple[str, weakref.ref[object]]] = {}

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        mount = self.mounts.get(fullname)
        if mount is None:
            return None
        folder = Path(mount[0])
        if not (folder / "__init__.py").is_file():  # a declarative plugin (plugin.yaml and modules): a namespace
            spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            spec.submodule_search_locations = [str(folder)]
            return spec
        return importlib.util.spec_from_file_location(fullname, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])


_finder = _DirectoryPluginFinder()


def mount_directory_plugin(candidate: PluginCandidate, owner: object) -> str:
    """Make a directory plugin importable from its folder; returns the package name it imports as.

    That is ``hermes_plugins.<slug>``, unless another live runtime mounted a different folder under that
    name: then the folder gets a name of its own, so neither runtime runs the other's code.
    """
    if NAMESPACE not in sys.modules:
        namespace = types.ModuleType(NAMESPACE, "Runtime namespace of directory plugins (owned by the loader).")
        namespace.__path__ = []
        sys.modules[NAMESPACE] = namespace
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    folder = candidate.path or ""
    name = candidate.module
    mounted = _finder.mounts.get(name)
    if mounted is not None and mounted[0] != folder:
        other = mounted[1]()
        if other is not None and other is not owner:
            import hashlib  # off the start-up path: only a clash of two runtimes' folders needs it

            name = f"{name}_{hashlib.sha256(folder.encode()).hexdigest()[:10]}"
            mounted = _finder.mounts.get(name)
    # modules of another folder once mounted under this name are dropped (only the finder imports this namespace,
    # so nothing of a name never mounted can be there: the usual first mount scans nothing)
    if (mounted is not None and mounted[0] != folder) or (mounted is None and name in sys.modules):
        for stale in [n for n in sys.modules if n == name or n.startswith(name + ".")]:
            del sys.modules[stale]
    _finder.mounts[name] = (folder, weakref.ref(owner))
    return name


class _LoadError(Exception):
    pass


def load_plugin(candidate: PluginCandidate, contributions: Contributions, context: PluginContext,
                timeout: float | None = None) -> LoadResult:
    """Bring one selected plugin into ``contributions`` through ``context``; failures are returned, not raised.

    ``timeout`` bounds the plugin's import and ``register()`` (``None`` or 0: no bound).
    """
    refused = _refusal(candidate)
    if refused is not None:
        return refused
    # the outline (plain data, each tool only named): loading a declared plugin builds no pydantic model and reads
    # no tool's schema
    manifest = candidate.outline
    module = candidate.module if candidate.source == "pip" else mount_directory_plugin(candidate, contributions)
    interop = INTEROP.layer  # a compatibility layer the runtime installed, if any (its shims act for this context)
    interop.adopt(_code_prefix(candidate, module), context)
    timings: dict[str, float] = {}
    said: list[str] = []  # what its import and register() logged, warned or wrote to stderr
    try:
        if manifest is not None and manifest["tools"] is not None:
            _register_declared(contributions, context, candidate, manifest, module)
        if manifest is not None:
            _register_backends(context, candidate, manifest, module)
            if manifest.get("skills"):  # off the start-up path unless a manifest lists skills
                from .declared_skills import register_declared_skills

                register_declared_skills(context, candidate)
        # not all declared (PluginManifest.declarative), or the package has a register() to run
        if manifest is None or manifest["tools"] is None or manifest["provides_hooks"] or candidate.defines_register:
            with interop.loading(context), capturing() as output:
                try:
                    registered = _import_and_register(contributions, context, candidate, module, timings, timeout)
                finally:
                    said = output.items()
            state: Literal["loaded", "declared"] = "loaded" if registered else "declared"
        else:
            state = "declared"
    except _LoadError as exc:
        context.rollback()
        return LoadResult("error", str(exc), module, warnings=tuple(said), imported="import_ms" in timings,
                          import_ms=timings.get("import_ms"), register_ms=timings.get("register_ms"))
    registry = contributions.registry
    tools = tuple(name for name in dict.fromkeys(context.registered_tools)
                  if (entry := registry.get(name)) is not None and entry.plugin == candidate.id)
    hooks = tuple(contributions.hooks.hooks_of(candidate.id))
    warnings = tuple([*(f"hook {hook!r} is not a Hermes hook; kept, but nothing calls it unless the agent loop does"
                        for hook in hooks if hook not in KNOWN_HOOKS), *context.warnings, *said])
    return LoadResult(state, "", module, tools, hooks, warnings, imported="import_ms" in timings,
                      import_ms=timings.get("import_ms"), register_ms=timings.get("register_ms"))


def _refusal(candidate: PluginCandidate) -> LoadResult | None:
    """Why the candidate is not loaded at all (an invalid manifest, a ``requires_hermes`` this core does not meet),
    as its result; None when it may be."""
    if candidate.error:
        return LoadResult("error", candidate.error, candidate.module)
    manifest = candidate.outline
    # a foreign (Hermes Agent) manifest's requires_hermes names a Hermes Agent version: shown, not checked
    required = manifest.get("requires_hermes") if manifest is not None and not candidate.foreign_manifest else None
    if required and not (candidate.requires_hermes_met if candidate.requires_hermes_met is not None
                         else core_satisfies(required)):
        return LoadResult("error", f"requires hermes-tools {required}, but this is {__version__}", candidate.module)
    return None


def declares_only(candidate: PluginCandidate) -> bool:
    """Loading the candidate registers its declared tools and nothing else: no code runs at load and nothing else
    is contributed (no hooks, ``register()``, backends, skills, toolsets or undeclared tools)."""
    outline = candidate.outline
    return outline is not None and outline.get("tools") is not None and not outline.get("provides_hooks") \
        and not candidate.defines_register and not outline.get("backends") and not outline.get("skills") \
        and not outline.get("toolsets") and not outline.get("provides_tools") and not candidate.error


def load_declared(candidate: PluginCandidate, contributions: Contributions,
                  first_use: Callable[[PluginCandidate, str], None]) -> tuple[LoadResult, Undo | None]:
    """Load a :func:`declares_only` candidate: its tools registered from its outline, with no plugin context;
    ``first_use(candidate, code_prefix)`` runs once, before the first of its tools is built (its handler or checks
    read: its code may run from then on). Returns the result and what undoes the registrations."""
    refused = _refusal(candidate)
    if refused is not None:
        return refused, None
    module = candidate.module if candidate.source == "pip" else mount_directory_plugin(candidate, contributions)
    registry = contributions.registry
    added, undo = registry.register_many(_declared_entries(candidate, module, first_use))
    warnings = tuple(filter(None, (registry.look_alike_warning(entry.name) for entry in added)))
    tools = tuple(dict.fromkeys(entry.name for entry in added))
    return LoadResult("declared", "", module, tools, warnings=warnings), undo


def _declared_entries(candidate: PluginCandidate, module: str,
                      first_use: Callable[[PluginCandidate, str], None] | None = None) -> list[ToolEntry]:
    declarations = _Declarations(candidate, module, first_use)
    return [DeclaredEntry(name, toolset, candidate.id, declarations, index, checked, description, annotations)
            for index, (name, toolset, checked, description, annotations)
            in enumerate((candidate.outline or {}).get("tools") or ())]


def _register_declared(contributions: Contributions, context: PluginContext, candidate: PluginCandidate,
                       manifest: dict[str, Any], module: str) -> None:
    context.add_entries(_declared_entries(candidate, module))
    source = f"plugin:{candidate.id}"
    for toolset in manifest["toolsets"]:
        contributions.toolsets.define(Toolset(toolset["name"], toolset["description"], tuple(toolset["tools"]),
                                              tuple(toolset["includes"]), source=source))
    context.on_rollback(lambda: contributions.toolsets.remove_source(source))


def _register_backends(context: PluginContext, candidate: PluginCandidate, manifest: dict[str, Any],
                       module: str) -> None:
    """The manifest's execution backends (the plain manifest's ``backends``), behind lazy factories (imported
    when a task first uses one)."""
    for backend in manifest["backends"]:
        try:
            context.register_execution_backend(
                backend["name"], LazyReference(backend["factory"], module, candidate.id),
                description=backend["description"],
                check_fn=LazyReference(backend["check_fn"], module, candidate.id) if backend["check_fn"] else None)
        except ValueError as exc:
            raise _LoadError(str(exc)) from None


def declared_entry(tool: dict[str, Any], candidate: PluginCandidate, package: str) -> ToolEntry:
    """A registry entry for a manifest-declared tool (an item of the plain manifest's ``tools``); its handler
    is imported (from ``package``) on first call."""
    check = tool["check"]
    limit = tool["max_result_size_chars"]  # the plain manifest holds the result limit
    origin = candidate.path if candidate.source == "pip" else None
    return tool_entry(
        tool["name"], tool["toolset"], LazyReference(tool["handler"], package, candidate.id, origin, adapt=_handler),
        description=tool["description"], parameters=tool["parameters"],
        check_fn=LazyReference(tool["check_fn"], package, candidate.id, origin) if tool["check_fn"] else None,
        changes_files=LazyReference(tool["changes_files"], package, candidate.id, origin)
        if tool.get("changes_files") else None,
        requirements=Requirements(tuple(check["env"]), tuple(check["bins"]), tuple(check["modules"]))
        if check else None,
        is_async=tool["is_async"], emoji=tool["emoji"],
        max_result_size_chars=UNLIMITED if limit == "unlimited" else limit,
        plugin=candidate.id, parallel_safe=tool["parallel_safe"], path_args=tool["path_args"],
        call_timeout=tool["call_timeout"], annotations=tool["annotations"],
    )


class _Declarations:
    """The tools one candidate's manifest declares, read when first needed (see ``DeclaredEntry``)."""

    __slots__ = ("candidate", "first_use", "package")

    def __init__(self, candidate: PluginCandidate, package: str,
                 first_use: Callable[[PluginCandidate, str], None] | None) -> None:
        self.candidate, self.package, self.first_use = candidate, package, first_use

    def declaration(self, index: int, name: str) -> dict[str, Any] | None:
        """The plain declaration of the ``index``-th tool, or None when it is not ``name``'s (the discovery cache
        changed under the reader)."""
        tools = (self.candidate.manifest_data or {}).get("tools") or ()
        tool = tools[index] if index < len(tools) else None
        return tool if isinstance(tool, dict) and tool.get("name") == name else None

    def entry(self, index: int, name: str, toolset: str) -> ToolEntry:
        """The whole entry of the ``index``-th tool; one whose declaration is gone or cannot be read is unavailable
        and says why."""
        first_use, self.first_use = self.first_use, None  # (entries are built one at a time: DeclaredEntry)
        if first_use is not None:
            first_use(self.candidate, _code_prefix(self.candidate, self.package))
        tool = self.declaration(index, name)
        problem = "its declaration changed while Hermes read the discovery cache; run the command again"
        if tool is not None:
            try:
                return declared_entry(tool, self.candidate, self.package)
            except (KeyError, TypeError, ValueError) as exc:  # a cache Hermes did not write
                problem = f"its declaration cannot be read: {type(exc).__name__}: {exc}"
        return tool_entry(name, toolset, functools.partial(_undeclared, problem), plugin=self.candidate.id,
                          check_fn=functools.partial(_undeclared, problem))


def _undeclared(problem: str, *args: Any, **kwargs: Any) -> Any:
    raise RuntimeError(problem)


def _handler(target: Any) -> Any:
    """What a declared ``handler`` calls: a ``@tool`` function's adapter (``tool.tool_handler``), anything
    else as it is — without importing ``authoring`` when nothing has (then nothing was decorated)."""
    authoring = sys.modules.get(_TOOL_MODULE)
    return authoring.tool_handler(target) if authoring is not None else target


def _code_prefix(candidate: PluginCandidate, module: str) -> str:
    """The module name under which all of a plugin's code lives: a pip plugin's top-level package, or the
    name a directory plugin is mounted as."""
    return module.split(".")[0] if candidate.source == "pip" else module


def _code_root(candidate: PluginCandidate) -> str | None:
    """The folder file names in a plugin's messages are relative to (its package's parent folder)."""
    return str(Path(candidate.path).parent) if candidate.path else None


def _import_and_register(contributions: Contributions, context: PluginContext, candidate: PluginCandidate,
                         module_name: str, timings: dict[str, float], timeout: float | None) -> bool:
    """Import the plugin and call its ``register(ctx)`` on a worker thread, within ``timeout`` seconds; False
    when a manifest plugin's package defines no ``register`` (it is declarative: skills and what it declares).

    Whatever the plugin raises there — ``KeyboardInterrupt`` and ``SystemExit`` included, and an
    ``os._exit`` call, which is turned into an exception on that thread — is a load error; only a real
    Ctrl-C of the user, which reaches the waiting thread, aborts. A plugin that does not finish in time is
    left running, abandoned: its context is closed, so nothing it registers later takes effect.
    """
    failure: list[str] = []
    registered: list[bool] = []

    def body() -> None:
        try:
            with refusing_exit():
                registered.append(_run_plugin_code(contributions, context, candidate, module_name, timings))
        except _LoadError as exc:
            failure.append(str(exc))

    with kept_streams() as replaced:  # a plugin that swaps sys.stdout must not silence the command
        try:
            call_with_deadline(body, timeout or None)
        except DeadlineExceeded:
            context.close()
            raise _LoadError(f"import and register() did not finish within {timeout:g} s (plugins.load_timeout); "
                             "the plugin is skipped") from None
    if replaced:
        context.warnings.append(f"replaced {', '.join(replaced)} while loading; Hermes put it back")
    if failure:
        raise _LoadError(failure[0])
    return all(registered)


def _run_plugin_code(contributions: Contributions, context: PluginContext, candidate: PluginCandidate,
                     module_name: str, timings: dict[str, float]) -> bool:
    prefix, root = _code_prefix(candidate, module_name), _code_root(candidate)
    started = time.perf_counter()
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise _LoadError(INTEROP.layer.import_problem(exc, prefix, root) or _import_message(module_name, exc)) \
            from None
    except BaseException as exc:  # a plugin's import may raise anything, SystemExit included
        where = f" ({exc.filename}:{exc.lineno})" if isinstance(exc, SyntaxError) else ""
        raise _LoadError(f"import of {module_name!r} failed: {type(exc).__name__}: {exc}{where}") from None
    finally:
        timings["import_ms"] = (time.perf_counter() - started) * 1000
    misplaced = misplaced_module(module, candidate)
    if misplaced:
        raise _LoadError(misplaced)
    register = getattr(module, candidate.attr or "register", None)
    if register is None and candidate.attr is None and candidate.manifest_data is not None:
        return False  # a manifest plugin with no register(): declarative (e.g. a package shipping only skills)
    if not callable(register):
        raise _LoadError(f"module {module_name!r} has no callable `{candidate.attr or 'register'}`; a plugin "
                         "module defines register(ctx)")
    try:
        undo = contributions.hooks.add_module(candidate.id, module)
    except HermesError as exc:
        raise _LoadError(str(exc)) from None
    if undo is not None:
        context.on_rollback(undo)
    started = time.perf_counter()
    try:
        register(context)
    except ImportError as exc:
        problem = INTEROP.layer.import_problem(exc, prefix, root)
        if problem is None and not isinstance(exc, ModuleNotFoundError):
            problem = f"register() raised ImportError: {exc}"
        raise _LoadError(problem or _import_message(module_name, exc)) from None
    except BaseException as exc:  # on this thread, even KeyboardInterrupt is the plugin's own doing
        cause = exc.__cause__ or exc.__context__  # a plugin that turns a missing internal into its own error
        internal = INTEROP.layer.import_problem(cause, prefix, root) if isinstance(cause, ImportError) else None
        raise _LoadError(f"register() raised {type(exc).__name__}: {exc}"
                         + (f", because it {internal}" if internal else "")) from None
    finally:
        timings["register_ms"] = (time.perf_counter() - started) * 1000
    INTEROP.layer.registered(context)  # Hermes Agent internals the plugin patched act in its runtime, as there
    return True


def misplaced_module(module: types.ModuleType, candidate: PluginCandidate) -> str | None:
    """Why ``module`` is not the plugin's own code: a pip plugin's package must come from its distribution's
    folder, not from a folder of the same name that stands earlier on ``sys.path`` (the working directory)."""
    if candidate.source != "pip" or not candidate.path:
        return None
    origin = getattr(module, "__file__", None)
    expected = Path(candidate.path).resolve()
    if origin and not Path(origin).resolve().is_relative_to(expected):
        return (f"module {candidate.module!r} was imported from {Path(origin).parent}, not from the folder its "
                f"distribution installed ({expected}): a folder of that name earlier on sys.path shadows the "
                "plugin, and its code is not run")
    return None


def importable_package(candidate: PluginCandidate) -> str:
    """Make the candidate's package importable outside a runtime (``validate --imports``, ``compile``) and
    return its name: a pip plugin's package from its folder's parent (a project that is not installed imports
    from its project), a directory plugin as ``hermes_plugins.<slug>``."""
    if candidate.source != "pip":
        return mount_directory_plugin(candidate, candidate)
    root = str(Path(candidate.path or ".").parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    return candidate.module


def reference_problems(candidate: PluginCandidate) -> list[str]:
    """Import every ``handler`` and ``check_fn`` the manifest declares (this runs plugin code) and say which
    do not resolve to a callable."""
    package = importable_package(candidate)
    problems = []
    for tool in (candidate.manifest.tools if candidate.manifest else None) or []:
        for reference in filter(None, (tool.handler, tool.check_fn)):
            try:
                target = LazyReference(reference, package, candidate.id).resolve()
            except ReferenceImportError as exc:
                problems.append(f"tool {tool.name}: {exc}")
                continue
            if not callable(target):
                problems.append(f"tool {tool.name}: {reference!r} is not callable")
    return problems


def _import_message(module: str, exc: ImportError) -> str:
    if isinstance(exc, ModuleNotFoundError):
        return f"import of {module!r} failed: module {exc.name or ''!r} is not installed"
    return f"import of {module!r} failed: ImportError: {exc}"
