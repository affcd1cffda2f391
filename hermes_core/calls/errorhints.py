"""``tools.error_hint``: a short hint added to every tool error telling the model how to recover (TinyElf's error
hints), off by default."""

from __future__ import annotations

import json
from typing import Any, Final

from ..tools.toolcalls import is_error_result

__all__ = ["DEFAULT_HINT", "hint_of", "with_hint"]

#: The hint ``tools.error_hint: true`` adds.
DEFAULT_HINT: Final = ("Read the error: fix the arguments or try another approach; do not repeat the same call "
                       "unchanged.")


def hint_of(setting: Any) -> str | None:
    """The hint a ``tools.error_hint`` setting asks for: ``true`` the default one, a text that text, else none."""
    if setting is True:
        return DEFAULT_HINT
    return setting.strip() or None if isinstance(setting, str) else None


def with_hint(result: str, hint: str) -> str:
    """``result`` with ``hint`` under its ``hint`` key when it is an error that has none; otherwise unchanged."""
    if not is_error_result(result):
        return result
    error = json.loads(result)
    if "hint" in error:
        return result
    return json.dumps({**error, "hint": hint}, ensure_ascii=False)
