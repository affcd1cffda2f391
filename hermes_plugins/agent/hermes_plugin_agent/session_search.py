"""``session_search``: Hermes Agent's recall of past sessions over the session store's FTS5 index, in its four
shapes and answers — discover (``query``: the best sessions, each with the match in context and the session's
opening and closing messages), scroll (``session_id`` + ``around_message_id``), read (``session_id``) and browse
(nothing: recent sessions). ``profile`` reads another profile's ``state.db``, read-only.

When a model can be asked (the host's model callback, an MCP client's sampling, or the auxiliary model
``auxiliary.session_search``: ``base_url``, ``model``, ``api_key``), each discovered session also gets a ``summary``
written by it; without one the answer is the messages themselves.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from hermes_core.plugin import tool_context, tool_error
from hermes_core.state.store import SessionStore

from .summaries import summarize, summary_model

#: Sessions of other programs' tools and of sub-agents are not the user's history (Hermes Agent's rule).
HIDDEN_SOURCES: Final = ("subagent", "tool")
#: Scheduled jobs: searchable, but ranked below the user's own sessions.
DEMOTED_SOURCES: Final = ("cron",)
_SCAN: Final = 300
_PROFILE: Final = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def session_search(args: dict[str, Any], **kwargs: Any) -> str:
    """Discover, scroll, read or browse past sessions, as the arguments say."""
    context = tool_context()
    state = context.agent_state()
    current: str | None = kwargs.get("session_id")
    store = state.sessions
    session_id, profile = args.get("session_id"), args.get("profile")
    if isinstance(session_id, str) and "/" in session_id:  # an @session:<profile>/<id> link passed whole
        given_profile, _, session_id = session_id.partition("/")
        profile = profile or given_profile
    if isinstance(profile, str) and profile.strip():
        try:
            store = _profile_store(state.home, profile.strip())
        except ValueError as exc:
            return tool_error(f"profile '{profile}': {exc}", success=False)
        current = None
    try:
        if isinstance(session_id, str) and session_id.strip():
            if args.get("around_message_id") is not None:
                return _scroll(store, session_id.strip(), args["around_message_id"], args.get("window", 5), current)
            return _read(store, session_id.strip())
        limit = max(1, min(_int(args.get("limit"), 3), 10))
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return _browse(store, limit, current)
        roles = [r.strip() for r in str(args.get("role_filter") or "").split(",") if r.strip()] or None
        sort = str(args.get("sort") or "").strip().lower()
        answer = _discover(store, query.strip(), roles, limit, sort if sort in ("newest", "oldest") else None,
                           current)
        model = summary_model(context) if answer["results"] else None
        if model is not None:
            for result in answer["results"]:
                result["summary"] = summarize(context, model, query.strip(), result)
        return json.dumps(answer, ensure_ascii=False)
    finally:
        if store is not state.sessions:
            store.close()


def _profile_store(home: Path, profile: str) -> SessionStore:
    """Another profile's ``state.db`` (``<root>/profiles/<name>``; ``default`` is the root), read-only."""
    name = profile.lower()
    if not _PROFILE.match(name):
        raise ValueError("a profile name is 1 to 64 of a-z, 0-9, '_' and '-', starting with a letter or digit")
    root = home.parent.parent if home.parent.name == "profiles" else home
    folder = root if name == "default" else root / "profiles" / name
    if not (folder / "state.db").is_file():
        raise ValueError("does not exist (or has no sessions)")
    return SessionStore(folder / "state.db", read_only=True)


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _when(stamp: Any) -> str:
    if isinstance(stamp, int | float):
        try:
            return datetime.fromtimestamp(stamp).strftime("%B %d, %Y at %I:%M %p")
        except (OverflowError, OSError, ValueError):
            return str(stamp)
    return "unknown" if stamp is None else str(stamp)


def _shaped(message: dict[str, Any], anchor: int | None = None) -> dict[str, Any]:
    """A message as the answer shows it: content always, the other fields when set."""
    shown = {"id": message.get("id"), "role": message.get("role"), "content": message.get("content"),
             "timestamp": message.get("timestamp")}
    for key in ("tool_name", "tool_calls", "tool_call_id"):
        if message.get(key):
            shown[key] = message[key]
    if anchor is not None and message.get("id") == anchor:
        shown["anchor"] = True
    return {key: value for key, value in shown.items() if value is not None or key == "content"}


def _meta(session: dict[str, Any]) -> dict[str, Any]:
    return {"when": _when(session.get("started_at")), "source": session.get("source"), "model": session.get("model"),
            "title": session.get("title")}


def _read(store: SessionStore, session_id: str, head: int = 20, tail: int = 10) -> str:
    session = store.session(session_id)
    if not session:
        return tool_error(f"session_id not found: {session_id}", success=False)
    messages = [_shaped(m) for m in store.messages(session_id)]
    cut = len(messages) > head + tail
    answer: dict[str, Any] = {"success": True, "mode": "read", "session_id": session_id, "session_meta": _meta(session),
                              "message_count": len(messages), "truncated": cut,
                              "messages": messages[:head] + messages[-tail:] if cut else messages}
    if cut:
        answer["message"] = (f"Session has {len(messages)} messages; showing first {head} + last {tail}. Pass "
                             "around_message_id (any id above) to scroll the middle.")
    return json.dumps(answer, ensure_ascii=False)


def _scroll(store: SessionStore, session_id: str, around: Any, window: Any, current: str | None) -> str:
    try:
        anchor = int(around)
    except (TypeError, ValueError):
        return tool_error("scroll requires integer around_message_id", success=False)
    window = max(1, min(_int(window, 5), 20))
    if current and store.lineage_root(session_id) == store.lineage_root(current):
        return tool_error("scroll rejected: anchor lives in the current session lineage (already in your active "
                          "context)", success=False)
    session = store.session(session_id)
    if not session:
        return tool_error(f"session_id not found: {session_id}", success=False)
    view = store.messages_around(session_id, anchor, window)
    if not view["window"]:
        return tool_error(f"around_message_id {anchor} not in session_id {session_id}", success=False)
    return json.dumps({"success": True, "mode": "scroll", "session_id": session_id, "around_message_id": anchor,
                       "session_meta": _meta(session), "window": window,
                       "messages": [_shaped(m, anchor) for m in view["window"]],
                       "messages_before": view["messages_before"], "messages_after": view["messages_after"]},
                      ensure_ascii=False)


def _browse(store: SessionStore, limit: int, current: str | None) -> str:
    root = store.lineage_root(current) if current else None
    results = []
    for session in store.sessions(limit + 5, exclude_sources=HIDDEN_SOURCES, children=False):
        if session["id"] in (current, root):
            continue
        results.append({"session_id": session["id"], "title": session.get("title") or None,
                        "source": session.get("source", ""), "started_at": session.get("started_at", ""),
                        "last_active": session.get("last_active", ""),
                        "message_count": session.get("message_count", 0), "preview": session.get("preview", "")})
        if len(results) >= limit:
            break
    return json.dumps({"success": True, "mode": "browse", "results": results, "count": len(results),
                       "message": f"Showing {len(results)} most recent sessions. Pass a query= to search, or "
                                  "session_id+around_message_id to scroll."}, ensure_ascii=False)


def _discover(store: SessionStore, query: str, roles: list[str] | None, limit: int, sort: str | None,
              current: str | None) -> dict[str, Any]:
    current_root = store.lineage_root(current) if current else None
    rows = store.search(query, roles=roles or ["user", "assistant"], exclude_sources=HIDDEN_SOURCES, limit=_SCAN,
                        sort=sort)
    rows.sort(key=lambda row: row.get("source") in DEMOTED_SOURCES)  # stable: relevance kept within each class
    results: list[dict[str, Any]] = []
    seen: set[str] = set()
    titled = store.session_by_title(query.strip("`'\""))
    if titled and store.lineage_root(titled) != current_root:
        first = store.messages(titled, limit=1)
        if first:
            seen.add(store.lineage_root(titled))
            results.append(_found(store, titled, {"id": first[0]["id"], "role": "session_title",
                                                  "snippet": f"Session title matched: {query}"}))
    for row in rows:
        if len(seen) >= limit:
            break
        root = store.lineage_root(row["session_id"])
        if root in seen or root == current_root or row["session_id"] == current:
            continue
        seen.add(root)
        results.append(_found(store, row["session_id"], row, root))
    answer: dict[str, Any] = {"success": True, "mode": "discover", "query": query, "results": results,
                              "count": len(results)}
    if results:
        answer["sessions_searched"] = len(seen)
    else:
        answer["message"] = "No matching sessions found."
    return answer


def _found(store: SessionStore, session_id: str, match: dict[str, Any], root: str | None = None) -> dict[str, Any]:
    view = store.anchored_view(session_id, match["id"], window=5, bookend=3)
    session = store.session(root or session_id) or {}
    entry = {"session_id": session_id, "when": _when(session.get("started_at")),
             "source": session.get("source") or "unknown", "model": session.get("model") or "unknown",
             "title": session.get("title") or None, "matched_role": match.get("role"),
             "match_message_id": match["id"], "snippet": match.get("snippet") or "",
             "bookend_start": [_shaped(m) for m in view["bookend_start"]],
             "messages": [_shaped(m, match["id"]) for m in view["window"]],
             "bookend_end": [_shaped(m) for m in view["bookend_end"]],
             "messages_before": view["messages_before"], "messages_after": view["messages_after"]}
    if root and root != session_id:
        entry["parent_session_id"] = root
    return entry
