"""``slash_command``: the model runs a command a plugin registered (``ctx.register_command``) — only one that
declared ``allowed_tools``, its tool calls limited to those tools (read-only ones unless it declared otherwise)."""

from __future__ import annotations

import json
from typing import Any, Final

from hermes_core.errors import PolicyError
from hermes_core.plugin import tool_context, tool_error

__all__ = ["slash_command"]

#: The longest argument string passed on.
MAX_ARGS: Final = 10_000


def slash_command(args: dict[str, Any], **kwargs: Any) -> str:
    """Run ``/command args`` and return its output."""
    name, raw_args = args.get("command"), args.get("args") or ""
    if not isinstance(name, str) or not name.strip().lstrip("/"):
        return tool_error("'command' is required: the command's name, e.g. 'summarize'.")
    if not isinstance(raw_args, str) or len(raw_args) > MAX_ARGS:
        return tool_error(f"'args' is one string of at most {MAX_ARGS} characters.")
    context = tool_context()
    try:
        output = context.run_command(name.strip().lstrip("/"), raw_args)
    except KeyError:
        known = context.command_names()
        return tool_error(f"Unknown command /{name.strip().lstrip('/')}; the commands you may run: "
                          f"{', '.join('/' + known_name for known_name in known) or 'none'}")
    except PolicyError as exc:
        return tool_error(str(exc))
    return json.dumps({"command": name.strip().lstrip("/"), "output": "" if output is None else str(output)},
                      ensure_ascii=False)
