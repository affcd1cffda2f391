"""``memory``: Hermes Agent's persistent memory tool over ``memories/MEMORY.md`` and ``USER.md`` in the home: add,
replace and remove by a unique substring, or an ``operations`` batch applied all or nothing, with its limits and
refusals. A write that lands is mirrored to the active memory provider.

With ``memory.write_approval: true`` (Hermes Agent's gate) every write is shown to the user first: approved, it
lands; denied, it is refused; with nobody to ask (no terminal, an MCP client without elicitation, ``approvals.mode:
deny``) it is staged in ``<home>/pending/memory`` for ``hermes memory approve`` instead of being dropped."""

from __future__ import annotations

import json
from typing import Any, Final

from hermes_core import ApprovalRequest
from hermes_core.plugin import ToolContext, tool_context, tool_error
from hermes_core.state.memory import TARGETS, MemoryFiles
from hermes_core.state.pending import PendingWrites

_DISABLED = "Memory is not available. It may be disabled in config or this environment."
_ON: Final = {"on", "true", "yes", "1", "approve", "enabled"}


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
    session = kwargs.get("session_id")
    if operations:
        if not isinstance(operations, list):
            return tool_error("operations must be a list of {action, content?, old_text?} objects.", success=False)
        gated = _gate(context, args, session, {"action": "batch", "target": target, "operations": operations})
        if gated is not None:
            return gated
        result = files.apply_batch(target, operations)
    else:
        action, content, old_text = args.get("action"), args.get("content"), args.get("old_text")
        refusal = _missing(files, target, action, content, old_text)
        if refusal is not None:
            return refusal
        if action in ("add", "replace", "remove"):
            gated = _gate(context, args, session,
                          {"action": action, "target": target, "content": content, "old_text": old_text})
            if gated is not None:
                return gated
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
        for op in operations:
            if isinstance(op, dict) and op.get("action") in ("add", "replace", "remove"):
                metadata = {"session_id": session, "tool_name": "memory", "write_origin": "assistant_tool",
                            **({"old_text": str(op["old_text"])} if op.get("old_text") else {})}
                state.providers.mirror_write(str(op["action"]), target, str(op.get("content") or ""), metadata)
    return json.dumps(result, ensure_ascii=False)


def _gate(context: ToolContext, args: dict[str, Any], session: str | None, payload: dict[str, Any]) -> str | None:
    """Hermes Agent's write gate: None when the write may go ahead, else the answer (denied, or staged)."""
    setting = context.section("memory").get("write_approval", False)
    if not (setting is True or (isinstance(setting, str) and setting.strip().lower() in _ON)):
        return None
    summary, detail = _described(payload)
    request = ApprovalRequest(f"Save to memory: {summary}\n    {detail}", None, "memory", args, session,
                              ("once", "session", "deny"))
    if context.approvals.can_ask(request):
        if context.approvals.ask(request):
            return None
        return tool_error("Memory write denied by user. The change was not saved.", success=False)
    record = PendingWrites(context.agent_state().home).stage(payload, f"{summary}: {detail[:120]}")
    return json.dumps({"success": True, "staged": True, "pending_id": record["id"],
                       "message": "Staged for approval (memory.write_approval is on). Not yet saved — review with "
                                  "`hermes memory pending`."}, ensure_ascii=False)


def _described(payload: dict[str, Any]) -> tuple[str, str]:
    """Hermes Agent's summary and detail of a write, as the user is shown it."""
    label = "user profile" if payload["target"] == "user" else "memory"
    action = payload["action"]
    if action == "batch":
        lines = []
        for op in payload["operations"]:
            op = op if isinstance(op, dict) else {}
            if op.get("action") == "remove":
                lines.append(f"- remove: {op.get('old_text', '')}")
            elif op.get("action") == "replace":
                lines.append(f"- replace: {op.get('old_text', '')} -> {op.get('content', '')}")
            else:
                lines.append(f"- {op.get('action', '?')}: {op.get('content', '')}")
        return f"apply {len(payload['operations'])} op(s) to {label}", "\n".join(lines)
    if action == "add":
        return f"add to {label}", str(payload["content"] or "")
    if action == "replace":
        return f"replace in {label}", f"old: {payload['old_text']}\nnew: {payload['content']}"
    return f"remove from {label}", str(payload["old_text"] or "")


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
