"""Tool names a model cannot be fooled by: MCP's characters only, and a warning for look-alikes.

A name is 1-64 of ``A-Z a-z 0-9 _ . -`` (MCP's rule), so a zero-width space, a Cyrillic ``а`` or a trailing
newline cannot make a second ``read_file``. Names that differ only in case, separators or look-alike
characters (``Read_File``, ``read-file``, ``rea1_file``) are allowed, with a warning: a model may call the
wrong one.
"""

from __future__ import annotations

import functools
import re
from typing import Final

__all__ = ["BRIDGE_TOOL_NAMES", "TOOL_NAME", "check_tool_name", "skeleton"]

TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: Tool search's bridge tools (``hermes_core.tools.search``): reserved, no plugin registers a tool of these names.
BRIDGE_TOOL_NAMES: Final = frozenset({"tool_search", "tool_describe", "tool_call"})
_LOOK_ALIKE: Final = str.maketrans({"-": "_", ".": "_", "0": "o", "1": "l", "i": "l", "|": "l"})
_ASCII_LOOK_ALIKE: Final = bytes.maketrans(b"-.01i|", b"__olll")


def check_tool_name(name: object) -> str:
    """``name`` if it is a valid tool name; ``ValueError`` naming the offending character otherwise."""
    if not isinstance(name, str):
        raise ValueError(f"a tool name must be a string, not {type(name).__name__}")
    if TOOL_NAME.fullmatch(name):
        return name
    if not 1 <= len(name) <= 64:
        raise ValueError(f"tool name {name!r} must be 1 to 64 characters, not {len(name)}")
    import unicodedata  # only to name the character refused

    index, char = next((i, c) for i, c in enumerate(name) if not TOOL_NAME.fullmatch(c))
    what = unicodedata.name(char, f"U+{ord(char):04X}")
    raise ValueError(f"tool name {name!r} has {what} (U+{ord(char):04X}) at position {index}; a tool name may hold "
                     "only letters A-Z and a-z, digits, '_', '.' and '-'")


@functools.lru_cache(maxsize=16384)
def skeleton(name: str) -> str:
    """What ``name`` looks like: equal skeletons are names a reader (or a model) may take for each other."""
    if name.isascii():  # registered names are: a byte table maps them several times faster
        return name.lower().encode().translate(_ASCII_LOOK_ALIKE).decode().replace("rn", "m").replace("vv", "w")
    import unicodedata

    name = unicodedata.normalize("NFKC", name)
    return name.casefold().translate(_LOOK_ALIKE).replace("rn", "m").replace("vv", "w")
