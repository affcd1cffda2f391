"""The process's standard streams survive plugin code: a plugin that replaces ``sys.stdout`` at import (a
logger, a progress bar, a capture it never undoes) would otherwise silence every command after it."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

__all__ = ["kept_streams"]

_NAMES = ("stdin", "stdout", "stderr")


@contextlib.contextmanager
def kept_streams() -> Iterator[list[str]]:
    """Run the block, then put back any of ``sys.stdin``/``stdout``/``stderr`` it replaced; the list it gives
    is filled with the names of those that were replaced."""
    saved = {name: getattr(sys, name) for name in _NAMES}
    replaced: list[str] = []
    try:
        yield replaced
    finally:
        for name, stream in saved.items():
            if getattr(sys, name) is not stream:
                setattr(sys, name, stream)
                replaced.append(f"sys.{name}")
