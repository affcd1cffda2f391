"""Compatibility shims: the Hermes Agent internals published plugins import most, served to plugin code only.

Some plugins import Hermes Agent's own modules (``from agent.web_search_provider import WebSearchProvider``,
``from tools.registry import registry``). When Hermes Agent itself is not installed, the loader's import
hook answers those imports with shims that talk to the runtime loading or calling the plugin: it sits
at the end of ``sys.meta_path`` (so a real module always wins) and answers only imports made by plugin
code (a module under a loaded plugin's package). Everything else a plugin imports from Hermes Agent
fails as usual; :func:`import_problem` turns that failure into a reason naming the import, file and line.

The core learns of this layer only through the slot it owns (``hermes_core.workers.interop``): :func:`install`,
which the runtime calls before it loads plugins, puts the shim finder on ``sys.meta_path`` and fills the slot.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import importlib.machinery
import sys
import threading
import types
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ...calls.toolcontext import current_tool_context
from ...config.untrusted import TEXT_LIMIT, read_untrusted_bytes
from ...workers.interop import INTEROP

if TYPE_CHECKING:
    import importlib.abc

    from ..context import PluginContext

__all__ = ["HERMES_AGENT_INTERNALS", "SHIMS", "HermesAgentInterop", "adopt_patches", "claim", "explain", "host",
           "host_runtime", "import_problem", "install", "loading", "note", "noting"]

#: Top-level modules of Hermes Agent itself; plugins that import them rely on internals, not the contract.
HERMES_AGENT_INTERNALS = frozenset({"tools", "hermes_cli", "agent", "gateway", "run_agent", "model_tools",
                                    "toolsets", "hermes_state", "cron", "hermes_constants", "acp_adapter"})
#: Shimmed module -> the Hermes module whose ``__all__`` it serves (``None``: an empty package).
SHIMS: dict[str, str | None] = {
    "agent": None,
    "agent.web_search_provider": "hermes_core.plugins.compat.agent_web_search_provider",
    "agent.memory_provider": "hermes_core.plugins.compat.agent_memory_provider",
    "tools": None,
    "tools.registry": "hermes_core.plugins.compat.tools_registry",
    "tools.interrupt": "hermes_core.plugins.compat.tools_interrupt",
    "tools.delegate_tool": "hermes_core.plugins.compat.tools_delegate_tool",
    "hermes_cli": None,
    "hermes_cli.config": "hermes_core.plugins.compat.hermes_cli_config",
    "hermes_cli.model_switch": "hermes_core.plugins.compat.hermes_cli_model_switch",
    "hermes_constants": "hermes_core.plugins.compat.hermes_constants",
    "tools.approval": "hermes_core.plugins.compat.tools_approval",
    "tools.approval_context": "hermes_core.plugins.compat.tools_approval_context",
    "model_tools": "hermes_core.plugins.compat.model_tools",
    "hermes_cli.plugins": "hermes_core.plugins.compat.hermes_cli_plugins",
    "agent.skill_utils": "hermes_core.plugins.compat.agent_skill_utils",
    "agent.runtime_cwd": "hermes_core.plugins.compat.agent_runtime_cwd",
    "agent.auxiliary_client": "hermes_core.plugins.compat.agent_auxiliary_client",
    "hermes_state": "hermes_core.plugins.compat.hermes_state",
    "gateway": None,
    "gateway.config": "hermes_core.plugins.compat.gateway_config",
    "gateway.platforms": None,
    "gateway.platforms.base": "hermes_core.plugins.compat.gateway_platforms_base",
    "gateway.platforms.webhook": "hermes_core.plugins.compat.gateway_platforms_webhook",
}
_TOPS = frozenset(name.split(".")[0] for name in SHIMS)

#: The plugin context whose plugin is being imported or registered right now.
LOADING: contextvars.ContextVar[PluginContext | None] = contextvars.ContextVar("hermes_plugin_loading",
                                                                               default=None)
_claims: dict[str, list[weakref.ref[PluginContext]]] = {}
_claims_lock = threading.Lock()


def claim(prefix: str, context: PluginContext) -> None:
    """Code in module ``prefix`` (and its submodules) belongs to the plugin of ``context``."""
    with _claims_lock:
        refs = [ref for ref in _claims.get(prefix, []) if ref() is not None and ref() is not context]
        _claims[prefix] = [*refs, weakref.ref(context)]


@contextlib.contextmanager
def loading(context: PluginContext) -> Iterator[None]:
    """While the block runs, shims answer for the plugin of ``context`` (its import and ``register``)."""
    token = LOADING.set(context)
    try:
        yield
    finally:
        LOADING.reset(token)


def host() -> PluginContext:
    """The plugin context a shim acts for: the plugin being loaded, else the one whose tool is running, else
    the one whose code called the shim. Raises ``RuntimeError`` when none applies."""
    context = LOADING.get()
    if context is not None:
        return context
    tool = current_tool_context()
    if tool is not None and tool.plugin_id is not None:
        for candidate in reversed(_live()):
            if candidate.plugin_id == tool.plugin_id and candidate.home is tool.home:
                return candidate
    context = _caller_context()
    if context is None:
        raise RuntimeError("a Hermes Agent compatibility shim was used outside a plugin that Hermes loaded")
    return context


def host_runtime() -> Any:
    """The runtime a shim acts for (see :func:`host`); typed ``Any``, since the runtime imports the loader, which
    imports these shims."""
    runtime = host()._runtime()
    if runtime is None:
        raise RuntimeError("a Hermes Agent compatibility shim was used by a plugin whose runtime is gone")
    return runtime


#: Notes the shims leave while a tool's check runs: what the plugin looked for that Hermes does not have.
NOTES: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("hermes_compat_notes", default=None)


@contextlib.contextmanager
def noting() -> Iterator[list[str]]:
    """Collect the :func:`note` calls of the block (and of the threads it hands its context to)."""
    notes: list[str] = []
    token = NOTES.set(notes)
    try:
        yield notes
    finally:
        NOTES.reset(token)


def note(text: str) -> None:
    notes = NOTES.get()
    if notes is not None and text not in notes:
        notes.append(text)


def _live() -> list[PluginContext]:
    with _claims_lock:
        return [context for refs in _claims.values() for ref in refs if (context := ref()) is not None]


def _owner(module_name: str) -> PluginContext | None:
    """The latest live context that claimed ``module_name``'s package."""
    with _claims_lock:
        for prefix, refs in _claims.items():
            if module_name == prefix or module_name.startswith(prefix + "."):
                for ref in reversed(refs):
                    if (context := ref()) is not None:
                        return context
    return None


def _claimed_prefix(module_name: str) -> str | None:
    """The claimed package ``module_name`` belongs to, if any."""
    with _claims_lock:
        return next((prefix for prefix in _claims
                     if module_name == prefix or module_name.startswith(prefix + ".")), None)


_SKIPPED = ("importlib", "_frozen_importlib", "hermes_core.plugins.compat")


def _caller_context() -> PluginContext | None:
    """The plugin that owns the nearest frame outside the import machinery and these shims."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_globals.get("__name__") or ""
        if not (name == _SKIPPED[0] or name.startswith(_SKIPPED)):
            return _owner(name)
        frame = frame.f_back  # type: ignore[assignment]
    return None


class _ShimLoader:
    """The loader of a shim module (an ``importlib.abc.Loader`` by protocol: importing ``importlib.abc`` would
    cost every command, since loading any plugin installs the shims)."""

    def __init__(self, source: str | None) -> None:
        self.source = source

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        module.__doc__ = f"Hermes' compatibility shim of Hermes Agent's {module.__name__!r}."
        if self.source is None:
            return
        implementation = importlib.import_module(self.source)
        module.__file__ = implementation.__file__
        for name in implementation.__all__:
            setattr(module, name, getattr(implementation, name))
        module.__all__ = list(implementation.__all__)  # type: ignore[attr-defined]
        if hasattr(implementation, "__getattr__"):  # constants that follow the runtime (hermes_state.DEFAULT_DB_PATH)
            module.__getattr__ = implementation.__getattr__  # type: ignore[method-assign]


class ShimFinder:
    """Serves :data:`SHIMS` to plugin code when no real module of that name exists (it is the last finder; a
    meta path finder by protocol, not derived from ``importlib.abc``)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname.split(".")[0] not in _TOPS or fullname not in SHIMS or _caller_context() is None:
            return None
        package = SHIMS[fullname] is None
        loader = cast("importlib.abc.Loader", _ShimLoader(SHIMS[fullname]))
        spec = importlib.machinery.ModuleSpec(fullname, loader, is_package=package)
        if package:
            spec.submodule_search_locations = []
        return spec


_finder = ShimFinder()


def adopt_patches(context: PluginContext) -> None:
    """After the ``register`` of ``context``'s plugin: each shim that the plugin's code patched, and that acts on
    patches (an ``adopt`` function), takes them up in the plugin's runtime (``tools.delegate_tool``)."""
    for name, source in SHIMS.items():
        module = sys.modules.get(name)
        if source is None or module is None or not isinstance(getattr(module.__spec__, "loader", None), _ShimLoader):
            continue  # never imported, or Hermes Agent's own module
        adopt = getattr(importlib.import_module(source), "adopt", None)
        if adopt is not None:
            adopt(module, context, lambda module_name: _owner(module_name) is context)


class HermesAgentInterop:
    """This layer as the core's interop slot sees it (``hermes_core.workers.interop.Interop``)."""

    def explain(self, exc: BaseException) -> str:
        return explain(exc)

    def noting(self) -> contextlib.AbstractContextManager[list[str]]:
        return noting()

    def adopt(self, prefix: str, context: object) -> None:
        claim(prefix, cast("PluginContext", context))

    def loading(self, context: object) -> contextlib.AbstractContextManager[None]:
        return loading(cast("PluginContext", context))

    def import_problem(self, exc: ImportError, prefix: str, root: str | None) -> str | None:
        return import_problem(exc, prefix, root)

    def registered(self, context: object) -> None:
        adopt_patches(cast("PluginContext", context))


_interop = HermesAgentInterop()


def install() -> None:
    """Serve the shims to plugin code (the shim finder at the end of ``sys.meta_path``) and fill the core's interop
    slot with this layer (once)."""
    if _finder not in sys.meta_path:
        sys.meta_path.append(_finder)
    if INTEROP.layer is not _interop:
        INTEROP.fill(_interop)


# -- why a plugin's import failed -----------------------------------------------------------------


def import_problem(exc: ImportError, prefix: str, root: str | None) -> str | None:
    """The reason for a plugin whose code (module ``prefix``) imports a Hermes Agent internal that is not
    shimmed: the full dotted import, and the file and line relative to ``root``; ``None`` for other imports."""
    missing = exc.name or ""
    if missing.split(".")[0] not in HERMES_AGENT_INTERNALS:
        return None
    filename, line = _plugin_frame(exc, prefix)
    dotted = _dotted_import(filename, line, missing, exc) if filename and line else None
    where = f" ({_relative(filename, root)}:{line})" if filename else ""
    if isinstance(exc, ModuleNotFoundError):
        dotted = dotted or missing
        return (f"imports {dotted!r}{where}, a Hermes Agent internal module that is not part of the plugin "
                "contract and has no compatibility shim; the plugin must use only what register(ctx) is given")
    dotted = dotted or missing
    provided = ", ".join(getattr(sys.modules.get(missing), "__all__", ()) or ()) or "nothing"
    return (f"imports {dotted!r}{where}, which Hermes' compatibility shim of Hermes Agent's {missing!r} does not "
            f"provide (it has {provided}); the plugin must use only what register(ctx) is given")


def explain(exc: BaseException) -> str:
    """``str(exc)``, or for a Hermes Agent internal that plugin code imported while it runs (a call, a check, a
    command), the same reason a load gives: the import, the plugin's file and line, and whether a shim exists."""
    if isinstance(exc, ImportError):
        tb = exc.__traceback__
        prefix = None
        while tb is not None:  # the deepest frame of a plugin's code
            prefix = _claimed_prefix(tb.tb_frame.f_globals.get("__name__") or "") or prefix
            tb = tb.tb_next
        if prefix is not None:
            package_file = getattr(sys.modules.get(prefix), "__file__", None)
            root = str(Path(package_file).parent.parent) if package_file else None
            problem = import_problem(exc, prefix, root)
            if problem is not None:
                return problem
    return str(exc)


def _plugin_frame(exc: BaseException, prefix: str) -> tuple[str | None, int | None]:
    """File and line of the deepest traceback frame that is the plugin's own code."""
    found: tuple[str | None, int | None] = (None, None)
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_globals.get("__name__") or ""
        if name == prefix or name.startswith(prefix + "."):
            found = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _dotted_import(filename: str, line: int, missing: str, exc: ImportError) -> str | None:
    """The dotted name the import statement at ``filename:line`` asked for, e.g. ``gateway.platforms.base``."""
    import ast

    try:
        tree = ast.parse(read_untrusted_bytes(filename, TEXT_LIMIT, follow_symlinks=True), filename)
    except (OSError, SyntaxError, ValueError):
        return None
    top = missing.split(".")[0]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom) or not node.lineno <= line <= (node.end_lineno or line):
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names if alias.name.split(".")[0] == top]
            return max(names, key=len) if names else None
        if node.level == 0 and node.module and node.module.split(".")[0] == top:
            if isinstance(exc, ModuleNotFoundError) and exc.name != node.module:
                return node.module
            absent = [alias.name for alias in node.names if f"'{alias.name}'" in str(exc)]
            return f"{node.module}.{absent[0]}" if absent else node.module
    return None


def _relative(filename: str, root: str | None) -> str:
    if root:
        with contextlib.suppress(ValueError):
            return str(Path(filename).relative_to(root))
    return filename
