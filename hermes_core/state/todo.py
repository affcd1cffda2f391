"""A session's todo list with Hermes Agent's rules: items ``{id, content, status}``, list order is priority,
``merge=false`` replaces the list, ``merge=true`` updates items by id and appends new ones, duplicate ids keep the
last, a bad status becomes ``pending``; at most 256 items of 4 000 characters each."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["MAX_TODO_CONTENT_CHARS", "MAX_TODO_ITEMS", "STATUSES", "summary", "write_todos"]

STATUSES: Final = ("pending", "in_progress", "completed", "cancelled")
MAX_TODO_CONTENT_CHARS: Final = 4000
MAX_TODO_ITEMS: Final = 256
_CUT: Final = "… [truncated]"

Item = dict[str, str]


def write_todos(current: list[Item], todos: list[Any], merge: bool) -> list[Item]:
    """The list after writing ``todos`` over ``current`` (neither is changed)."""
    if not merge:
        items = [_valid(todo) for todo in _last_of_each_id(todos)]
    else:
        items = [dict(item) for item in current]
        by_id = {item["id"]: item for item in items}
        for todo in _last_of_each_id(todos):
            item_id = str(todo.get("id", "")).strip() if isinstance(todo, dict) else ""
            if not item_id:
                continue  # nothing to merge it into
            existing = by_id.get(item_id)
            if existing is None:
                by_id[item_id] = new = _valid(todo)
                items.append(new)
                continue
            if todo.get("content"):
                existing["content"] = _capped(str(todo["content"]).strip())
            status = str(todo.get("status") or "").strip().lower()
            if status in STATUSES:
                existing["status"] = status
    return items[:MAX_TODO_ITEMS]  # list order is priority: keep the head


def summary(items: list[Item]) -> dict[str, int]:
    """The counts Hermes Agent's answer carries beside the list."""
    return {"total": len(items), **{status: sum(1 for item in items if item["status"] == status)
                                    for status in STATUSES}}


def _last_of_each_id(todos: list[Any]) -> list[Any]:
    """Duplicate ids collapse to the last occurrence, in that occurrence's place."""
    last: dict[str, int] = {}
    for index, todo in enumerate(todos):
        key = (str(todo.get("id", "")).strip() or "?") if isinstance(todo, dict) else f"\x00{index}"
        last[key] = index
    return [todos[index] for index in sorted(last.values())]


def _valid(todo: Any) -> Item:
    if not isinstance(todo, dict):
        return {"id": "?", "content": "(invalid item)", "status": "pending"}
    content = str(todo.get("content", "")).strip()
    status = str(todo.get("status", "pending")).strip().lower()
    return {"id": str(todo.get("id", "")).strip() or "?",
            "content": _capped(content) if content else "(no description)",
            "status": status if status in STATUSES else "pending"}


def _capped(content: str) -> str:
    return content if len(content) <= MAX_TODO_CONTENT_CHARS else \
        content[:MAX_TODO_CONTENT_CHARS - len(_CUT)] + _CUT
