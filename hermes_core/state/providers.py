"""Memory providers: Hermes Agent 0.19's ``MemoryProvider`` interface (``agent/memory_provider.py``, served to
plugins as ``agent.memory_provider``) and the providers plugins register in one runtime.

A plugin registers one with ``ctx.register_memory_provider(provider)``; the one ``memory.provider`` names (when its
``is_available()`` says so) adds its tools, in toolset ``memory``, and its ``system_prompt_block()`` to
``runtime.memory_prompt()``; the built-in file memory stays as it is beside it. It is initialised once, on first
use, with the session of that use; built-in memory writes are mirrored to its ``on_memory_write``.
"""

# Hermes Agent's optional provider hooks are empty on purpose: a provider overrides the ones it needs.
# ruff: noqa: B027

from __future__ import annotations

import inspect
import json
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

__all__ = ["RESERVED_TOOLS", "MemoryProvider", "MemoryProviders", "RegisteredMemoryProvider", "memory_context_block",
           "normalize_tool_schema", "provider_problem"]

log = logging.getLogger(__name__)

#: Seconds a turn waits for the provider's recall before going on without it (Hermes Agent's default).
PREFETCH_TIMEOUT: Final = 5.0
#: Seconds closing the runtime waits for the provider's end-of-turn work still running.
DRAIN_TIMEOUT: Final = 5.0
#: Tools a provider may not define (Hermes Agent's core tools win).
RESERVED_TOOLS: Final = frozenset({"memory", "todo", "session_search", "clarify", "delegate_task"})


class MemoryProvider(ABC):
    """Hermes Agent's abstract memory provider: persistent recall across sessions (Honcho, Mem0, ...)."""

    @property
    @abstractmethod
    def name(self) -> str:
        """Short identifier, the value of ``memory.provider`` that selects it."""

    @abstractmethod
    def is_available(self) -> bool:
        """Configured, with its credentials and dependencies (no network call)."""

    @abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Connect and warm up; ``kwargs`` hold ``hermes_home`` and ``platform`` (and ``agent_context``)."""

    def system_prompt_block(self) -> str:
        """Static text for the system prompt (empty: none)."""
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recalled context for the coming turn (empty: none)."""
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Start a recall for the next turn in the background."""

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        """Persist a completed turn."""

    @abstractmethod
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Its tools, ``{"name", "description", "parameters"}`` each (empty: context only)."""

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one of its tools; JSON text."""
        raise NotImplementedError(f"Provider {self.name} does not handle tool {tool_name}")

    def shutdown(self) -> None:
        """Flush and close."""

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """A turn starts."""

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """A session ended; ``messages`` is its conversation."""

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          rewound: bool = False, **kwargs: Any) -> None:
        """The session changed without the provider being shut down."""

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """What to keep of messages about to be compressed away."""
        return ""

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any) -> None:
        """A sub-agent finished ``task`` with ``result``."""

    def get_config_schema(self) -> list[dict[str, Any]]:
        """The settings it needs (for a setup wizard)."""
        return []

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        """Write its non-secret settings where it reads them."""

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        """The built-in memory tool wrote an entry (``add``, ``replace`` or ``remove``)."""

    def backup_paths(self) -> list[str]:
        """Paths outside the home it keeps state in."""
        return []


def provider_problem(provider: Any) -> str | None:
    """Why ``provider`` is not a memory provider Hermes can use (the methods it is called through), or None."""
    name = getattr(provider, "name", None)
    if not isinstance(name, str) or not name.strip():
        return "it has no name (a non-empty `name` string)"
    missing = [method for method in ("is_available", "initialize", "get_tool_schemas")
               if not callable(getattr(provider, method, None))]
    return f"it lacks {', '.join(missing)}" if missing else None


def _accepts(method: Any, keyword: str) -> bool:
    """Whether ``method`` takes ``keyword`` (providers written for older Hermes Agents lack ``messages``)."""
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.kind is inspect.Parameter.VAR_KEYWORD or p.name == keyword for p in parameters)


def normalize_tool_schema(schema: Any) -> dict[str, Any] | None:
    """A provider's tool schema as ``{"name", "description", "parameters"}`` (an OpenAI ``{"type": "function"}``
    wrapper is taken off), or None when it names no tool."""
    if isinstance(schema, dict) and schema.get("type") == "function" and isinstance(schema.get("function"), dict):
        schema = schema["function"]
    if not isinstance(schema, dict) or not isinstance(schema.get("name"), str) or not schema["name"]:
        return None
    return schema


def memory_context_block(recalled: str) -> str:
    """Hermes Agent's fence around recalled memory, so the model does not take it for the user's words."""
    if not recalled or not recalled.strip():
        return ""
    return ("<memory-context>\n[System note: The following is recalled memory context, NOT new user input. Treat "
            "as authoritative reference data — this is the agent's persistent memory and should inform all "
            f"responses.]\n\n{recalled}\n</memory-context>")


class RegisteredMemoryProvider:
    """A provider a plugin registered, initialised once, on first use."""

    def __init__(self, name: str, provider: Any, plugin: str | None) -> None:
        self.name, self.provider, self.plugin = name, provider, plugin
        self._lock = threading.Lock()
        self.session_id: str | None = None

    def ready(self, session_id: str | None, home: Path, platform: str) -> Any:
        """The provider, initialised (with ``session_id``, the home and the platform) unless it was."""
        with self._lock:
            if self.session_id is None:
                self.provider.initialize(session_id or "", hermes_home=str(home), platform=platform,
                                         agent_context="primary")
                self.session_id = session_id or ""
        return self.provider


class MemoryProviders:
    """The memory providers of one runtime: those plugins registered, and the one the config selects."""

    def __init__(self, registered: dict[str, RegisteredMemoryProvider], selected: Callable[[], str], home: Path,
                 platform: str = "hermes") -> None:
        self.registered = registered
        self.selected = selected
        self.home = home
        self.platform = platform
        self._background: Any = None  # one worker for end-of-turn work, made on first use
        self._background_lock = threading.Lock()

    def active(self) -> RegisteredMemoryProvider | None:
        """The provider ``memory.provider`` names, if one registered under that name is available."""
        entry = self.registered.get(self.selected().strip())
        if entry is None:
            return None
        try:
            return entry if entry.provider.is_available() else None
        except Exception:
            log.warning("memory provider %r: is_available() failed", entry.name, exc_info=True)
            return None

    def _ready(self, session_id: str | None) -> Any:
        entry = self.active()
        if entry is None:
            return None
        try:
            return entry.ready(session_id, self.home, self.platform)
        except Exception:
            log.warning("memory provider %r: initialize() failed", entry.name, exc_info=True)
            return None

    def prompt_block(self, session_id: str | None = None) -> str:
        """The active provider's ``system_prompt_block()`` (empty without one, or when it fails)."""
        return str(self._safely("system_prompt_block", session_id) or "")

    def prefetch(self, query: str, session_id: str | None = None) -> str:
        """What the active provider recalls for ``query``, fenced as Hermes Agent fences it (empty: nothing)."""
        return memory_context_block(str(self._safely("prefetch", session_id, query, session_id=session_id or "")
                                        or ""))

    def sync_turn(self, user_content: str, assistant_content: str, session_id: str | None = None,
                  messages: list[dict[str, Any]] | None = None) -> None:
        """Hand a completed turn to the active provider."""
        self._safely("sync_turn", session_id, user_content, assistant_content, session_id=session_id or "",
                     messages=messages)

    def turn_started(self, turn_number: int, message: str, session_id: str | None = None) -> str:
        """A host's turn begins (Hermes Agent's order): ``on_turn_start``, then the recall for ``message``, fenced;
        a recall later than :data:`PREFETCH_TIMEOUT` seconds is left out (empty: nothing recalled)."""
        if self.active() is None:
            return ""
        self._safely("on_turn_start", session_id, turn_number, message)
        recalled: list[str] = []
        worker = threading.Thread(target=lambda: recalled.append(self.prefetch(message, session_id)), daemon=True,
                                  name="hermes-memory-prefetch")
        worker.start()
        worker.join(PREFETCH_TIMEOUT)
        if not recalled:
            log.warning("memory provider %r: prefetch() took over %g s; this turn goes on without it",
                        self.selected(), PREFETCH_TIMEOUT)
        return recalled[0] if recalled else ""

    def turn_ended(self, user_content: str, assistant_content: str, session_id: str | None = None,
                   messages: list[dict[str, Any]] | None = None) -> None:
        """A host's turn completed: ``sync_turn`` and ``queue_prefetch`` for the next one, on a background worker,
        so a slow provider never holds the host up (Hermes Agent's ``sync_all`` and ``queue_prefetch_all``)."""
        if not (user_content and assistant_content) or self.active() is None:
            return

        def run() -> None:
            provider = self._ready(session_id)
            sync = getattr(provider, "sync_turn", None)
            keywords: dict[str, Any] = {"session_id": session_id or ""}
            if messages is not None and callable(sync) and _accepts(sync, "messages"):
                keywords["messages"] = messages
            self._safely("sync_turn", session_id, user_content, assistant_content, **keywords)
            self._safely("queue_prefetch", session_id, user_content, session_id=session_id or "")

        with self._background_lock:
            if self._background is None:
                from concurrent.futures import ThreadPoolExecutor

                self._background = ThreadPoolExecutor(1, thread_name_prefix="hermes-memory-provider")
            self._background.submit(run)

    def mirror_write(self, action: str, target: str, content: str, metadata: dict[str, Any]) -> None:
        """Tell the active provider what the built-in memory tool wrote."""
        self._safely("on_memory_write", metadata.get("session_id"), action, target, content, metadata=metadata)

    def call_tool(self, tool_name: str, args: dict[str, Any], session_id: str | None) -> str:
        """Run a tool of the active provider (its answer, JSON text)."""
        provider = self._ready(session_id)
        if provider is None:
            raise RuntimeError(f"memory provider {self.selected()!r} is not available")
        result = provider.handle_tool_call(tool_name, args)
        return result if isinstance(result, str) else json.dumps(result, default=str)

    def drain(self, timeout: float = DRAIN_TIMEOUT) -> bool:
        """Wait up to ``timeout`` seconds for the end-of-turn work submitted so far; False when some still runs."""
        with self._background_lock:
            background = self._background
        if background is None:
            return True
        import concurrent.futures

        try:
            background.submit(lambda: None).result(timeout)
        except concurrent.futures.TimeoutError:
            return False
        return True

    def shutdown(self) -> None:
        if not self.drain():
            log.warning("memory provider %r: end-of-turn work still running after %g s; shut down without it",
                        self.selected(), DRAIN_TIMEOUT)
        with self._background_lock:
            background, self._background = self._background, None
        if background is not None:
            background.shutdown(wait=False)
        for entry in self.registered.values():
            if entry.session_id is not None:
                try:
                    entry.provider.shutdown()
                except Exception:
                    log.warning("memory provider %r: shutdown() failed", entry.name, exc_info=True)

    def _safely(self, method: str, session: str | None, /, *args: Any, **kwargs: Any) -> Any:
        """Call the active provider's ``method`` (None when there is no provider or it lacks that optional hook, as
        providers written without the base class may); a fault is logged with its name and never reaches the host."""
        provider = self._ready(session)
        hook = getattr(provider, method, None) if provider is not None else None
        if not callable(hook):
            return None
        try:
            return hook(*args, **kwargs)
        except Exception as exc:
            log.warning("memory provider %r: %s() failed: %s: %s", getattr(provider, "name", "?"), method,
                        type(exc).__name__, exc)
            log.debug("memory provider %r: %s() failed", getattr(provider, "name", "?"), method, exc_info=True)
            return None
