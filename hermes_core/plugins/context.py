"""``PluginContext``: what ``register(ctx)`` may contribute (compatible with Hermes Agent plugins)."""

from __future__ import annotations

import functools
import logging
import re
import sys
import weakref
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..backends.base import BackendContribution, BackendFactory
from ..calls.hooks import accepted_keywords
from ..calls.middleware import MIDDLEWARE_KINDS
from ..config.home import HermesHome
from ..state.providers import RESERVED_TOOLS, RegisteredMemoryProvider, normalize_tool_schema, provider_problem
from ..tools.registry import ResultLimit, ToolAnnotations, ToolEntry, ToolRegistry, tool_entry
from ..tools.websearch import RegisteredWebSearchProvider, web_search_provider_problem
from .contributions import CliCommand, Command, Contributions, Platform, Skill, put

if TYPE_CHECKING:
    from .manifest import PluginManifest
    from .tool import ToolSpec

__all__ = ["PluginContext", "normalize_command_name"]

log = logging.getLogger(__name__)
#: The ``@tool`` module: looked up in ``sys.modules``, never imported here (it costs pydantic).
_TOOL_MODULE = f"{__package__}.tool"

SKILL_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
BACKEND_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
#: Keywords ``dispatch_tool`` passes on to the call.
DISPATCH_KEYWORDS = frozenset({"task_id", "tool_call_id", "session_id", "user_task", "enabled_tools"})


def tool_spec(function: Any) -> ToolSpec | None:
    """``tool.tool_spec(function)`` without importing ``tool`` (and pydantic) when nothing has: a
    function that ``@hermes_core.plugin.tool`` decorated was decorated by the imported module."""
    authoring = sys.modules.get(_TOOL_MODULE)
    return authoring.tool_spec(function) if authoring is not None else None


def _provider_tool(tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
    """A memory provider's tool: the active provider of the calling runtime runs it (initialised first)."""
    from ..calls.toolcontext import tool_context

    state = tool_context().agent_state()
    return state.providers.call_tool(tool_name, args, state.session_for(kwargs.get("session_id")))


def normalize_command_name(name: str) -> str:
    return name.strip().lstrip("/").strip().lower().replace(" ", "-")


def _frontmatter_description(document: Path) -> str:
    """The ``description`` of a skill document's YAML front matter, else its body's first line, or ``""`` (only the
    start is read: a plugin's skill may point anywhere, a FIFO or a device included)."""
    from ..skills.document import listed_description, read_front_matter

    return listed_description(read_front_matter(document, follow_symlinks=True))


def _keywords_filtered(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` itself if it takes ``**kwargs``; otherwise a wrapper that drops the keywords it does not declare.

    Hermes Agent passes context keywords that older handlers and middleware were not written for; dropping
    them is what lets those load unchanged.
    """
    accepts = accepted_keywords(function)
    if accepts is None:
        return function

    @functools.wraps(function)
    def filtered(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **{key: value for key, value in kwargs.items() if key in accepts})

    return filtered


class PluginContext:
    """Handed to ``register(ctx)``; everything registered through it is undone if ``register`` raises.

    ``contributions`` are the tables it writes into; ``settings()`` returns the plugin's settings;
    ``dispatch(name, args, **context)`` calls a tool through the full call path.
    """

    def __init__(self, plugin_id: str | None, contributions: Contributions, settings: Callable[[], dict[str, Any]],
                 dispatch: Callable[..., str],
                 manifest: PluginManifest | Callable[[], PluginManifest | None] | None = None, *,
                 override_granted: Callable[[], bool] = lambda: False,
                 inject: Callable[[str, str], bool] | None = None, home: HermesHome | None = None,
                 runtime: Any = None, memory_provider: Callable[[], str] = lambda: "") -> None:
        #: The plugin id (entry-point name or folder name); ``None`` for the host program itself.
        self.plugin_id = plugin_id
        self._manifest_source = manifest
        self._manifest: PluginManifest | None = None
        self._contributions = contributions
        self._settings = settings
        self._dispatch = dispatch
        self._override_granted = override_granted
        self._inject = inject
        #: The memory provider the config selects (``memory.provider``), by name.
        self._memory_provider = memory_provider
        #: The home of the runtime (the Hermes Agent compatibility shims read its config.yaml and .env).
        self.home = home
        # The runtime that made this context, weakly: what the compatibility shims act for.
        self._runtime: Callable[[], Any] = weakref.ref(runtime) if runtime is not None else lambda: None
        self._undo: list[Callable[[], None]] = []
        self._closed = False
        #: Names of the tools registered through this context, in order.
        self.registered_tools: list[str] = []
        #: What the plugin registered that Hermes set aside (shown on its record).
        self.warnings: list[str] = []

    @property
    def manifest(self) -> PluginManifest:
        """The parsed ``plugin.yaml``; plugins without one (as Hermes Agent's pip plugins are) get one holding
        just their id, so ``ctx.manifest.name`` works for every plugin. Built on first use."""
        if self._manifest is None:
            source = self._manifest_source
            manifest = source() if callable(source) else source
            if manifest is None:
                from .manifest import PluginManifest

                manifest = PluginManifest(name=self.plugin_id)
            self._manifest = manifest
        return self._manifest

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes this class lacks: name the gap instead of a bare AttributeError, while
        # getattr(ctx, name, None) and hasattr() probing keep working as plugins expect.
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"PluginContext has no {name!r}: Hermes provides the tool-layer part of Hermes Agent's plugin API "
            "(tools, hooks, middleware, commands, skills, web search and memory providers, dispatch_tool, "
            "get_config, inject_message; messaging platforms are recorded, not run); probe "
            f"optional features with getattr(ctx, {name!r}, None)")

    # -- tools -------------------------------------------------------------------------------

    def register_tool(self, name: str | Callable[..., Any], toolset: str | None = None,
                      schema: dict[str, Any] | None = None, handler: Callable[..., Any] | None = None,
                      check_fn: Callable[[], Any] | None = None, requires_env: list[Any] | None = None,
                      is_async: bool = False, description: str = "", emoji: str = "",
                      max_result_size_chars: ResultLimit = None, override: bool = False,
                      parallel_safe: bool | None = None, path_args: list[str] | tuple[str, ...] = (),
                      annotations: ToolAnnotations | Mapping[str, Any] | None = None,
                      call_timeout: float | None = None) -> bool:
        """Add a tool. Returns False if the conflict policy refused it.

        Either a function decorated with ``@hermes_core.plugin.tool`` alone, ``register_tool(fn)`` (keywords given
        beside it override what the decorator says), or Hermes Agent's ``name, toolset, schema, handler`` with
        ``handler(args: dict, **kwargs) -> str``. While a variable of ``requires_env`` is unset the tool is
        unavailable, naming it, unless ``check_fn`` says it is available. ``annotations`` say what the tool may
        do: ``{"read_only": True}``, or ``destructive``, ``idempotent``, ``open_world`` (MCP's ``readOnlyHint``
        names work too); ``parallel_safe`` defaults to ``read_only``. ``call_timeout``: seconds a call's handler may
        take, instead of ``tools.call_timeout`` (0, for the host program's tools only: no deadline).
        """
        spec = tool_spec(name) if callable(name) else tool_spec(handler)
        if callable(name) and spec is None:
            raise TypeError(f"register_tool({getattr(name, '__name__', name)!r}): a function alone must be "
                            "decorated with @hermes_core.plugin.tool; otherwise pass name, toolset, schema and handler")
        if spec is not None:
            name = spec.name if callable(name) else name
            toolset = toolset or spec.toolset or self.plugin_id
            schema = schema or {"description": description or spec.description, "parameters": spec.parameters}
            handler, is_async = spec.handler, is_async or spec.is_async
            emoji, path_args = emoji or spec.emoji, path_args or spec.path_args
            parallel_safe = spec.parallel_safe if parallel_safe is None else parallel_safe
            annotations = spec.annotations if annotations is None else annotations
            if max_result_size_chars is None:
                max_result_size_chars = spec.max_result_size_chars
        if not isinstance(name, str) or not toolset:
            raise TypeError(f"tool {name!r}: register_tool needs a toolset")
        if not callable(handler):
            raise TypeError(f"tool {name!r}: handler must be callable, not {type(handler).__name__}")
        try:
            declared = ToolAnnotations.of(annotations)
        except ValueError as exc:
            raise ValueError(f"tool {name!r}: {exc}") from None
        schema = dict(schema or {})
        if schema.get("type") == "function" and isinstance(schema.get("function"), dict):
            schema = dict(schema["function"])  # the OpenAI wrapper some plugins pass by mistake
        entry = tool_entry(name, toolset, _keywords_filtered(handler),
                           description=schema.get("description") or description, parameters=schema.get("parameters"),
                           check_fn=check_fn, requires_env=requires_env or (), is_async=is_async, emoji=emoji,
                           max_result_size_chars=max_result_size_chars, plugin=self.plugin_id,
                           parallel_safe=parallel_safe, path_args=path_args, annotations=declared,
                           call_timeout=_call_timeout(name, call_timeout, self.plugin_id))
        return self.add_entry(entry, override=override)

    def add_entry(self, entry: ToolEntry, override: bool = False) -> bool:
        """Register a ready-made :class:`ToolEntry` on behalf of this plugin (undone by :meth:`rollback`)."""
        self._require_open()
        undo = self._contributions.registry.register(
            entry, override=override, override_granted=override and self._override_granted())
        if undo is None:
            return False
        self._undo.append(undo)
        self.registered_tools.append(entry.name)
        self._warn_if_look_alike(entry.name)
        return True

    def add_entries(self, entries: list[ToolEntry]) -> None:
        """Register several ready-made entries of this plugin at once (its declared tools), none overriding."""
        self._require_open()
        added, undo = self._contributions.registry.register_many(entries)
        self._undo.append(undo)
        for entry in added:
            self.registered_tools.append(entry.name)
            self._warn_if_look_alike(entry.name)

    def _warn_if_look_alike(self, name: str) -> None:
        warning = self._contributions.registry.look_alike_warning(name)
        if warning is not None:
            self.warnings.append(warning)

    @property
    def registry(self) -> ToolRegistry:
        """The runtime's tools, for lookups (register through :meth:`register_tool`)."""
        return self._contributions.registry

    def unregister_tool(self, name: str) -> bool:
        """Remove a tool this plugin registered; False when it has no tool of that name."""
        registry = self._contributions.registry
        entry = registry.get(name)
        if entry is None or entry.plugin != self.plugin_id:
            return False
        registry.deregister(name)
        return True

    def dispatch_tool(self, tool_name: str, args: dict[str, Any] | str, **kwargs: Any) -> str:
        """Call another tool through the full call path (hooks included)."""
        return self._dispatch(tool_name, args, **{k: v for k, v in kwargs.items() if k in DISPATCH_KEYWORDS})

    # -- hooks and middleware -----------------------------------------------------------------

    def register_hook(self, hook_name: str, callback: Callable[..., Any]) -> None:
        """Call ``callback`` with keyword arguments on ``hook_name`` (unknown names: warning, kept)."""
        if not callable(callback):
            raise TypeError(f"hook {hook_name!r}: callback must be callable, not {type(callback).__name__}")
        self._require_open()
        self._undo.append(self._contributions.hooks.add_callback(self.plugin_id or "__main__", hook_name, callback))

    def register_middleware(self, kind: str, callback: Callable[..., Any]) -> None:
        """Add a ``tool_request`` / ``tool_execution`` (or LLM) middleware, called with keyword arguments."""
        if kind not in MIDDLEWARE_KINDS:
            raise ValueError(f"unknown middleware kind {kind!r}; expected one of {sorted(MIDDLEWARE_KINDS)}")
        if not callable(callback):
            raise TypeError(f"{kind} middleware must be callable, not {type(callback).__name__}")
        self._require_open()
        self._undo.append(self._contributions.add_middleware(kind, self.plugin_id or "__main__",
                                                             _keywords_filtered(callback)))

    def register_web_search_provider(self, provider: Any) -> None:
        """Add a web search backend (Hermes Agent's provider protocol: ``name``, ``is_available()``,
        ``search(query, limit)``); ``web_search`` asks registered providers before its own."""
        problem = web_search_provider_problem(provider)
        if problem is not None:
            self._ignore("web search provider", provider, problem)
            return
        name = provider.name.strip()
        self._add(self._contributions.web_search_providers, name,
                  RegisteredWebSearchProvider(name, provider, self.plugin_id))

    def _ignore(self, kind: str, provider: Any, problem: str) -> None:
        """Hermes Agent ignores a provider it cannot use and loads the plugin; so does Hermes, saying so."""
        self.warnings.append(f"{kind} {type(provider).__name__} ignored: {problem}")
        log.warning("plugin %r: %s ignored: %s", self.plugin_id, kind, problem)

    def register_memory_provider(self, provider: Any) -> None:
        """Add a memory provider (Hermes Agent's ``MemoryProvider`` interface). The one ``memory.provider`` names,
        when its ``is_available()`` says so, adds its tools (toolset ``memory``) and its system prompt block."""
        problem = provider_problem(provider)
        if problem is not None:
            self._ignore("memory provider", provider, problem)
            return
        name = provider.name.strip()
        self._add(self._contributions.memory_providers, name, RegisteredMemoryProvider(name, provider,
                                                                                        self.plugin_id))
        if name != self._memory_provider().strip() or not provider.is_available():
            return  # only the selected provider's tools are offered (Hermes Agent runs one at a time)
        for raw in provider.get_tool_schemas() or ():
            schema = normalize_tool_schema(raw)
            if schema is None or schema["name"] in RESERVED_TOOLS:
                self.warnings.append(f"memory provider {name!r}: tool schema ignored (no name, or a name of "
                                     f"Hermes Agent's core tools): {str(raw)[:120]}")
                continue
            self.register_tool(name=schema["name"], toolset="memory", schema=schema,
                               handler=functools.partial(_provider_tool, schema["name"]),
                               description=str(schema.get("description") or ""))

    # -- commands and skills ------------------------------------------------------------------

    def register_command(self, name: str, handler: Callable[[str], Any], description: str = "",
                         args_hint: str = "", *, allowed_tools: Iterable[str] | None = None,
                         read_only: bool = True) -> None:
        """Add an in-session slash command ``/name``; ``handler(raw_args) -> str | None``, sync or async.

        With ``allowed_tools`` the model may run it too (``slash_command``), its tool calls (``dispatch_tool``)
        then limited to those tools, and to read-only ones unless ``read_only`` is false."""
        if not callable(handler):
            raise TypeError(f"command {name!r}: handler must be callable, not {type(handler).__name__}")
        allowed = None if allowed_tools is None else \
            (allowed_tools,) if isinstance(allowed_tools, str) else tuple(allowed_tools)
        command = Command(normalize_command_name(name), handler, description, args_hint, self.plugin_id, allowed,
                          bool(read_only))
        if not command.name:
            log.warning("plugin %r registered a command with an empty name; ignored", self.plugin_id)
            return
        self._add(self._contributions.commands, command.name, command)

    def register_cli_command(self, name: str, help: str, setup_fn: Callable[[Any], None],
                             handler_fn: Callable[[Any], Any] | None = None, description: str = "") -> None:
        """Add ``hermes <name>``: ``setup_fn(argparse_parser)`` declares its arguments."""
        if not callable(setup_fn):
            raise TypeError(f"CLI command {name!r}: setup_fn must be callable, not {type(setup_fn).__name__}")
        command = CliCommand(name, help, setup_fn, handler_fn, description, self.plugin_id)
        self._add(self._contributions.cli_commands, name, command)

    def register_skill(self, name: str, path: str | Path, description: str = "") -> None:
        """Add a read-only skill ``<plugin>:<name>`` from a file or a folder with ``SKILL.md``."""
        if not SKILL_NAME.match(name or ""):
            raise ValueError(f"invalid skill name {name!r}: use letters, digits, '_' and '-' (the '<plugin>:' "
                             "namespace is added automatically)")
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"skill {name!r}: {path} does not exist")
        document = path / "SKILL.md" if path.is_dir() else path
        if not document.is_file():
            raise FileNotFoundError(f"skill {name!r}: the folder {path} has no SKILL.md")
        skill = Skill(f"{self.plugin_id}:{name}" if self.plugin_id else name, path,
                      description or _frontmatter_description(document), self.plugin_id)
        self._add(self._contributions.skills, skill.name, skill)

    # -- messaging platforms (Hermes Agent's gateway) ------------------------------------------

    def register_platform(self, name: str, label: str = "", adapter_factory: Callable[..., Any] | None = None,
                          check_fn: Callable[..., Any] | None = None, **details: Any) -> None:
        """Hermes Agent's messaging platform: recorded and shown (``plugins list``, ``info``, ``doctor``), never run,
        since Hermes runs no messaging gateway."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"invalid platform name {name!r}")
        platform = Platform(name.strip(), label or name.strip(), self.plugin_id, sorted(details))
        self._add(self._contributions.platforms, platform.name, platform)

    # -- execution backends ---------------------------------------------------------------------

    def register_execution_backend(self, name: str, factory: BackendFactory, *, description: str = "",
                                   check_fn: Callable[[], Any] | None = None) -> None:
        """Add an execution backend ``terminal.backend: <name>`` selects; ``factory(setup)`` makes it on first use.

        ``check_fn`` says whether it can work here (an exception's message is the reason). A name another
        plugin already provides is refused with a ``ValueError`` (no plugin takes over another's backend).
        """
        if not BACKEND_NAME.match(name or ""):
            raise ValueError(f"invalid backend name {name!r}: use lower-case letters, digits, '_' and '-'")
        if not callable(factory):
            raise TypeError(f"backend {name!r}: factory must be callable, not {type(factory).__name__}")
        existing = self._contributions.backends.get(name)
        if existing is not None and existing.plugin != self.plugin_id:
            owner = f"plugin {existing.plugin!r}" if existing.plugin else "Hermes itself (built in)"
            raise ValueError(f"backend {name!r} is already provided by {owner}")
        self._add(self._contributions.backends, name,
                  BackendContribution(name, factory, self.plugin_id, description, check_fn))

    def _add(self, table: dict[str, Any], key: str, value: Any) -> None:
        self._require_open()
        self._undo.append(put(table, key, value))

    # -- the rest of Hermes Agent's surface ----------------------------------------------------

    def inject_message(self, content: str, role: str = "user") -> bool:
        """Hand a message to the agent loop, if one attached a sink (``runtime.message_sink``)."""
        return self._inject(content, role) if self._inject is not None else False

    def get_config(self, key: str | None = None, default: Any = None) -> Any:
        """This plugin's settings (``plugins.entries.<id>.settings`` and the keys beside it), or one dotted key."""
        value: Any = self._settings()
        if key is None:
            return value
        for part in key.split("."):
            if not isinstance(value, dict) or part not in value:
                return default
            value = value[part]
        return value

    def on_rollback(self, undo: Callable[[], None]) -> None:
        """Run ``undo`` if this context is rolled back (the loader's own registrations use it)."""
        self._undo.append(undo)

    def close(self) -> None:
        """Undo everything and refuse what comes later (a load that ran out of time goes on, abandoned)."""
        self._closed = True
        self.rollback()

    def _require_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"plugin {self.plugin_id!r}: its load was abandoned (it ran out of time); "
                               "nothing more can be registered through this context")

    def rollback(self) -> None:
        """Undo everything registered through this context, newest first."""
        while self._undo:
            try:
                self._undo.pop()()
            except Exception:
                log.exception("rollback step of plugin %r failed", self.plugin_id)


def _call_timeout(tool: str, seconds: float | None, plugin_id: str | None) -> float | None:
    """A tool's ``call_timeout``, checked: a number of seconds; 0 (no deadline) only for the host program's tools."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds != seconds or seconds < 0 \
            or (seconds == 0 and plugin_id is not None):
        raise ValueError(f"tool {tool!r}: call_timeout must be a number of seconds above 0, not {seconds!r}")
    return float(seconds)
