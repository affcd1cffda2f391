"""``memory``: Hermes Agent's persistent memory tool over ``memories/MEMORY.md`` and ``USER.md`` in the home: add,
replace and remove by a unique substring, or an ``operations`` batch applied all or nothing, with its limits and
refusals. A write that lands is mirrored to the active memory provider."""

from __future__ import annotations

import json
from typing import Any

from hermes_core.plugin import tool_context, tool_error
from hermes_core.state.memory import TARGETS, MemoryFiles

_DISABLED = "Memory is not available. It may be disabled in config or this environment."


def memory(args: dict[str, Any], **kwargs: Any) -> str:
    """One change (``action`` with ``content`` / ``old_text``) or a batch (``operations``) of ``target``."""
    context = tool_context()
    state = context.agent_state()
    settings = context.section("memory")
    if not (settings.get("memory_enabled", True) or settings.get("user_profile_enabled", True)):
        return tool_error(_DISABLED, success=False)
    target = args.get("target") or "memory"  # a strict client may send null for an omitted field
    if target not in TARGETS:
        return tool_error(f"Invalid target '{target}'. Use 'memory' or 'user'.", success=False)
    operations = args.get("operations")
    files = state.memory
    if operations:
        if not isinstance(operations, list):
            return tool_error("operations must be a list of {action, content?, old_text?} objects.", success=False)
        result = files.apply_batch(target, operations)
    else:
        action, content, old_text = args.get("action"), args.get("content"), args.get("old_text")
        refusal = _missing(files, target, action, content, old_text)
        if refusal is not None:
            return refusal
        if action == "add":
            result = files.add(target, str(content))
        elif action == "replace":
            result = files.replace(target, str(old_text), str(content))
        elif action == "remove":
            result = files.remove(target, str(old_text))
        else:
            return tool_error(f"Unknown action '{action}'. Use: add, replace, remove", success=False)
        operations = [{"action": action, "content": content, "old_text": old_text}]
    if result.get("success") is True:
        session = kwargs.get("session_id")
        for op in operations:
            if isinstance(op, dict) and op.get("action") in ("add", "replace", "remove"):
                metadata = {"session_id": session, "tool_name": "memory", "write_origin": "assistant_tool",
                            **({"old_text": str(op["old_text"])} if op.get("old_text") else {})}
                state.providers.mirror_write(str(op["action"]), target, str(op.get("content") or ""), metadata)
    return json.dumps(result, ensure_ascii=False)


def _missing(files: MemoryFiles, target: str, action: Any, content: Any, old_text: Any) -> str | None:
    """Hermes Agent's answer to a single change without what it needs (``old_text`` missing: the entries to pick
    from, so the model can ask again), or None."""
    if action == "add" and not content:
        return tool_error("Content is required for 'add' action.", success=False)
    if action in ("replace", "remove") and not old_text:
        used, limit = files.usage(target)
        return json.dumps({"success": False,
                           "error": f"'{action}' needs old_text -- a short unique substring of the entry to {action}. "
                                    f"None was provided. Reissue the {action} with old_text set to part of one of the "
                                    "current_entries below.",
                           "current_entries": files.entries(target), "usage": f"{used:,}/{limit:,}"},
                          ensure_ascii=False)
    if action == "replace" and not content:
        return tool_error("content is required for 'replace' action.", success=False)
    return None
