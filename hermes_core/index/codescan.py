"""The tools a plugin's code registers, read from its source without running it (``ctx.register_tool(name=...)``
calls), for a wheel whose manifest declares none."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Final

__all__ = ["registered_tool_names"]

#: Source files larger than this are not parsed (a generated module is no plugin's registration code).
MAX_SOURCE_CHARS: Final = 1_000_000


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` assignments."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.update({target.id: node.value.value for target in node.targets if isinstance(target, ast.Name)})
    return found


def _tool_name(call: ast.Call, constants: dict[str, str]) -> str | None:
    given = next((k.value for k in call.keywords if k.arg == "name"), call.args[0] if call.args else None)
    if isinstance(given, ast.Constant) and isinstance(given.value, str):
        return given.value
    if isinstance(given, ast.Name):
        return constants.get(given.id)
    return None


def registered_tool_names(sources: Iterable[str]) -> list[str]:
    """Names given as text (or a module-level text constant) to ``register_tool`` in ``sources``, in order; a
    source that does not parse is skipped."""
    names: dict[str, None] = {}
    for source in sources:
        if len(source) > MAX_SOURCE_CHARS:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        constants = _constants(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "register_tool":
                name = _tool_name(node, constants)
                if name:
                    names.setdefault(name, None)
    return list(names)
