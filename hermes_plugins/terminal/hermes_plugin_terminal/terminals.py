"""``read_terminal`` and ``close_terminal``: the screens of the task's background processes (Hermes Agent's
shapes; there, the desktop app's terminal pane and the tabs that mirror background processes)."""

from __future__ import annotations

import json
from typing import Any

from hermes_core.plugin import tool_error

from .handlers import DEFAULT_TASK, processes
from .processes import BackgroundProcess
from .screens import TerminalScreen

__all__ = ["close_terminal", "read_terminal"]


def read_terminal(args: dict[str, Any], **kwargs: Any) -> str:
    """``{session_id, total_lines, start, end, viewport_rows, cursor_row, text}`` of a background process's screen."""
    task = kwargs.get("task_id") or DEFAULT_TASK
    wanted = args.get("session_id")
    if wanted:
        entry = processes().get(str(wanted), task)
        if entry is None:
            return tool_error(f"no background process {wanted!r} in this task; process(action='list') shows them")
    else:
        entry = _latest_open(processes().for_task(task))
        if entry is None:
            return tool_error("no background process of this task has an open terminal: start one with "
                              "terminal(background=true, pty=true)")
    screen = entry.screen = entry.screen or TerminalScreen()
    entry.terminal_closed = False  # reading a closed one opens it again
    lines, cursor_row = screen.read(entry.process.output)
    total = len(lines)
    start_line, count = args.get("start_line"), args.get("count")
    if start_line is None:
        start = max(0, total - screen.rows)
        end = total if count is None else min(total, start + max(1, int(count)))
    else:
        start = min(max(0, int(start_line)), total)
        end = min(total, start + max(1, int(count if count is not None else screen.rows)))
    return json.dumps({"session_id": entry.id, "status": entry.status, "total_lines": total, "start": start,
                       "end": end, "viewport_rows": screen.rows, "cursor_row": cursor_row,
                       "text": "\n".join(lines[start:end])}, ensure_ascii=False)


def _latest_open(entries: list[BackgroundProcess]) -> BackgroundProcess | None:
    """The task's most recently started process whose terminal is open, one in a pseudo-terminal first."""
    candidates = [entry for entry in entries if not entry.terminal_closed]
    return max(candidates, key=lambda entry: (entry.pty, entry.started_at), default=None)


def close_terminal(args: dict[str, Any], **kwargs: Any) -> str:
    """Close a background process's terminal view; the process goes on."""
    task = kwargs.get("task_id") or DEFAULT_TASK
    process_id = str(args.get("process_id") or "").strip()
    if not process_id:
        return tool_error("process_id is required: the background process whose terminal to close")
    entry = processes().get(process_id, task)
    if entry is None:
        return tool_error(f"no background process {process_id!r} in this task; process(action='list') shows them")
    entry.terminal_closed, entry.screen = True, None
    return json.dumps({"status": "ok", "closed": entry.id,
                       "note": "Closed the terminal view. The process was not killed: its output is still kept "
                               "(process action='log'), and read_terminal with its session_id opens it again."})
