"""Shim of Hermes Agent's ``hermes_state``: ``DEFAULT_DB_PATH`` in the home of the runtime running the plugin, and a
``SessionDB`` with the calls published plugins make, backed by Hermes' session store (the same ``state.db`` that
``runtime.sessions``, ``session_search`` and ``hermes sessions`` use, in Hermes Agent's schema)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...state.store import SessionStore
from . import host_runtime

__all__ = ["SessionDB"]


def __getattr__(name: str) -> Any:
    # a module constant in Hermes Agent; here it follows the runtime that imports it
    if name == "DEFAULT_DB_PATH":
        return default_db_path()
    raise AttributeError(name)


def default_db_path() -> Path:
    home: Path = host_runtime().home.root
    return home / "state.db"


class SessionDB:
    """Sessions and their messages in ``state.db`` (``db_path``: default :data:`DEFAULT_DB_PATH`, the runtime's own
    store; ``read_only``: another profile's file, opened without writing)."""

    def __init__(self, db_path: Path | str | None = None, read_only: bool = False) -> None:
        path = Path(db_path) if db_path is not None else default_db_path()
        self._own = read_only or path != default_db_path()
        self._store: SessionStore = SessionStore(path, read_only=read_only) if self._own else host_runtime().sessions
        self.db_path = path

    def close(self) -> None:
        if self._own:  # the runtime's store stays open for the runtime
            self._store.close()

    def create_session(self, session_id: str, source: str, model: str | None = None,
                       parent_session_id: str | None = None, cwd: str | None = None, **ignored: Any) -> str:
        return self._store.ensure_session(session_id, source, model=model, parent_session_id=parent_session_id,
                                          cwd=cwd)

    def ensure_session(self, session_id: str, source: str = "unknown", **kwargs: Any) -> str:
        return self.create_session(session_id, source, **kwargs)

    def end_session(self, session_id: str, end_reason: str) -> None:
        self._store.end_session(session_id, end_reason)

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        return self._store.session(session_id)

    @staticmethod
    def sanitize_title(title: str | None) -> str | None:
        cleaned = " ".join((title or "").split())[:100]
        return cleaned or None

    def set_session_title(self, session_id: str, title: str) -> bool:
        return self._store.set_title(session_id, title)

    def get_session_title(self, session_id: str) -> str | None:
        session = self.get_session(session_id)
        return session["title"] if session else None

    def append_message(self, session_id: str, role: str, content: Any = None, tool_name: str | None = None,
                       tool_calls: Any = None, tool_call_id: str | None = None, finish_reason: str | None = None,
                       reasoning: str | None = None, timestamp: Any = None, **ignored: Any) -> int:
        stamp = timestamp.timestamp() if hasattr(timestamp, "timestamp") else timestamp
        return self._store.record(session_id, role, content, tool_name=tool_name, tool_calls=tool_calls,
                                  tool_call_id=tool_call_id, finish_reason=finish_reason, reasoning=reasoning,
                                  timestamp=stamp)

    def get_messages(self, session_id: str, include_inactive: bool = False, limit: int | None = None,
                     offset: int = 0, **ignored: Any) -> list[dict[str, Any]]:
        return self._store.messages(session_id, limit=limit, offset=offset, include_inactive=include_inactive)

    def get_messages_around(self, session_id: str, around_message_id: int, window: int = 5) -> dict[str, Any]:
        return self._store.messages_around(session_id, around_message_id, window)

    def get_anchored_view(self, session_id: str, around_message_id: int, window: int = 5, bookend: int = 3,
                          **ignored: Any) -> dict[str, Any]:
        return self._store.anchored_view(session_id, around_message_id, window, bookend)

    def search_messages(self, query: str, source_filter: list[str] | None = None,
                        exclude_sources: list[str] | None = None, role_filter: list[str] | None = None,
                        limit: int = 20, offset: int = 0, sort: str | None = None,
                        **ignored: Any) -> list[dict[str, Any]]:
        source = source_filter[0] if source_filter and len(source_filter) == 1 else None
        found = self._store.search(query, roles=role_filter, exclude_sources=exclude_sources or (), source=source,
                                   limit=limit, offset=offset, sort=sort)
        return [row for row in found if not source_filter or row["source"] in source_filter]

    def list_sessions_rich(self, source: str | None = None, exclude_sources: list[str] | None = None,
                           limit: int = 20, offset: int = 0, include_children: bool = False,
                           **ignored: Any) -> list[dict[str, Any]]:
        return self._store.sessions(limit, offset, source=source, exclude_sources=exclude_sources or (),
                                    children=include_children)

    def export_session(self, session_id: str) -> dict[str, Any] | None:
        return self._store.export(session_id)

    def delete_session(self, session_id: str, **ignored: Any) -> bool:
        return self._store.delete_session(session_id)

    def get_messages_as_conversation(self, session_id: str, include_ancestors: bool = False,
                                     **ignored: Any) -> list[dict[str, Any]]:
        """``[{"role", "content"}, ...]`` (tool calls included), the parent sessions' first when asked."""
        chain = [session_id]
        while include_ancestors and (session := self.get_session(chain[0])) and session["parent_session_id"] \
                and session["parent_session_id"] not in chain:
            chain.insert(0, session["parent_session_id"])
        conversation = []
        for sid in chain:
            for row in self.get_messages(sid):
                message: dict[str, Any] = {"role": row["role"], "content": row["content"]}
                for key in ("tool_calls", "tool_call_id", "tool_name"):
                    if row.get(key):
                        message[key] = row[key]
                conversation.append(message)
        return conversation
