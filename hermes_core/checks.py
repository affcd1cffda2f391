"""``Availability``: whether something (a tool, an execution backend) can run now, and if not, why."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Availability"]


class Availability(NamedTuple):
    """Whether it can run now, and if not, why."""

    available: bool
    reason: str = ""
    #: Unavailable only for environment variables its plugin declared (``requires_env``) with nothing better from
    #: the plugin's check: a call still reaches the handler, which may say how to set it up (as in Hermes Agent).
    handler_decides: bool = False
