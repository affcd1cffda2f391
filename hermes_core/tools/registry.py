"""``ToolEntry`` and the thread-safe ``ToolRegistry``: one merged namespace of tools."""

from __future__ import annotations

import contextlib
import enum
import functools
import importlib.util
import inspect
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple, Protocol

from ..checks import Availability
from ..workers.executor import DeadlineExceeded, call_with_deadline
from ..workers.exitguard import refusing_exit
from ..workers.interop import INTEROP
from .references import LazyReference
from .toolnames import BRIDGE_TOOL_NAMES, check_tool_name, skeleton

__all__ = [
    "UNLIMITED",
    "Availability",
    "Declarations",
    "DeclaredEntry",
    "Refusal",
    "Requirements",
    "ResultLimit",
    "ToolAnnotations",
    "ToolEntry",
    "ToolRegistry",
    "Undo",
    "acall_handler",
    "as_text",
    "async_handler",
    "call_handler",
    "env_names",
    "tool_entry",
]

log = logging.getLogger(__name__)

#: What a registration returns: calling it takes the registration back (npe2's disposers).
Undo = Callable[[], None]


class Unlimited(enum.Enum):
    """The type of :data:`UNLIMITED`."""

    UNLIMITED = "unlimited"


#: A result size limit of "no limit at all" (``read_file`` pages its own output).
UNLIMITED: Final = Unlimited.UNLIMITED
#: Characters a tool's result may have: a number, :data:`UNLIMITED`, or ``None`` for the runtime's
#: configured default (``tool_output.max_result_size_chars``).
ResultLimit = int | Literal[Unlimited.UNLIMITED] | None
#: A tool's ``changes_files``: whether a call with these arguments, under this config (``HermesConfig``), may
#: change the workspace's files.
ChangesFiles = Callable[[dict[str, Any], Any], bool]


class Requirements(NamedTuple):
    """Declarative availability checks: environment variables, binaries on PATH, importable modules."""

    env: tuple[str, ...] = ()
    bins: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()

    def missing(self) -> list[str]:
        """What is missing, each as a phrase a user can act on."""
        problems = [f"environment variable {name} is not set" for name in self.env if not os.environ.get(name)]
        if self.bins:
            import shutil

            problems += [f"binary {name!r} is not on PATH" for name in self.bins if shutil.which(name) is None]
        for module in self.modules:
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                problems.append(f"Python module {module!r} is not installed")
        return problems


NO_REQUIREMENTS = Requirements()
_ALWAYS: Final = Availability(True)


#: MCP's name of each annotation (``readOnlyHint``, ...), by Hermes' name.
MCP_HINTS: Final = {"read_only": "readOnlyHint", "destructive": "destructiveHint", "idempotent": "idempotentHint",
                    "open_world": "openWorldHint"}


class _Hints(NamedTuple):
    #: It changes nothing: no files, processes, or state elsewhere (MCP ``readOnlyHint``).
    read_only: bool | None = None
    #: When not read-only: it may delete or overwrite what exists; ``False``: it only adds (``destructiveHint``).
    destructive: bool | None = None
    #: Calling it again with the same arguments has no further effect (``idempotentHint``).
    idempotent: bool | None = None
    #: It reaches an open world beyond the workspace: the web, other hosts, services (``openWorldHint``).
    open_world: bool | None = None
    #: Arguments that make a call destructive when it gives them (Hermes' own; MCP has no per-call hint).
    destructive_if: tuple[str, ...] = ()


class ToolAnnotations(_Hints):
    """What a tool may do, as its author declares it (MCP's tool annotations); ``None`` is "not said".

    A tool that does not say it is read-only counts as one that may change things: it asks under the
    ``writes`` policy and is left out under ``read-only``. ``destructive_if`` names arguments that turn a call
    of a read-only tool into a destructive one when the call gives them a value (anything but null, false, 0,
    an empty string, list or object): such a call asks under ``writes`` and is refused under ``read-only`` and
    in read-only views, while the tool itself stays offered.
    """

    __slots__ = ()

    def __new__(cls, read_only: bool | None = None, destructive: bool | None = None, idempotent: bool | None = None,
                open_world: bool | None = None, destructive_if: list[str] | tuple[str, ...] | None = ()
                ) -> ToolAnnotations:
        names = () if destructive_if is None else destructive_if
        if not isinstance(names, list | tuple) or not all(isinstance(name, str) and name for name in names):
            raise ValueError(f"annotation 'destructive_if' must be a list of argument names, not {destructive_if!r}")
        self = super().__new__(cls, read_only, destructive, idempotent, open_world, tuple(names))
        for name in MCP_HINTS:
            value = getattr(self, name)
            if value is not None and type(value) is not bool:
                raise ValueError(f"annotation {name!r} must be true, false or absent, not {value!r}")
        if read_only and destructive:
            raise ValueError("annotations read_only: true and destructive: true contradict each other (a read-only "
                             "tool destroys nothing)")
        return self

    @classmethod
    def of(cls, value: ToolAnnotations | Mapping[str, Any] | None) -> ToolAnnotations:
        """Annotations from a mapping of Hermes' names (``read_only``) or MCP's (``readOnlyHint``); raises
        ``ValueError`` naming an unknown key or a value that is not a boolean."""
        if value is None:
            return NO_ANNOTATIONS
        if isinstance(value, ToolAnnotations):
            return value
        if not isinstance(value, Mapping):
            raise ValueError(f"annotations must be a mapping such as {{'read_only': True}}, not "
                             f"{type(value).__name__}")
        # thousands of declared tools share a few annotation mappings: each is read once (keyed on the values'
        # types too, as 1 == True; a list, destructive_if's, keyed as a tuple)
        try:
            key: tuple[Any, ...] = (tuple(value.items()), tuple(map(type, value.values())))
            annotations = _ANNOTATIONS.get(key)
        except TypeError:
            key = tuple((name, type(item), tuple(item) if type(item) is list else item)
                        for name, item in value.items())
            try:
                annotations = _ANNOTATIONS.get(key)
            except TypeError:  # an unhashable value (not a valid annotation): read to say why
                return cls._of(value)
        if annotations is None:
            annotations = cls._of(value)
            if len(_ANNOTATIONS) >= 256:
                _ANNOTATIONS.clear()
            _ANNOTATIONS[key] = annotations
        return annotations

    @classmethod
    def _of(cls, value: Mapping[str, Any]) -> ToolAnnotations:
        names = {hint: name for name, hint in MCP_HINTS.items()}
        known: dict[str, Any] = {}
        for key, item in value.items():
            name = key if key in MCP_HINTS or key == "destructive_if" else names.get(key)
            if name is None:
                raise ValueError(f"unknown annotation {key!r}; the annotations are {', '.join(MCP_HINTS)} "
                                 f"(or MCP's {', '.join(MCP_HINTS.values())}) and destructive_if")
            known[name] = item
        return cls(**known) if known else NO_ANNOTATIONS

    @classmethod
    def from_mcp(cls, hints: Any) -> ToolAnnotations:
        """The annotations an MCP server sent: an ``mcp.types.ToolAnnotations``, or its wire form (a mapping of
        ``readOnlyHint``, ...). Values that are not booleans are dropped, and a read-only tool's
        ``destructiveHint`` means nothing (MCP says so)."""
        if hints is None:
            return NO_ANNOTATIONS
        values: dict[str, Any]
        if isinstance(hints, Mapping):
            values = {name: value for name, hint in MCP_HINTS.items() if type(value := hints.get(hint)) is bool}
        else:
            values = {name: value for name in MCP_HINTS if type(value := getattr(hints, f"{name}_hint", None)) is bool}
        if values.get("read_only"):
            values.pop("destructive", None)
        return cls(**values) if values else NO_ANNOTATIONS

    def as_dict(self) -> dict[str, Any]:
        """The annotations that are set, by Hermes' names (``destructive_if`` as a list)."""
        return {**_annotations_dict(self)}

    def mcp(self) -> dict[str, bool]:
        """The annotations that are set, by MCP's names (``readOnlyHint``, ...). MCP's hints are per tool: one with
        ``destructive_if`` is sent as what its calls may do at worst, not read-only and destructive."""
        hints = {name: value for name in MCP_HINTS if (value := getattr(self, name)) is not None}
        if self.destructive_if:
            hints.update(read_only=False, destructive=True)
        return {MCP_HINTS[name]: value for name, value in hints.items()}

    def label(self) -> str:
        """One word for listings: ``read-only``, ``destructive``, ``writes`` (neither), or ``-`` when unknown;
        followed by the arguments that make a call destructive (``read-only, destructive with expression``)."""
        word = ("read-only" if self.read_only else "destructive" if self.destructive
                else "writes" if self.read_only is False else "-")
        return f"{word}, destructive with {', '.join(self.destructive_if)}" if self.destructive_if else word

    def destructive_arguments(self, args: Mapping[str, Any]) -> list[str]:
        """Of the ``destructive_if`` arguments, those the call's ``args`` give a value (a truthy one)."""
        return [name for name in self.destructive_if if args.get(name)]

    @property
    def parallel_by_default(self) -> bool:
        """A tool runs beside other calls unless it says otherwise when it is read-only and no argument makes a
        call of it destructive (a call that asks runs alone)."""
        return self.read_only is True and not self.destructive_if


NO_ANNOTATIONS: Final = ToolAnnotations()


@functools.lru_cache(maxsize=256)
def _annotations_dict(annotations: ToolAnnotations) -> dict[str, Any]:
    hints: dict[str, Any] = {name: value for name in MCP_HINTS if (value := getattr(annotations, name)) is not None}
    return {**hints, "destructive_if": list(annotations.destructive_if)} if annotations.destructive_if else hints

_ANNOTATIONS: dict[tuple[tuple[str, type, Any], ...], ToolAnnotations] = {}


class ToolEntry:
    """One tool: its schema for the model, its handler (or a lazy reference) and its provenance.

    Build entries with :func:`tool_entry`, which every source (manifests, ``register_tool``, MCP) uses. Entries
    compare by identity.
    """

    def __init__(self, name: str, toolset: str, schema: dict[str, Any], handler: Callable[..., Any],
                 check_fn: Callable[[], Any] | None = None, requirements: Requirements = NO_REQUIREMENTS,
                 requires_env: list[Any] | None = None, is_async: bool = False, description: str = "",
                 emoji: str = "", max_result_size_chars: ResultLimit = None, plugin: str | None = None,
                 parallel_safe: bool = False, path_args: tuple[str, ...] = (),
                 annotations: ToolAnnotations = NO_ANNOTATIONS, call_timeout: float | None = None,
                 changes_files: ChangesFiles | None = None) -> None:
        self.name = name
        self.toolset = toolset
        #: ``{"name", "description", "parameters"}``, as the model sees it.
        self.schema = schema
        self.handler = handler
        self.check_fn = check_fn
        self.requirements = requirements
        self.requires_env = [] if requires_env is None else requires_env
        self.is_async = is_async
        self.description = description
        self.emoji = emoji
        self.max_result_size_chars = max_result_size_chars
        #: Provenance: the plugin id, ``mcp:<server>``, or None for the host program.
        self.plugin = plugin
        #: May run beside other calls (by default: when it is read-only).
        self.parallel_safe = parallel_safe
        self.path_args = path_args
        self.annotations = annotations
        #: Seconds a call's handler may take (None: ``tools.call_timeout`` for a plugin's tool, no deadline for the
        #: host program's own; 0: no deadline).
        self.call_timeout = call_timeout
        #: Whether one call (its arguments, the runtime's config) may change the workspace's files, asked before
        #: the call's checkpoint (None: every call of a tool checkpoints watch may).
        self.changes_files = changes_files

    def __repr__(self) -> str:
        return f"ToolEntry(name={self.name!r}, toolset={self.toolset!r}, plugin={self.plugin!r})"

    @property
    def read_only(self) -> bool:
        """Declared read-only (a tool that does not say counts as one that may change things)."""
        return self.annotations.read_only is True

    @property
    def has_checks(self) -> bool:
        """Its availability depends on something (requirements, environment variables, a check function); a
        tool without checks is always available."""
        return bool(self.check_fn is not None or self.requires_env or self.requirements != NO_REQUIREMENTS)

    @property
    def is_lazy(self) -> bool:
        """The handler is a reference not imported yet."""
        return isinstance(self.handler, LazyReference) and not self.handler.loaded

    def definition(self) -> dict[str, Any]:
        """The OpenAI function-calling definition of this tool."""
        return {"type": "function", "function": dict(self.schema)}


class Declarations(Protocol):
    """Where declared tools come from: one plugin's manifest (see :class:`DeclaredEntry`)."""

    def declaration(self, index: int, name: str) -> Mapping[str, Any] | None:
        """The plain declaration of the ``index``-th tool, or None when it is not ``name``'s any more."""

    def entry(self, index: int, name: str, toolset: str) -> ToolEntry:
        """The whole entry of the ``index``-th tool (one that says why it is unavailable when it cannot be read)."""


class DeclaredEntry(ToolEntry):
    """A tool a manifest declares, read from its declaration as far as something needs it: its name, toolset,
    plugin, description, annotations and whether it has checks at once, from the manifest's outline (all a
    registration, an availability and a listing need), its schema from the declaration (what a definition needs),
    and the rest — handler, checks — built when first read (calling it, checking it). A load of thousands of
    declared tools thus does per-tool work only for the tools something uses, and only the work it needs."""

    _building = threading.Lock()

    def __init__(self, name: str, toolset: str, plugin: str | None, source: Declarations, index: int,
                 checked: bool, description: str, annotations: Mapping[str, Any] | None) -> None:
        check_tool_name(name)
        self.name = name
        self.toolset = toolset
        self.plugin = plugin
        self.description = description
        self._source = source
        self._index = index
        #: The declaration has a ``check`` or a ``check_fn`` (known from the outline: no declaration read).
        self._checked = checked
        #: The hints the outline gives, read into :class:`ToolAnnotations` on first use.
        self._hints = annotations
        #: Whether the rest is still to be built.
        self._build = True

    if TYPE_CHECKING:
        #: The tool's plain declaration (``{}`` when it is gone), read on first use.
        declaration: Mapping[str, Any]

    @property
    def has_checks(self) -> bool:
        # a declaration gone since the outline was read has its built entry say why when called
        return super().has_checks if not self._build else self._checked

    def __getattr__(self, attribute: str) -> Any:
        # called only for an attribute not set yet: the declaration, the schema read from it and the annotations
        # from the outline's hints, or the rest (handler, checks...) built from the declaration
        values = self.__dict__
        if attribute.startswith("__") or not values.get("_build"):
            raise AttributeError(attribute)
        if attribute == "declaration":  # ``{}`` when it is gone: the built entry says why the tool is unavailable
            declaration = values["declaration"] = self._source.declaration(self._index, self.name) or {}
            return declaration
        if attribute == "schema":
            declaration = self.declaration
            schema = values["schema"] = {"name": self.name, "description": self.description, "parameters":
                                         declaration.get("parameters") or {"type": "object", "properties": {}}}
            return schema
        if attribute == "annotations":
            try:
                annotations = ToolAnnotations.of(self._hints)
            except ValueError:  # an outline Hermes did not write: the built entry says why it is unavailable
                annotations = NO_ANNOTATIONS
            values["annotations"] = annotations
            return annotations
        with DeclaredEntry._building:
            if self._build:
                built = vars(self._source.entry(self._index, self.name, self.toolset))
                values.update({key: value for key, value in built.items() if key not in ("name", "toolset", "plugin")})
                self._build = False
        return object.__getattribute__(self, attribute)


def env_names(requires_env: Iterable[Any]) -> list[str]:
    """The variable names of a ``requires_env`` list: names, or ``{"name": ...}`` mappings as manifests write them."""
    names = []
    for item in requires_env:
        name = item.get("name") if isinstance(item, dict) else getattr(item, "name", item)
        if isinstance(name, str) and name.strip():
            names.append(name.strip())
    return names


def tool_entry(name: str, toolset: str, handler: Callable[..., Any], *, description: str = "",
               parameters: dict[str, Any] | None = None, check_fn: Callable[[], Any] | None = None,
               requirements: Requirements | None = None, requires_env: Iterable[Any] = (), is_async: bool = False,
               emoji: str = "", max_result_size_chars: ResultLimit = None, plugin: str | None = None,
               parallel_safe: bool | None = None, path_args: Iterable[str] = (),
               annotations: ToolAnnotations | Mapping[str, Any] | None = None,
               call_timeout: float | None = None, changes_files: ChangesFiles | None = None) -> ToolEntry:
    """The one way to make a :class:`ToolEntry`: the schema is built here, with the same defaults for every source.

    ``annotations`` may be a mapping (``{"read_only": True}``, or MCP's ``readOnlyHint`` names); ``parallel_safe``
    not given is whether the tool is read-only (and has no ``destructive_if``). A ``destructive_if`` argument that
    ``parameters`` does not define raises ``ValueError``.
    """
    check_tool_name(name)
    annotations = ToolAnnotations.of(annotations)
    properties = (parameters or {}).get("properties") or {}
    undefined = [argument for argument in annotations.destructive_if if argument not in properties]
    if undefined:
        raise ValueError(f"tool {name!r}: annotation destructive_if names {', '.join(map(repr, undefined))}, which "
                         "its parameters do not define")
    if parallel_safe is None:
        parallel_safe = annotations.parallel_by_default
    return ToolEntry(name=name, toolset=toolset,
                     schema={"name": name, "description": description,
                             "parameters": parameters or {"type": "object", "properties": {}}},
                     handler=handler, check_fn=check_fn, requirements=requirements or Requirements(),
                     requires_env=list(requires_env), is_async=is_async, description=description, emoji=emoji,
                     max_result_size_chars=max_result_size_chars, plugin=plugin, parallel_safe=parallel_safe,
                     path_args=tuple(path_args), annotations=annotations, call_timeout=call_timeout,
                     changes_files=changes_files)


class HandlerContext(Protocol):
    """What a plugin's checks run inside: its tool context (:class:`~hermes_core.plugin.ToolContext`), made current
    while they run."""

    def activate(self) -> contextlib.AbstractContextManager[Any]: ...


class Refusal(NamedTuple):
    """A registration the conflict policy turned down, kept for ``plugins list`` and ``doctor``."""

    tool: str
    plugin: str | None
    toolset: str
    existing_toolset: str
    existing_plugin: str | None
    reason: str


class ToolRegistry:
    """Tools by name; thread-safe; ``generation`` changes whenever the set of tools does."""

    def __init__(self, check_ttl: float = 30.0, check_timeout: float | None = None,
                 tool_contexts: Callable[[str | None], HandlerContext] | None = None) -> None:
        #: The tool context of a plugin; its checks run inside it, as its handlers do.
        self.tool_contexts = tool_contexts
        self._tools: dict[str, ToolEntry] = {}
        self._lock = threading.RLock()
        self._checks: dict[str, tuple[float, Availability]] = {}
        self.check_ttl = check_ttl
        #: Seconds one run of a ``check_fn`` may take (on a worker thread); ``None``: no limit, inline.
        self.check_timeout = check_timeout
        self.generation = 0
        self.refusals: list[Refusal] = []
        self._skeletons: dict[str, str] = {}  # what each name looks like -> the first name that looks so
        #: What registers the tools not registered yet (see :meth:`defer_rest`), and whether it is running.
        self._rest: Callable[[], None] | None = None
        self._completing = False
        self._rest_lock = threading.RLock()

    # -- changes ---------------------------------------------------------------------------

    def defer_rest(self, load: Callable[[], None]) -> None:
        """``load`` registers the rest of the tools (a runtime that loaded only the plugins one call needs): it
        runs once, before the first lookup that could need them — a name not found, a listing, a count."""
        self._rest = load

    def _complete(self) -> None:
        if self._rest is None:
            return
        with self._rest_lock:  # other threads wait for the rest; this one's plugins may look tools up meanwhile
            load = self._rest
            if load is None or self._completing:
                return
            self._completing = True
            try:
                load()
            finally:
                self._rest, self._completing = None, False

    def register(self, entry: ToolEntry, *, override: bool = False, override_granted: bool = False) -> Undo | None:
        """Add ``entry``; returns what undoes it (putting back the tool it replaced), or None when it is refused.

        A plugin may replace its own tools; another owner's tool, whatever its toolset, only with
        ``override=True`` and the grant (``plugins.entries.<id>.allow_tool_override``); else refused."""
        if entry.name in BRIDGE_TOOL_NAMES:
            self._refuse_reserved(entry)
            return None
        with self._lock:
            existing = self._tools.get(entry.name)
            if existing is not None and existing.plugin != entry.plugin:
                if not (override and override_granted):
                    self._refuse(entry, existing, override)
                    return None
                log.info("tool %r of %r overridden by plugin %r", entry.name, existing.plugin, entry.plugin)
            elif existing is not None:
                log.info("tool %r replaced by its own plugin %r", entry.name, entry.plugin)
            self._put(entry.name, entry)
        return functools.partial(self._undo, entry, existing)

    def register_many(self, entries: Iterable[ToolEntry]) -> tuple[list[ToolEntry], Undo]:
        """Add each of ``entries`` as :meth:`register` does without an override (one lock for a plugin's declared
        tools); returns those added and what undoes them all."""
        added: list[tuple[ToolEntry, ToolEntry | None]] = []
        with self._lock:
            for entry in entries:
                if entry.name in BRIDGE_TOOL_NAMES:
                    self._refuse_reserved(entry)
                    continue
                existing = self._tools.get(entry.name)
                if existing is not None and existing.plugin != entry.plugin:
                    self._refuse(entry, existing, False)
                    continue
                self._put(entry.name, entry)
                added.append((entry, existing))
        return [entry for entry, _ in added], functools.partial(self._undo_all, added)

    def _undo_all(self, added: list[tuple[ToolEntry, ToolEntry | None]]) -> None:
        for entry, previous in reversed(added):
            self._undo(entry, previous)

    def _refuse(self, entry: ToolEntry, existing: ToolEntry, override: bool) -> None:
        owner = f"toolset {existing.toolset!r}" + (f", plugin {existing.plugin!r}" if existing.plugin else "")
        how = (f"override=True needs plugins.entries.{entry.plugin}.allow_tool_override: true in config.yaml"
               if override else "pass override=True and grant allow_tool_override to replace it")
        reason = f"tool {entry.name!r} already belongs to {owner}; {how}"
        self.refusals.append(
            Refusal(entry.name, entry.plugin, entry.toolset, existing.toolset, existing.plugin, reason))
        log.warning("refused tool %r from plugin %r: %s", entry.name, entry.plugin, reason)

    def _refuse_reserved(self, entry: ToolEntry) -> None:
        reason = f"tool name {entry.name!r} is reserved for tool search's bridge (tools.tool_search)"
        self.refusals.append(Refusal(entry.name, entry.plugin, entry.toolset, "tool_search", None, reason))
        log.warning("refused tool %r from plugin %r: %s", entry.name, entry.plugin, reason)

    def _undo(self, entry: ToolEntry, previous: ToolEntry | None) -> None:
        with self._lock:
            if self._tools.get(entry.name) is entry:  # not replaced since: put back what it replaced
                self._put(entry.name, previous)

    def _put(self, name: str, entry: ToolEntry | None) -> None:
        if entry is None:
            del self._tools[name]
            self._forget_skeleton(name)
        else:
            self._tools[name] = entry
            self._skeletons.setdefault(skeleton(name), name)
        self._checks.pop(name, None)
        self.generation += 1

    def _forget_skeleton(self, name: str) -> None:
        if self._skeletons.get(skeleton(name)) == name:
            del self._skeletons[skeleton(name)]

    def deregister(self, name: str) -> ToolEntry | None:
        """Remove a tool by name; returns what was removed."""
        with self._lock:
            entry = self._tools.pop(name, None)
            self._checks.pop(name, None)
            self._forget_skeleton(name)
            if entry is not None:
                self.generation += 1
            return entry

    # -- lookups ---------------------------------------------------------------------------

    def look_alike(self, name: str) -> str | None:
        """Another registered tool whose name looks like ``name`` (``Read_File`` and ``read_file``), or None."""
        other = self._skeletons.get(skeleton(name))
        return other if other != name and other in self._tools else None

    def look_alike_warning(self, name: str) -> str | None:
        """The warning for the plugin that registered ``name`` when another tool looks like it (also logged)."""
        other = self.look_alike(name)
        if other is None:
            return None
        owner = self._tools.get(other)
        warning = (f"tool {name!r} looks like tool {other!r}"
                   f"{f' of plugin {owner.plugin!r}' if owner and owner.plugin else ''}; a model may call one for "
                   "the other")
        log.warning("%s", warning)
        return warning

    def get(self, name: str) -> ToolEntry | None:
        entry = self._tools.get(name)
        if entry is None and self._rest is not None:
            self._complete()
            entry = self._tools.get(name)
        return entry

    def __contains__(self, name: object) -> bool:
        return name in self._tools or (self._rest is not None and isinstance(name, str) and self.get(name) is not None)

    def __len__(self) -> int:
        self._complete()
        return len(self._tools)

    def names(self) -> list[str]:
        self._complete()
        return list(self._tools)

    def entries(self) -> list[ToolEntry]:
        self._complete()
        with self._lock:
            return list(self._tools.values())

    def toolsets(self) -> dict[str, list[str]]:
        """Toolset name to the names of its registered tools."""
        grouped: dict[str, list[str]] = {}
        for entry in self.entries():
            grouped.setdefault(entry.toolset, []).append(entry.name)
        return grouped

    # -- availability ----------------------------------------------------------------------

    def check(self, name: str) -> Availability:
        """Run the tool's checks (cached for ``check_ttl`` seconds); an exception means unavailable."""
        entry = self.get(name)
        if entry is None:
            return Availability(False, f"no tool named {name!r}")
        if not entry.has_checks:
            return _ALWAYS
        now = time.monotonic()
        cached = self._checks.get(name)
        if cached and cached[0] > now:
            return cached[1]
        result = self._evaluate(entry, self.check_timeout)
        self._checks[name] = (now + self.check_ttl, result)
        return result

    def _evaluate(self, entry: ToolEntry, timeout: float | None) -> Availability:
        missing = entry.requirements.missing()
        if missing:
            return Availability(False, "; ".join(missing))
        unset = [f"environment variable {name} is not set" for name in env_names(entry.requires_env)
                 if not os.environ.get(name)]
        if entry.check_fn is None:
            return Availability(False, "; ".join(unset), handler_decides=True) if unset else Availability(True)
        # A check_fn has the last word: a plugin may know another way to its credentials.
        activation = self.tool_contexts(entry.plugin).activate() if self.tool_contexts is not None \
            else contextlib.nullcontext()
        # on a worker thread (with a deadline) anything the check raises is its own doing, KeyboardInterrupt too
        caught = BaseException if timeout else Exception
        # a compatibility layer notes what a plugin written for another host looked for and Hermes lacks
        interop = INTEROP.layer
        try:
            with activation, interop.noting() as notes:
                ok = call_with_deadline(_checked, timeout, entry.check_fn)
        except DeadlineExceeded:
            return Availability(False, f"its check did not answer within {timeout:g} s (plugins.load_timeout)")
        except caught as exc:
            reason = interop.explain(exc)
            return Availability(False, reason or f"check raised {type(exc).__name__}")
        if ok:  # a check may answer with a note (a string) that doctor shows
            return Availability(True, ok if isinstance(ok, str) else "")
        if unset:
            return Availability(False, "; ".join(unset), handler_decides=True)
        return Availability(False, "its check reported it unavailable" + "".join(f": {n}" for n in notes[:1]))

    def invalidate_checks(self) -> None:
        """Forget cached check results (the next pass runs every check again)."""
        self._checks.clear()

    def is_toolset_available(self, toolset: str) -> bool:
        """True when at least one tool of ``toolset`` is available."""
        return any(self.check(e.name).available for e in self.entries() if e.toolset == toolset)

    def get_available_tool_names(self, names: Iterable[str] | None = None) -> list[str]:
        """Of ``names`` (default: all), those registered and available, in order."""
        return [n for n in (self.names() if names is None else names) if n in self and self.check(n).available]

    def get_definitions(self, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """OpenAI definitions of the available tools among ``names`` (default: all)."""
        return [self._tools[n].definition() for n in self.get_available_tool_names(names)]

    # -- calls -----------------------------------------------------------------------------

    def dispatch(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Call a tool's handler directly (no hooks); raises ``KeyError`` for an unknown tool."""
        return call_handler(self._tools[name], args, **kwargs)


def _checked(check_fn: Callable[[], Any]) -> Any:
    with refusing_exit():
        return check_fn()


def call_handler(entry: ToolEntry, args: dict[str, Any], **kwargs: Any) -> str:
    """The handler's result as a string: ``async`` handlers are bridged, JSON-able values encoded."""
    result = entry.handler(args, **kwargs)
    return result if type(result) is str else handler_text(result)


def handler_text(result: Any) -> str:
    """What a handler returned as the call's text: an awaitable (an ``async`` handler's) is run to its end first."""
    if hasattr(result, "__await__"):
        from ..workers.asyncbridge import run_sync  # asyncio is imported only by the first async handler

        result = run_sync(result)
    return as_text(result)


def async_handler(entry: ToolEntry) -> Callable[..., Awaitable[Any]] | None:
    """The entry's handler as a coroutine function, or None when it is synchronous. A handler object may offer
    an ``acall`` coroutine method beside its synchronous ``__call__`` (MCP tools do). Resolves a lazy handler
    (an import), so call it off the event loop while ``entry.is_lazy``."""
    handler = entry.handler
    target = handler.resolve() if isinstance(handler, LazyReference) else handler
    acall = getattr(target, "acall", None)
    if acall is not None and inspect.iscoroutinefunction(acall):
        return acall
    if entry.is_async or inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(
            getattr(target, "__call__", None)):  # noqa: B004 - an object whose __call__ is async
        return target
    return None


async def acall_handler(entry: ToolEntry, args: dict[str, Any], **kwargs: Any) -> str:
    """:func:`call_handler` for a coroutine: an async handler is awaited on the running loop."""
    function = async_handler(entry) or entry.handler
    result = function(args, **kwargs)
    if hasattr(result, "__await__"):
        result = await result
    return as_text(result)


def as_text(result: Any) -> str:
    """A handler's result as the string a tool call returns (JSON for anything else JSON can encode; a
    :class:`~hermes_core.media.ToolResult`'s media saved in the calling runtime's results folder)."""
    if type(result) is str:
        return result
    media = sys.modules.get("hermes_core.media")  # no ToolResult can exist before it is imported
    if media is not None and isinstance(result, media.ToolResult):
        return str(result.render(media.current_store()))
    try:
        return json.dumps(result, ensure_ascii=False)
    except (TypeError, ValueError):
        raise TypeError(f"the handler returned {type(result).__name__}, not a string") from None
