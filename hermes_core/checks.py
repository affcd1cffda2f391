"""``Availability``: whether something (a tool, an execution backend) can run now, and if not, why."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Availability"]


class Availability(NamedTuple):
    """Whether it can run now, and if not, why."""

    available: bool
    reason: str = ""
