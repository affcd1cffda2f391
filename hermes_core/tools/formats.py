"""Tool definitions in each provider's format, and the conversion of a schema to OpenAI strict mode.

Hermes keeps one definition per tool (``{"name", "description", "parameters"}``, JSON Schema parameters);
this module renders it for OpenAI Chat Completions, OpenAI Responses, Anthropic, Gemini and MCP. Nothing
here imports a provider SDK.
"""

from __future__ import annotations

import json
import logging
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..errors import NotStrictError

__all__ = ["FORMATS", "STRICT_FORMATS", "DefinitionFormatter", "NotStrictError", "check_format", "strict_schema"]

log = logging.getLogger(__name__)

#: The definition formats ``get_tool_definitions(format=...)`` knows.
FORMATS: Final = ("openai", "openai-responses", "anthropic", "gemini", "mcp")
#: The formats that have a strict mode.
STRICT_FORMATS: Final = ("openai", "openai-responses")

#: Keywords OpenAI strict mode accepts, kept as they are (after their subschemas are converted).
_KEPT = frozenset({"type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "$ref",
                   "$defs", "definitions", "description", "title", "pattern", "format", "multipleOf", "minimum",
                   "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems"})
#: Annotations and constraints strict mode refuses but Hermes still checks when the call arrives (dispatch
#: validates arguments against the tool's own schema), so leaving them out loses nothing.
_DROPPED = frozenset({"$schema", "$id", "$comment", "default", "examples", "deprecated", "readOnly", "writeOnly",
                      "minLength", "maxLength", "uniqueItems", "minProperties", "maxProperties", "contains",
                      "minContains", "maxContains", "propertyNames", "contentEncoding", "contentMediaType"})
#: The string formats strict mode knows; another ``format`` is dropped like a constraint.
_STRICT_STRING_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6",
                                    "uuid"})
_MAX_DEPTH = 32


def check_format(format: str, strict: bool) -> None:
    """Raise ``ValueError`` for an unknown format, or for ``strict`` with a format that has no strict mode."""
    if format not in FORMATS:
        raise ValueError(f"unknown tool definition format {format!r}; the formats are "
                         + ", ".join(repr(name) for name in FORMATS))
    if strict and format not in STRICT_FORMATS:
        raise ValueError(f"strict=True applies to the OpenAI formats ({', '.join(map(repr, STRICT_FORMATS))}), "
                         f"not to {format!r}")


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` (a tool's parameters) in OpenAI strict mode: ``additionalProperties: false`` on every object,
    every property required, the optional ones nullable. Raises :class:`NotStrictError` when that would change
    its meaning (free-form objects, ``oneOf``, ``allOf``, ``not``, tuples, conditionals, untyped values)."""
    parameters = dict(schema)
    parameters.setdefault("type", "object")
    if parameters["type"] != "object":
        raise NotStrictError((), "must be an object schema")
    return _strict(parameters, (), parameters, nullable=False, depth=0)


def _strict(schema: Any, path: tuple[str, ...], root: dict[str, Any], *, nullable: bool,
            depth: int) -> dict[str, Any]:
    if depth > _MAX_DEPTH:
        raise NotStrictError(path, f"nests deeper than {_MAX_DEPTH} levels")
    if not isinstance(schema, Mapping):
        raise NotStrictError(path, "is not a schema object (true/false schemas cannot be strict)")
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "allOf" and isinstance(value, list) and len(value) == 1:
            continue  # merged below: pydantic's way of attaching a description to a $ref
        if key in _DROPPED or (key == "format" and value not in _STRICT_STRING_FORMATS):
            continue
        if key not in _KEPT:
            raise NotStrictError(path, f"uses {key!r}, which OpenAI strict mode does not support")
        out[key] = value
    if "allOf" in schema and "allOf" not in out:
        out = {**_strict(schema["allOf"][0], (*path, "allOf[0]"), root, nullable=False, depth=depth + 1), **out}
    default = schema.get("default")
    if default is not None and "$ref" not in out:
        out["description"] = (str(out.get("description", "")) + f" (default: {json.dumps(default)})").strip()
    if "$ref" in out and len(out) > 1:
        out = _inlined(out, path, root, depth)
        return _nullable(out) if nullable else out
    for key in ("$defs", "definitions"):
        if isinstance(out.get(key), Mapping):
            out[key] = {name: _strict(sub, (*path, key, name), root, nullable=False, depth=depth + 1)
                        for name, sub in out[key].items()}
    types = _types(out)
    if "object" in types or "properties" in out:
        _strict_object(out, schema, path, root, depth)
    if "array" in types or "items" in out:
        items = out.get("items")
        if not isinstance(items, Mapping):
            raise NotStrictError(path, "is an array without one 'items' schema (tuples cannot be strict)")
        out["items"] = _strict(items, (*path, "items"), root, nullable=False, depth=depth + 1)
    if "anyOf" in out:
        out["anyOf"] = [_strict(member, (*path, f"anyOf[{index}]"), root, nullable=False, depth=depth + 1)
                        for index, member in enumerate(out["anyOf"])]
    if not types and not any(key in out for key in ("anyOf", "$ref", "enum", "const")):
        raise NotStrictError(path, "has no type (any value cannot be strict)")
    return _nullable(out) if nullable else out


def _strict_object(out: dict[str, Any], original: Mapping[str, Any], path: tuple[str, ...], root: dict[str, Any],
                   depth: int) -> None:
    extra = out.get("additionalProperties")
    properties = out.get("properties")
    if extra not in (None, False):
        raise NotStrictError(path, "allows additional properties (free-form keys cannot be strict)")
    if not isinstance(properties, Mapping):
        if extra is not False:
            raise NotStrictError(path, "is an object without 'properties' (free-form keys cannot be strict)")
        properties = {}
    required = set(original.get("required") or ())
    out["properties"] = {name: _strict(sub, (*path, name), root, nullable=name not in required, depth=depth + 1)
                         for name, sub in properties.items()}
    out["required"] = list(properties)
    out["additionalProperties"] = False
    out.setdefault("type", "object")


def _inlined(out: dict[str, Any], path: tuple[str, ...], root: dict[str, Any], depth: int) -> dict[str, Any]:
    """A ``$ref`` with sibling keywords (a description, say), replaced by what it refers to, siblings on top:
    strict mode allows a ``$ref`` no siblings."""
    reference = out.pop("$ref")
    target: Any = root
    if not isinstance(reference, str) or not reference.startswith("#/"):
        raise NotStrictError(path, f"refers to {reference!r}; only local references can be strict")
    for part in reference[2:].split("/"):
        target = target.get(part) if isinstance(target, Mapping) else None
    if not isinstance(target, Mapping):
        raise NotStrictError(path, f"refers to {reference!r}, which does not exist")
    return {**_strict(target, path, root, nullable=False, depth=depth + 1), **out}


def _types(schema: Mapping[str, Any]) -> list[str]:
    kind = schema.get("type")
    return [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also accepts ``null`` (the value an optional argument takes when it is absent)."""
    if "$ref" in schema or "const" in schema:
        return {"anyOf": [schema, {"type": "null"}]}
    if "anyOf" in schema:
        if not any(isinstance(m, Mapping) and "null" in _types(m) for m in schema["anyOf"]):
            schema["anyOf"] = [*schema["anyOf"], {"type": "null"}]
        return schema
    types = _types(schema)
    if types and "null" not in types:
        schema["type"] = [*types, "null"]
    if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
        schema["enum"] = [*schema["enum"], None]
    return schema


def _render(function: Mapping[str, Any], format: str, strict: dict[str, Any] | None) -> dict[str, Any]:
    name, description = function["name"], function.get("description") or ""
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    if format == "openai":
        if strict is None:
            return {"type": "function", "function": dict(function)}
        return {"type": "function",
                "function": {"name": name, "description": description, "parameters": strict, "strict": True}}
    if format == "openai-responses":  # the Responses API defaults `strict` to true: always say which
        return {"type": "function", "name": name, "description": description,
                "parameters": parameters if strict is None else strict, "strict": strict is not None}
    if format == "anthropic":
        return {"name": name, "description": description, "input_schema": parameters}
    if format == "gemini":
        return {"name": name, "description": description, "parameters_json_schema": parameters}
    return {"name": name, "description": description, "inputSchema": parameters}


class DefinitionFormatter:
    """Renders OpenAI-shaped definitions in any format; each tool's strict schema is converted once, and a tool
    that cannot be made strict is reported once (the tool entry, weakly held, is the key)."""

    def __init__(self) -> None:
        self._strict: weakref.WeakKeyDictionary[Any, dict[str, Any] | None] = weakref.WeakKeyDictionary()

    def render(self, definitions: Sequence[Mapping[str, Any]], owners: Sequence[Any], format: str = "openai",
               strict: bool = False) -> list[dict[str, Any]]:
        """``definitions`` (``{"type": "function", "function": {...}}``, one per owner: a tool entry) in
        ``format``; MCP definitions carry the owner's annotations as MCP's hints."""
        check_format(format, strict)
        if format == "openai" and not strict:
            return [dict(definition) for definition in definitions]
        rendered = []
        for definition, owner in zip(definitions, owners, strict=True):
            function = definition["function"]
            parameters = self._strict_parameters(owner, function) if strict else None
            if strict and parameters is None:
                continue
            rendered.append(_render(function, format, parameters))
            if format == "mcp" and (hints := owner.annotations.mcp()):
                rendered[-1]["annotations"] = hints
        return rendered

    def _strict_parameters(self, owner: Any, function: Mapping[str, Any]) -> dict[str, Any] | None:
        try:
            return self._strict[owner]
        except KeyError:
            pass
        try:
            parameters: dict[str, Any] | None = strict_schema(function.get("parameters") or {})
        except NotStrictError as exc:
            log.warning("tool %r left out of the strict definitions: its schema cannot be made strict: %s",
                        function["name"], exc)
            parameters = None
        self._strict[owner] = parameters
        return parameters
