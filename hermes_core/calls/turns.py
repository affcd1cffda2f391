"""Turns: one batch of the model's tool calls (a ``run_tool_calls`` or ``answer_tool_calls``, sync or async, or the
calls made inside ``with turn():``). What happens once per turn, a checkpoint of the workspace before the first
call that may change files, keys on it; a call made on its own is a turn by itself."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Protocol

__all__ = ["TURN", "CheckpointGate", "Turn", "turn"]


class Turn:
    """One turn (compared by identity)."""

    __slots__ = ("__weakref__",)


#: The turn the current call belongs to (None outside a batch).
TURN: contextvars.ContextVar[Turn | None] = contextvars.ContextVar("hermes_turn", default=None)


@contextlib.contextmanager
def turn() -> Iterator[Turn]:
    """The tool calls made in the block are one turn (inside a turn already begun, that one goes on)."""
    current = TURN.get()
    if current is not None:
        yield current
        return
    made = Turn()
    token = TURN.set(made)
    try:
        yield made
    finally:
        TURN.reset(token)


class CheckpointGate(Protocol):
    """What the dispatch pipeline asks before a call that may change the workspace's files (``runtime.checkpoints``
    when ``checkpoints`` is on)."""

    def watches(self, tool_name: str) -> bool:
        """Whether calls of ``tool_name`` may change files."""

    def before_mutation(self, tool_name: str, turn: object) -> None:
        """Checkpoint the workspace unless ``turn`` has a checkpoint already; never raises."""
