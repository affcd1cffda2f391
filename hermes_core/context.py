"""``PluginContext``: what ``register(ctx)`` may contribute (compatible with Hermes Agent plugins)."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from .hooks import accepted_keywords
from .manifest import PluginManifest
from .registry import DEFAULT_RESULT_BUDGET, ToolEntry

if TYPE_CHECKING:
    from .runtime import Runtime

__all__ = ["MIDDLEWARE_KINDS", "CliCommand", "Command", "PluginContext", "Skill"]

log = logging.getLogger(__name__)

MIDDLEWARE_KINDS = frozenset({"tool_request", "tool_execution", "llm_request", "llm_execution"})
SKILL_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class Command:
    """An in-session slash command ``/name``."""

    name: str
    handler: Callable[[str], Any]
    description: str
    args_hint: str
    plugin: str | None


@dataclass(frozen=True)
class CliCommand:
    """A ``hermes <name>`` subcommand whose arguments an argparse ``setup_fn`` declares."""

    name: str
    help: str
    setup_fn: Callable[[Any], None]
    handler_fn: Callable[[Any], Any] | None
    description: str
    plugin: str | None


@dataclass(frozen=True)
class Skill:
    """A read-only skill ``<plugin>:<name>``: a Markdown file, or a folder with ``SKILL.md``."""

    name: str
    path: Path
    description: str
    plugin: str | None

    @property
    def document(self) -> Path:
        return self.path / "SKILL.md" if self.path.is_dir() else self.path

    def read(self) -> str:
        return self.document.read_text(encoding="utf-8")


def normalize_command_name(name: str) -> str:
    return name.strip().lstrip("/").strip().lower().replace(" ", "-")


def _frontmatter_description(document: Path) -> str:
    """The ``description`` of a skill document's YAML front matter, or ``""``."""
    try:
        text = document.read_text(encoding="utf-8")
        if not text.startswith("---"):
            return ""
        data = yaml.safe_load(text[3:].split("\n---", 1)[0])
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return ""
    description = data.get("description") if isinstance(data, dict) else None
    return str(description).strip() if description else ""


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
    """Handed to ``register(ctx)``; everything registered through it is undone if ``register`` raises."""

    def __init__(self, runtime: Runtime, plugin_id: str | None, manifest: PluginManifest | None = None) -> None:
        self._runtime = runtime
        #: The plugin id (entry-point name or folder name); ``None`` for the host program itself.
        self.plugin_id = plugin_id
        #: The parsed ``plugin.yaml``; plugins without one (as Hermes Agent's pip plugins are) get one
        #: holding just their id, so ``ctx.manifest.name`` works for every plugin.
        self.manifest = manifest if manifest is not None else PluginManifest(name=plugin_id)
        self._undo: list[Callable[[], None]] = []
        #: Names of the tools registered through this context, in order.
        self.registered_tools: list[str] = []

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes this class lacks: name the gap instead of a bare AttributeError, while
        # getattr(ctx, name, None) and hasattr() probing keep working as plugins expect.
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"PluginContext has no {name!r}: Hermes provides the tool-layer part of Hermes Agent's plugin API "
            "(tools, hooks, middleware, commands, skills, dispatch_tool, get_config, inject_message); probe "
            f"optional features with getattr(ctx, {name!r}, None)")

    # -- tools -------------------------------------------------------------------------------

    def register_tool(self, name: str, toolset: str, schema: dict[str, Any], handler: Callable[..., Any],
                      check_fn: Callable[[], Any] | None = None, requires_env: list[Any] | None = None,
                      is_async: bool = False, description: str = "", emoji: str = "",
                      max_result_size_chars: int | None = None, override: bool = False,
                      parallel_safe: bool = False, path_args: list[str] | tuple[str, ...] = ()) -> bool:
        """Add a tool; ``handler(args: dict, **kwargs) -> str``. Returns False if the conflict policy refused it."""
        if not callable(handler):
            raise TypeError(f"tool {name!r}: handler must be callable, not {type(handler).__name__}")
        schema = dict(schema or {})
        if schema.get("type") == "function" and isinstance(schema.get("function"), dict):
            schema = dict(schema["function"])  # the OpenAI wrapper some plugins pass by mistake
        entry = ToolEntry(name=name, toolset=toolset, schema=schema, handler=_keywords_filtered(handler),
                          check_fn=check_fn, requires_env=list(requires_env or []), is_async=is_async,
                          description=description, emoji=emoji,
                          max_result_size_chars=max_result_size_chars or DEFAULT_RESULT_BUDGET,
                          plugin=self.plugin_id, parallel_safe=parallel_safe, path_args=tuple(path_args))
        return self.add_entry(entry, override=override)

    def add_entry(self, entry: ToolEntry, override: bool = False) -> bool:
        """Register a ready-made :class:`ToolEntry` on behalf of this plugin (undone by :meth:`rollback`)."""
        registry = self._runtime.registry
        previous = registry.get(entry.name)
        if not registry.register(entry, override=override, override_granted=override and self._override_granted()):
            return False

        def undo() -> None:
            if registry.get(entry.name) is entry:
                registry.deregister(entry.name)
                if previous is not None:
                    registry.register(previous)

        self._undo.append(undo)
        self.registered_tools.append(entry.name)
        return True

    def _override_granted(self) -> bool:
        entry = self._runtime.config.plugins.entries.get(self.plugin_id or "")
        return bool(entry and entry.allow_tool_override)

    def dispatch_tool(self, tool_name: str, args: dict[str, Any] | str, **kwargs: Any) -> str:
        """Call another tool through the full call path (hooks included)."""
        allowed = {"task_id", "tool_call_id", "session_id", "user_task", "enabled_tools"}
        return self._runtime.handle_function_call(tool_name, args, **{k: v for k, v in kwargs.items()
                                                                      if k in allowed})

    # -- hooks and middleware -----------------------------------------------------------------

    def register_hook(self, hook_name: str, callback: Callable[..., Any]) -> None:
        """Call ``callback`` with keyword arguments on ``hook_name`` (unknown names: warning, kept)."""
        if not callable(callback):
            raise TypeError(f"hook {hook_name!r}: callback must be callable, not {type(callback).__name__}")
        hooks = self._runtime.hooks
        handle = hooks.add_callback(self.plugin_id or "__main__", hook_name, callback)
        self._undo.append(lambda: hooks.remove(handle))

    def register_middleware(self, kind: str, callback: Callable[..., Any]) -> None:
        """Add a ``tool_request`` / ``tool_execution`` (or LLM) middleware, called with keyword arguments."""
        if kind not in MIDDLEWARE_KINDS:
            raise ValueError(f"unknown middleware kind {kind!r}; expected one of {sorted(MIDDLEWARE_KINDS)}")
        if not callable(callback):
            raise TypeError(f"{kind} middleware must be callable, not {type(callback).__name__}")
        chain = self._runtime.middleware.setdefault(kind, [])
        item = (self.plugin_id or "__main__", _keywords_filtered(callback))
        chain.append(item)

        def undo() -> None:
            chain.remove(item)
            if not chain:
                self._runtime.middleware.pop(kind, None)

        self._undo.append(undo)

    # -- commands and skills ------------------------------------------------------------------

    def register_command(self, name: str, handler: Callable[[str], Any], description: str = "",
                         args_hint: str = "") -> None:
        """Add an in-session slash command ``/name``; ``handler(raw_args) -> str | None``, sync or async."""
        if not callable(handler):
            raise TypeError(f"command {name!r}: handler must be callable, not {type(handler).__name__}")
        command = Command(normalize_command_name(name), handler, description, args_hint, self.plugin_id)
        if not command.name:
            log.warning("plugin %r registered a command with an empty name; ignored", self.plugin_id)
            return
        self._add(self._runtime.commands, command.name, command)

    def register_cli_command(self, name: str, help: str, setup_fn: Callable[[Any], None],
                             handler_fn: Callable[[Any], Any] | None = None, description: str = "") -> None:
        """Add ``hermes <name>``: ``setup_fn(argparse_parser)`` declares its arguments."""
        if not callable(setup_fn):
            raise TypeError(f"CLI command {name!r}: setup_fn must be callable, not {type(setup_fn).__name__}")
        command = CliCommand(name, help, setup_fn, handler_fn, description, self.plugin_id)
        self._add(self._runtime.cli_commands, name, command)

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
        self._add(self._runtime.skills, skill.name, skill)

    def _add(self, table: dict[str, Any], key: str, value: Any) -> None:
        previous = table.get(key)
        table[key] = value

        def undo() -> None:
            if previous is None:
                table.pop(key, None)
            else:
                table[key] = previous

        self._undo.append(undo)

    # -- the rest of Hermes Agent's surface ----------------------------------------------------

    def inject_message(self, content: str, role: str = "user") -> bool:
        """Hand a message to the agent loop, if one attached a sink (``runtime.message_sink``)."""
        sink = self._runtime.message_sink
        if sink is None:
            return False
        sink(content, role)
        return True

    def get_config(self, key: str | None = None, default: Any = None) -> Any:
        """This plugin's settings (``plugins.entries.<id>.settings``), or one dotted key of them."""
        entry = self._runtime.config.plugins.entries.get(self.plugin_id or "")
        value: Any = dict(entry.settings) if entry else {}
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

    def rollback(self) -> None:
        """Undo everything registered through this context, newest first."""
        while self._undo:
            try:
                self._undo.pop()()
            except Exception:
                log.exception("rollback step of plugin %r failed", self.plugin_id)
