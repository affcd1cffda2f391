"""Run a call with a deadline on a daemon thread, so a hung plugin never wedges the caller."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["DeadlineExceeded", "call_with_deadline"]

T = TypeVar("T")


class DeadlineExceeded(TimeoutError):
    """The call did not finish in time; it goes on, abandoned, on its daemon thread."""


def call_with_deadline(fn: Callable[..., T], timeout: float | None, /, *args: Any, **kwargs: Any) -> T:
    """Return ``fn(*args, **kwargs)``, re-raising its exception, or raise :class:`DeadlineExceeded`."""
    if timeout is None:
        return fn(*args, **kwargs)
    outcome: list[Any] = []
    context = contextvars.copy_context()

    def run() -> None:
        try:
            outcome.append((True, context.run(fn, *args, **kwargs)))
        except BaseException as exc:
            outcome.append((False, exc))

    worker = threading.Thread(target=run, name=f"hermes-deadline-{getattr(fn, '__name__', 'call')}", daemon=True)
    worker.start()
    worker.join(timeout)
    if not outcome:
        raise DeadlineExceeded(f"did not finish within {timeout:g} s")
    ok, value = outcome[0]
    if ok:
        return value
    raise value
