"""The CLI's JSON text: what ``json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str)`` writes,
written without the standard encoder's generators (it is pure Python once indented: a listing of thousands of tools
spent more time there than in reading them)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from json.encoder import INFINITY, encode_basestring
from typing import Any

__all__ = ["indented_json"]


def _number(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (INFINITY, -INFINITY):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _key(key: object) -> str:
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return {None: "null", True: "true", False: "false"}[key]
    if isinstance(key, int):
        return int.__repr__(key)
    if isinstance(key, float):
        return _number(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


_SCALARS: dict[type, Callable[[Any], str]] = {
    type(None): lambda _: "null", bool: lambda value: "true" if value else "false", str: encode_basestring,
    int: int.__repr__, float: _number}


def indented_json(data: Any) -> str:
    """``data`` as two-space indented JSON with sorted keys, non-ASCII kept, anything else written as its ``str``."""
    parts: list[str] = []
    add = parts.append
    scalars = _SCALARS

    def write(value: Any, margin: str) -> None:
        scalar = scalars.get(type(value))
        if scalar is not None:
            add(scalar(value))
        elif isinstance(value, dict | list | tuple):
            if not value:
                add("{}" if isinstance(value, dict) else "[]")
                return
            inner = margin + "  "
            between = ",\n" + inner
            is_dict = isinstance(value, dict)
            items: Iterable[Any] = sorted(value.items()) if isinstance(value, dict) else value
            add("{\n" + inner if is_dict else "[\n" + inner)
            for index, item in enumerate(items):
                if index:
                    add(between)
                if is_dict:
                    key, item = item
                    add(encode_basestring(key if type(key) is str else _key(key)) + ": ")
                known = scalars.get(type(item))
                if known is not None:
                    add(known(item))
                else:
                    write(item, inner)
            add("\n" + margin + ("}" if is_dict else "]"))
        elif isinstance(value, str):
            add(encode_basestring(value))
        elif isinstance(value, int):  # an IntEnum: its number, as json writes it
            add(int.__repr__(value))
        elif isinstance(value, float):
            add(_number(value))
        else:
            write(str(value), margin)

    write(data, "")
    return "".join(parts)
