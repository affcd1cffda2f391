"""Tool-call arguments: parse, coerce safely to the schema's types, and report every problem at once."""

from __future__ import annotations

import json
from typing import Any

from ..errors import ArgumentError

__all__ = ["ArgumentError", "ArgumentValidator", "frozen_copy", "parse_arguments", "without_absent"]


def parse_arguments(raw: Any) -> dict[str, Any]:
    """A dict as is, a JSON object text decoded, ``None`` or blank text as ``{}``."""
    if isinstance(raw, dict):
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, str | bytes):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ArgumentError([f"arguments are not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]) \
                from None
        except UnicodeDecodeError as exc:
            raise ArgumentError([f"arguments are not valid UTF-8: {exc.reason} at byte {exc.start}"]) from None
        except RecursionError:
            raise ArgumentError(["arguments are nested too deeply"]) from None
        if isinstance(value, dict):
            return value
        raise ArgumentError([f"arguments must be a JSON object, got {_json_type(value)}"])
    raise ArgumentError([f"arguments must be a JSON object, got {type(raw).__name__}"])


_SCALARS = frozenset({str, int, float, bool, type(None)})


def frozen_copy(value: Any) -> Any:
    """A copy of JSON data (dicts with string keys, lists or tuples, and scalars) that shares nothing with ``value``:
    whoever holds the original (a hook's own thread) cannot change the copy. Anything else raises
    :class:`ArgumentError`."""
    try:
        return _copy(value)
    except RecursionError:
        raise ArgumentError(["arguments are nested too deeply"]) from None
    except RuntimeError:  # a dict or list changed size while it was read
        raise ArgumentError(["the arguments were being changed while they were read"]) from None


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        copied = {}
        for key, item in value.items():
            if type(key) is not str:
                raise ArgumentError([f"argument names must be strings, not {type(key).__name__}"])
            copied[key] = item if type(item) in _SCALARS else _copy(item)
        return copied
    if kind is list or kind is tuple:
        return [item if type(item) in _SCALARS else _copy(item) for item in value]
    if kind in _SCALARS:
        return value
    raise ArgumentError([f"arguments must be JSON data, not a {kind.__name__}"])


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
    "null": (type(None),),
}
_EXACT_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,), "array": (list,),
    "object": (dict,), "null": (type(None),),
}
_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}
# Keywords that the fast top-level check does not cover; a schema using them is also run through jsonschema.
_SHALLOW_KEYWORDS = frozenset({"type", "description", "title", "default", "examples", "enum"})


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    for name in ("string", "integer", "number", "array", "object", "null"):
        if isinstance(value, _PY_TYPES[name]):
            return name
    return type(value).__name__


def _matches(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _PY_TYPES.get(kind, object))


def _coerce(value: Any, kind: str) -> tuple[bool, Any]:
    """Safe conversions only: numeric text, boolean words, JSON text for arrays and objects."""
    if isinstance(value, str):
        text = value.strip()
        if kind == "integer":
            try:
                return True, int(text)
            except ValueError:
                return False, value
        if kind == "number":
            try:
                number = float(text)
            except ValueError:
                return False, value
            return True, int(number) if number.is_integer() and "." not in text and "e" not in text.lower() \
                else number
        if kind == "boolean" and text.lower() in _TRUE | _FALSE:
            return True, text.lower() in _TRUE
        if kind in ("array", "object") and text[:1] in "[{":
            try:
                decoded = json.loads(text)
            except json.JSONDecodeError:
                return False, value
            return _matches(decoded, kind), decoded
        return False, value
    if kind == "string" and isinstance(value, int | float) and not isinstance(value, bool):
        return True, str(value)
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return True, int(value)
    return False, value


class ArgumentValidator:
    """Compiled once per tool: a fast top-level check and coercion, jsonschema for nested rules."""

    __slots__ = ("_all_declared", "_deep", "_exact", "_jsonschema", "_required_set", "allow_extra", "properties",
                 "required", "schema")

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema or {"type": "object"}
        props = self.schema.get("properties") or {}
        self.properties: dict[str, tuple[tuple[str, ...], frozenset[type] | None, list[Any] | None]] = {}
        deep = any(k not in {"type", "properties", "required", "additionalProperties", "description", "title",
                             "$schema"} for k in self.schema)
        for name, spec in props.items():
            spec = spec if isinstance(spec, dict) else {}
            raw = spec.get("type", ())
            kinds = (raw,) if isinstance(raw, str) else tuple(raw)
            # exact Python types that pass without further thought (bool is not an integer here)
            exact = frozenset(t for kind in kinds for t in _EXACT_TYPES.get(kind, ())) if kinds else None
            self.properties[name] = (kinds, exact, spec.get("enum"))
            deep = deep or any(key not in _SHALLOW_KEYWORDS for key in spec)
        self.required: tuple[str, ...] = tuple(self.schema.get("required") or ())
        self.allow_extra = self.schema.get("additionalProperties", True) is not False
        self._deep = deep
        self._jsonschema: Any = None
        self._required_set = frozenset(self.required)
        # the common case, checked without building anything: exact types, no enums, nothing nested
        simple = not deep and self.allow_extra and all(enum is None for _, _, enum in self.properties.values())
        self._exact: dict[str, frozenset[type]] | None = (
            {name: exact - {type(None)} for name, (_, exact, _) in self.properties.items() if exact is not None}
            if simple else None)
        #: How many arguments a call that gives each declared one has (-1 when a required one is not declared).
        self._all_declared = len(self._exact) if self._exact is not None and self._required_set <= self._exact.keys() \
            else -1

    def __call__(self, args: dict[str, Any]) -> dict[str, Any]:
        """The arguments, coerced where that is safe; raises :class:`ArgumentError` listing every problem."""
        exact = self._exact
        if exact is not None:
            try:  # every argument a declared one of an exact type (None is not one: it means "absent")
                for name, value in args.items():
                    if type(value) not in exact[name]:
                        break
                else:  # (every declared argument given: every required one is, when all are declared)
                    if len(args) == self._all_declared or args.keys() >= self._required_set:
                        return args
            except KeyError:  # an argument the schema does not declare, or declares without a type
                pass
        return self._check(args)

    def _check(self, args: dict[str, Any]) -> dict[str, Any]:
        args = without_absent(self.schema, args)  # a null for an optional argument means "absent" (strict mode)
        problems = [f"missing required argument {name!r}" for name in self.required if name not in args]
        coerced: dict[str, Any] | None = None
        for name, value in args.items():
            spec = self.properties.get(name)
            if spec is None:
                if not self.allow_extra:
                    problems.append(f"unexpected argument {name!r}")
                continue
            kinds, exact_types, enum = spec
            if exact_types is not None and type(value) not in exact_types \
                    and not any(_matches(value, kind) for kind in kinds):
                for kind in kinds:
                    ok, new_value = _coerce(value, kind)
                    if ok:
                        if coerced is None:
                            coerced = dict(args)
                        coerced[name] = value = new_value
                        break
                else:
                    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
                    problems.append(f"argument {name!r} must be {' or '.join(kinds)}, got {_json_type(value)} {shown}")
                    continue
            if enum is not None and value not in enum:
                problems.append(f"argument {name!r} must be one of {enum!r}, got {value!r}")
        result = args if coerced is None else coerced
        if self._deep and not problems:
            problems = self._deep_problems(result)
        if problems:
            raise ArgumentError(problems)
        return result

    def _deep_problems(self, args: dict[str, Any]) -> list[str]:
        if self._jsonschema is None:
            from jsonschema import Draft202012Validator

            self._jsonschema = Draft202012Validator(self.schema)
        return [
            f"argument {'.'.join(str(p) for p in error.absolute_path) or '(top level)'}: {error.message}"
            for error in sorted(self._jsonschema.iter_errors(args), key=lambda e: list(map(str, e.absolute_path)))
        ]


def without_absent(schema: dict[str, Any], value: Any) -> Any:
    """``value`` without the nulls that nested objects of ``schema`` hold for optional properties (the same
    object when there are none)."""
    if isinstance(value, dict):
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            return value
        required = schema.get("required") or ()
        changed = False
        kept: dict[str, Any] = {}
        for name, item in value.items():
            spec = properties.get(name)
            if item is None and spec is not None and name not in required:
                changed = True
                continue
            new = without_absent(spec, item) if isinstance(spec, dict) else item
            changed = changed or new is not item
            kept[name] = new
        return kept if changed else value
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = [without_absent(schema["items"], item) for item in value]
        return items if any(new is not old for new, old in zip(items, value, strict=True)) else value
    return value
