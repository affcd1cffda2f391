"""Sessions of the host commands: ``on_session_start`` before the first tool call, ``on_session_end`` and
``on_session_finalize`` when it is over, as Hermes Agent fires them around a one-shot run."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .hooks import HookRunner

__all__ = ["session"]


@contextlib.contextmanager
def session(hooks: HookRunner, platform: str, model: str | None = None,
            session_id: str | None = None) -> Iterator[str]:
    """Fire the session hooks around the block; yields the session id (a new one unless given).

    ``on_session_end`` says whether the block ``completed`` or was ``interrupted`` (Ctrl-C); either way
    ``on_session_finalize`` follows with ``reason="shutdown"``.
    """
    sid = session_id or _new_session_id()
    hooks.call("on_session_start", session_id=sid, model=model, platform=platform)
    completed = interrupted = False
    try:
        yield sid
        completed = True
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        hooks.call("on_session_end", session_id=sid, task_id=None, turn_id=None, completed=completed,
                   interrupted=interrupted, model=model, platform=platform)
        hooks.call("on_session_finalize", session_id=sid, platform=platform, reason="shutdown")


def _new_session_id() -> str:
    import uuid  # off the start-up path (``import hermes_core`` and a runtime need no uuid until a session starts)

    return uuid.uuid4().hex
