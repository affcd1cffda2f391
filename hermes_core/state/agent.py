"""``AgentState``: the agent's own state in one runtime — its session store, persistent memory and memory
providers — as the hosts and the ``todo``, ``memory`` and ``session_search`` tools use it."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol

from .providers import MemoryProviders, RegisteredMemoryProvider

if TYPE_CHECKING:  # the store (sqlite3) and the memory files (their locks) load on first use
    from .memory import MemoryFiles
    from .store import SessionStore
    from .turns import Turn

__all__ = ["AgentState", "OneCall", "RecordedCall", "new_session_id"]

log = logging.getLogger(__name__)

#: Sessions whose memory prompt is kept frozen (the least recently used is forgotten first).
_FROZEN_PROMPTS: Final = 256


class RecordedCall(Protocol):
    """A tool call as the call paths read it from any provider (``hermes_core.tools.toolcalls.ToolCall``)."""

    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> Any: ...
    @property
    def id(self) -> str | None: ...


class OneCall(NamedTuple):
    """A call a host ran itself (an adapter, the MCP server, ``hermes tools call``), to be recorded."""

    name: str
    arguments: Any
    id: str | None


def new_session_id() -> str:
    """A session id as Hermes Agent makes them: the local time and six random hex digits."""
    import secrets

    return f"{time.strftime('%Y%m%d_%H%M%S')}_{secrets.token_hex(3)}"


class AgentState:
    """The session store (``<home>/state.db``), the memory files (``<home>/memories``) and the memory providers of
    one runtime; ``settings()`` returns the config as plain data (its ``sessions`` and ``memory`` sections)."""

    def __init__(self, home: Path, settings: Callable[[], Mapping[str, Any]],
                 providers: dict[str, RegisteredMemoryProvider]) -> None:
        self.home = home
        self._settings = settings
        self.providers = MemoryProviders(providers, lambda: str(self._section("memory").get("provider") or ""), home)
        self._store: SessionStore | None = None
        self._lock = threading.Lock()
        self._process_session: str | None = None
        self._prompts: OrderedDict[str, str] = OrderedDict()
        self._turns: OrderedDict[str, int] = OrderedDict()

    def _section(self, name: str) -> Mapping[str, Any]:
        value = self._settings().get(name)
        return value if isinstance(value, Mapping) else {}

    @property
    def sessions(self) -> SessionStore:
        """The session store, opened on first use."""
        if self._store is None:
            from .store import SessionStore

            with self._lock:
                if self._store is None:
                    section = self._section("sessions")
                    self._store = SessionStore(self.home / "state.db",
                                               max_message_chars=int(section.get("max_message_chars") or 100_000),
                                               redact=bool(section.get("redact_secrets", True)))
        return self._store

    @property
    def memory(self) -> MemoryFiles:
        """The built-in memory, with the limits the config sets now."""
        from .memory import MemoryFiles

        return MemoryFiles.of(self.home, self._section("memory"))

    @property
    def recording(self) -> bool:
        """``sessions.record``: whether the call paths record tool calls and results."""
        return bool(self._section("sessions").get("record", True))

    def session_for(self, session_id: str | None) -> str:
        """``session_id``, or when the caller has none the runtime's own session (one per runtime)."""
        if session_id:
            return session_id
        with self._lock:
            if self._process_session is None:
                self._process_session = new_session_id()
            return self._process_session

    def memory_prompt(self, session_id: str | None = None) -> str:
        """Hermes Agent's memory blocks for a system prompt: MEMORY.md, USER.md (each when enabled and not empty)
        and the active provider's block, joined by blank lines. With ``session_id`` the first answer is kept for
        the session (Hermes Agent's frozen snapshot: writes during the session show in the next one)."""
        if session_id is not None:
            with self._lock:
                if session_id in self._prompts:
                    self._prompts.move_to_end(session_id)
                    return self._prompts[session_id]
        section = self._section("memory")
        memory = self.memory
        blocks = [memory.prompt_block("memory") if section.get("memory_enabled", True) else "",
                  memory.prompt_block("user") if section.get("user_profile_enabled", True) else "",
                  self.providers.prompt_block(session_id)]
        prompt = "\n\n".join(block.strip() for block in blocks if block and block.strip())
        if session_id is not None:
            with self._lock:
                self._prompts[session_id] = prompt
                while len(self._prompts) > _FROZEN_PROMPTS:
                    self._prompts.popitem(last=False)
        return prompt

    def begin_turn(self, user_message: str, session_id: str | None = None) -> Turn:
        """Begin a turn of the host's conversation (see :class:`~hermes_core.state.turns.Turn`)."""
        from .turns import Turn

        session = self.session_for(session_id)
        with self._lock:
            number = self._turns.pop(session, 0) + 1
            self._turns[session] = number
            while len(self._turns) > _FROZEN_PROMPTS:
                self._turns.popitem(last=False)
        return Turn(self.record, self.providers, session, user_message, number)

    def record(self, session_id: str, role: str, content: str) -> None:
        """Record one message of the host's conversation, unless ``sessions.record`` is off; a failure is logged."""
        if not self.recording:
            return
        try:
            self.sessions.record(session_id, role, content)
        except Exception:
            log.warning("a %s message of session %r was not recorded in %s", role, session_id,
                        self.home / "state.db", exc_info=True)

    def record_calls(self, session_id: str | None, calls: Sequence[RecordedCall], results: Sequence[str], *,
                     source: str = "hermes") -> None:
        """Record a batch of the model's tool calls (one assistant message holding them, as Hermes Agent stores
        it) and their results (one ``tool`` message each), unless ``sessions.record`` is off. A failure is logged:
        recording never fails a call."""
        if not calls or not self.recording:
            return
        messages: list[dict[str, Any]] = [{"role": "assistant", "content": None, "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": _arguments(call)}}
            for call in calls]}]
        messages += [{"role": "tool", "content": result, "tool_name": call.name, "tool_call_id": call.id}
                     for call, result in zip(calls, results, strict=False)]
        try:
            self.sessions.record_many(self.session_for(session_id), messages, source=source)
        except Exception:
            log.warning("the tool calls of session %r were not recorded in %s", session_id, self.home / "state.db",
                        exc_info=True)

    def close(self) -> None:
        self.providers.shutdown()
        if self._store is not None:
            self._store.close()
            self._store = None


def _arguments(call: RecordedCall) -> str:
    arguments = call.arguments
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False, default=str)
    except ValueError:
        return str(arguments)
