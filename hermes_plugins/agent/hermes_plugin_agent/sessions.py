"""TinyElf's session tools over the session store (``state.db``): ``sessions_list``, ``sessions_history`` and
``sessions_send``, which records a message in another session for that session's host to pick up (it reads the
session's messages: a ``user`` message that names the sender)."""

from __future__ import annotations

import json
from typing import Any, Final

from hermes_core.plugin import tool_context, tool_error

from .session_search import HIDDEN_SOURCES

__all__ = ["sessions_history", "sessions_list", "sessions_send"]

#: The longest message ``sessions_send`` records, and the most characters of one message ``sessions_history`` shows.
MAX_MESSAGE_CHARS: Final = 4_000
#: Where a sent message says it came from.
SENT_PREFIX: Final = "[message from session {sender}]\n"


def _limit(value: Any, default: int, ceiling: int) -> int:
    return max(1, min(value if isinstance(value, int) and not isinstance(value, bool) else default, ceiling))


def sessions_list(args: dict[str, Any], **kwargs: Any) -> str:
    """The user's sessions, most recently active first."""
    store = tool_context().agent_state().sessions
    rows = store.sessions(_limit(args.get("limit"), 20, 100), exclude_sources=HIDDEN_SOURCES)
    current = kwargs.get("session_id")
    return json.dumps({"sessions": [{"session_id": row["id"], "title": row.get("title"), "source": row.get("source"),
                                     "started_at": row.get("started_at"), "last_active": row.get("last_active"),
                                     "preview": row.get("preview"), "current": row["id"] == current}
                                    for row in rows]}, ensure_ascii=False)


def sessions_history(args: dict[str, Any], **kwargs: Any) -> str:
    """The newest messages of one session, oldest first."""
    session_id = args.get("session_id")
    if not isinstance(session_id, str) or not session_id.strip():
        return tool_error("'session_id' is required (sessions_list shows them).")
    store = tool_context().agent_state().sessions
    if store.session(session_id) is None:
        return tool_error(f"No session {session_id!r} (sessions_list shows them).")
    limit = _limit(args.get("limit"), 30, 200)
    total = len(store.messages(session_id))
    messages = store.messages(session_id, limit=limit, offset=max(0, total - limit))
    return json.dumps({"session_id": session_id, "total_messages": total, "messages": [
        {"id": message["id"], "role": message["role"], "tool_name": message.get("tool_name"),
         "timestamp": message.get("timestamp"), "content": _shown(message.get("content"))}
        for message in messages]}, ensure_ascii=False)


def sessions_send(args: dict[str, Any], **kwargs: Any) -> str:
    """Record ``message`` in another session, for its host to pick up."""
    session_id, message = args.get("session_id"), args.get("message")
    if not isinstance(session_id, str) or not session_id.strip():
        return tool_error("'session_id' is required (sessions_list shows them).")
    if not isinstance(message, str) or not message.strip():
        return tool_error("'message' is required: the text to send.")
    if len(message) > MAX_MESSAGE_CHARS:
        return tool_error(f"The message has {len(message)} characters; at most {MAX_MESSAGE_CHARS} can be sent.")
    sender = kwargs.get("session_id")
    if session_id == sender:
        return tool_error("That is this session: send to another one.")
    store = tool_context().agent_state().sessions
    if store.session(session_id) is None:
        return tool_error(f"No session {session_id!r} (sessions_list shows them).")
    message_id = store.record(session_id, "user", SENT_PREFIX.format(sender=sender or "unknown") + message)
    return json.dumps({"sent": True, "session_id": session_id, "message_id": message_id})


def _shown(content: Any) -> Any:
    if isinstance(content, str) and len(content) > MAX_MESSAGE_CHARS:
        return f"{content[:MAX_MESSAGE_CHARS]} [... {len(content) - MAX_MESSAGE_CHARS} more characters]"
    return content
