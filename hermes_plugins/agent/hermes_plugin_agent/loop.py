"""The defensive handler behind the agent-loop tools, for a call that reaches dispatch anyway."""

from __future__ import annotations

from typing import Any, Final

from hermes_core.plugin import tool_error

AGENT_LOOP_TOOLS: Final = ("delegate_task", "clarify")


def handled_by_agent_loop(args: dict[str, Any], **kwargs: Any) -> str:
    """Refuse the call with a JSON error: the agent loop, not the tool layer, runs these tools."""
    return tool_error(f"this tool is handled by the agent loop ({', '.join(AGENT_LOOP_TOOLS)} need the agent's "
                      "state or its user); the agent must intercept the call instead of dispatching it to Hermes")
