"""A ``pre_tool_call`` hook: Hermes asks it before every tool call, of any plugin.

It may return ``None`` (go on), ``{"action": "block", "message": ...}``, ``{"action": "approve",
"message": ...}`` (ask the user) or ``{"action": "modify", "args": {...}}``. It receives only the
keyword arguments it names, so declare what you need and keep ``**kwargs`` for the rest.
"""

from __future__ import annotations

from typing import Any

TOOL = "{{ cookiecutter.tool_name }}"
#: Names the example tool will not greet: a stand-in for a real policy.
BLOCKED_NAMES = frozenset({"root", "admin"})


def tidy_greetings(tool_name: str, args: dict[str, Any], **kwargs: Any) -> dict[str, Any] | None:
    """Refuse to greet blocked names and trim the name's whitespace; leave other tools' calls alone."""
    if tool_name != TOOL:
        return None
    name = str(args.get("name", ""))
    if name.strip().lower() in BLOCKED_NAMES:
        return {"action": "block", "message": f"{TOOL} does not greet {name.strip()!r}"}
    if name != name.strip():
        return {"action": "modify", "args": {**args, "name": name.strip()}}
    return None
