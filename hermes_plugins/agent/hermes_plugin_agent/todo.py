"""``todo``: the session's task list, with Hermes Agent's merge and replace rules and its answer; kept in the
session store, so it outlives the process (``hermes mcp serve`` restarted, a new ``hermes tools call``)."""

from __future__ import annotations

import json
from typing import Any

from hermes_core.plugin import tool_context, tool_error
from hermes_core.state.todo import summary, write_todos


def todo(args: dict[str, Any], **kwargs: Any) -> str:
    """Write ``todos`` (replacing the list, or merging by id with ``merge``), or read the list; the whole list."""
    state = tool_context().agent_state()
    session = state.session_for(kwargs.get("session_id"))
    todos = args.get("todos")
    if todos is None:
        items = state.sessions.todo(session)
    else:
        if isinstance(todos, str):  # a model sometimes sends the list as JSON text
            try:
                todos = json.loads(todos)
            except ValueError:
                return tool_error("todos must be a list of objects, got unparseable string")
        if not isinstance(todos, list):
            return tool_error(f"todos must be a list, got {type(todos).__name__}")
        merge = bool(args.get("merge", False))
        items = state.sessions.update_todo(session, lambda current: write_todos(current, todos, merge))
    return json.dumps({"todos": items, "summary": summary(items)}, ensure_ascii=False)
