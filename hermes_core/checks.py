"""``Availability``: whether something (a tool, an execution backend) can run now, and if not, why."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Availability"]


class _Verdict(NamedTuple):
    available: bool
    reason: str = ""


class Availability(_Verdict):
    """Whether it can run now, and if not, why: the pair ``(available, reason)``."""

    #: Unavailable only for environment variables its plugin declared (``requires_env``) with nothing better from
    #: the plugin's check: a call still reaches the handler, which may say how to set it up (as in Hermes Agent).
    #: An attribute beside the pair, so that the pair keeps its shape (``available, reason = ...``).
    handler_decides: bool = False

    def __new__(cls, available: bool, reason: str = "", handler_decides: bool = False) -> Availability:
        made = super().__new__(cls, available, reason)
        if handler_decides:
            made.handler_decides = True
        return made

    def __getnewargs__(self) -> tuple[bool, str, bool]:  # (a copy or a pickle keeps the attribute)
        return self.available, self.reason, self.handler_decides
