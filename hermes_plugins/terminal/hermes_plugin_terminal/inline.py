"""Inline Python that is plainly harmless: ``python -c 'print(1)'`` computes and prints, so it need not ask.

Decided on the parsed code by an allow-list, never by looking for bad words: only names and modules that
cannot reach files, processes, the network or the interpreter's internals, no attribute starting with ``_``,
and nothing that turns text into code. Anything else is inline code that asks (``interpreter_code``).
"""

from __future__ import annotations

import ast
from typing import Final

__all__ = ["harmless_python"]

#: Longer code is not worth proving harmless: it asks.
MAX_CODE_CHARS: Final = 2_000
_BUILTINS: Final = frozenset({
    "print", "len", "sum", "min", "max", "sorted", "reversed", "range", "enumerate", "zip", "map", "filter", "any",
    "all", "abs", "round", "divmod", "pow", "int", "float", "complex", "str", "bytes", "bool", "list", "dict", "set",
    "frozenset", "tuple", "repr", "ascii", "format", "chr", "ord", "hex", "oct", "bin", "hash", "isinstance",
    "issubclass", "iter", "next", "slice", "True", "False", "None", "ValueError", "Exception", "KeyError",
    "TypeError", "IndexError", "ZeroDivisionError"})
#: Modules without a way to files, processes, the network or the interpreter (``sys`` and ``platform`` have one).
_MODULES: Final = frozenset({
    "math", "cmath", "json", "re", "datetime", "decimal", "fractions", "statistics", "itertools", "functools",
    "collections", "string", "textwrap", "hashlib", "base64", "binascii", "uuid", "operator", "struct",
    "unicodedata", "calendar", "zlib", "heapq", "bisect", "colorsys", "html", "secrets", "keyword", "difflib"})
#: Methods that write or reach out even on harmless modules' objects.
_ATTRIBUTES_REFUSED: Final = frozenset({"dump", "load", "loads_file", "open", "write", "system", "format_map"})
_NODES: Final = (
    ast.Module, ast.Expr, ast.Expression, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Name, ast.Load, ast.Store,
    ast.Constant, ast.Call, ast.keyword, ast.Attribute, ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.Dict,
    ast.Set, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.JoinedStr, ast.FormattedValue,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.comprehension, ast.For, ast.If, ast.Pass,
    ast.Break, ast.Continue, ast.Import, ast.ImportFrom, ast.alias, ast.Starred, ast.operator, ast.unaryop,
    ast.boolop, ast.cmpop, ast.expr_context)


def harmless_python(code: str) -> bool:
    """``code`` only computes and prints (nothing else it could do is in it)."""
    if len(code) > MAX_CODE_CHARS:
        return False
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    assigned = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    imported: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            return False  # a def, lambda, class, while loop, try, with, global...
        if isinstance(node, ast.Import):
            if any(alias.name not in _MODULES for alias in node.names):
                return False
            imported.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level or node.module not in _MODULES or any(alias.name == "*" for alias in node.names):
                return False
            imported.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Attribute):
            if node.attr.startswith("_") or node.attr in _ATTRIBUTES_REFUSED:
                return False
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                and node.id not in _BUILTINS | imported | assigned:
            return False
    return True
