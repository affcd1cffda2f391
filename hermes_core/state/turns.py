"""A host's conversation turn, as Hermes Agent's loop runs one around the model: the user's message recorded, the
memory provider told the turn started and asked what it recalls (fenced, for the model's copy of the message
only), and at the end the assistant's reply recorded and the completed turn handed to the provider."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .providers import MemoryProviders

__all__ = ["Turn"]


class Turn:
    """One turn of one session, begun by ``runtime.begin_turn(message, session_id)``; :meth:`end` it with the reply."""

    def __init__(self, record: Callable[[str, str, str], None], providers: MemoryProviders, session_id: str,
                 user_message: str, number: int) -> None:
        self._record, self._providers = record, providers
        self.session_id = session_id
        #: The user's message as the user wrote it (what is recorded).
        self.user_message = user_message
        #: Which turn of the session this is (1 for the first this runtime saw).
        self.number = number
        record(session_id, "user", user_message)
        #: What the memory provider recalled for the message, fenced in ``<memory-context>`` (empty: nothing).
        self.recalled = providers.turn_started(number, user_message, session_id)
        self.ended = False

    @property
    def message(self) -> str:
        """The user's message as the model gets it: with the recalled context after it, as Hermes Agent sends it."""
        return f"{self.user_message}\n\n{self.recalled}" if self.recalled else self.user_message

    def end(self, reply: str, messages: list[dict[str, Any]] | None = None) -> None:
        """The model's final text for the turn: recorded, and the turn handed to the provider (``sync_turn``, then
        ``queue_prefetch`` for the next turn) in the background. ``messages``: the turn's conversation, for
        providers that read it. Ending a turn twice changes nothing."""
        if self.ended:
            return
        self.ended = True
        self._record(self.session_id, "assistant", reply)
        self._providers.turn_ended(self.user_message, reply, self.session_id, messages)
