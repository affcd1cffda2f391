"""After filtering, make tool descriptions mention only tools that survived: a sentence that names a tool the scope
left out is dropped, and ``execute_code``'s description lists the tools a script may call."""

from __future__ import annotations

import keyword
import re
from collections.abc import Collection
from functools import lru_cache
from typing import Any

from ..calls.dispatch import INTERACTIVE_TOOLS

__all__ = ["SANDBOX_TOOL", "patch_definitions"]

#: The tool whose description lists the tools a script may call.
SANDBOX_TOOL = "execute_code"
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def patch_definitions(definitions: list[dict[str, Any]], surviving: Collection[str],
                      known: Collection[str]) -> list[dict[str, Any]]:
    """Drop sentences that mention known-but-filtered tools; list the script-callable tools for execute_code."""
    absent = set(known) - set(surviving)
    # a few absent names are looked for as text first (one scan): most descriptions hold none, and are not split
    # into words
    mention = _any_of(frozenset(absent)) if len(absent) <= 64 else None
    patched = []
    for definition in definitions:
        function = definition["function"]
        description = function.get("description") or ""
        name = function["name"]
        new = description
        if absent and (mention is None or mention.search(description)) and absent & _words(description) - {name}:
            new = " ".join(s for s in _SENTENCE.split(description) if not absent & _words(s))
        if name == SANDBOX_TOOL:
            callable_tools = sorted(t for t in surviving if t != SANDBOX_TOOL and t not in INTERACTIVE_TOOLS
                                    and t.isidentifier() and not keyword.iskeyword(t))
            new += ("\n\nTools the script can call (from hermes_tools import ...): "
                    + (", ".join(callable_tools) if callable_tools else "none"))
        if new != description:
            definition = {"type": "function", "function": {**function, "description": new}}
        patched.append(definition)
    return patched


@lru_cache(maxsize=64)
def _any_of(names: frozenset[str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(name) for name in sorted(names)))


@lru_cache(maxsize=8192)
def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text))
