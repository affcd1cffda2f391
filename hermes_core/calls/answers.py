"""The answers a ``pre_tool_call`` hook may give, built for it: ``return block("why")`` reads better than the
dict it makes, and cannot be misspelt into an answer that blocks for the wrong reason."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

__all__ = ["Approve", "Block", "Modify", "approve", "block", "modify"]


class Block(TypedDict):
    action: Literal["block"]
    #: What the model is told instead of the result.
    message: str


class Approve(TypedDict, total=False):
    action: Literal["approve"]
    #: The question the user is asked.
    message: str
    #: What an "always" or "session" answer is remembered under.
    rule_key: str


class Modify(TypedDict):
    action: Literal["modify"]
    #: The arguments the call runs with instead (checked against the tool's schema again).
    args: dict[str, Any]


def block(message: str) -> Block:
    """Refuse the call; the model gets ``{"error": message}``."""
    return {"action": "block", "message": message}


def approve(message: str, rule_key: str | None = None) -> Approve:
    """Run the call only if the user approves it (refused or unanswered: blocked)."""
    answer: Approve = {"action": "approve", "message": message}
    if rule_key is not None:
        answer["rule_key"] = rule_key
    return answer


def modify(args: dict[str, Any]) -> Modify:
    """Run the call with ``args`` instead of the model's arguments."""
    return {"action": "modify", "args": dict(args)}
