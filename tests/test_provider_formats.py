"""get_tool_definitions(format=..., strict=...): each provider's definition format, OpenAI strict mode, and a
null for an optional argument meaning "absent" for every tool."""

from __future__ import annotations

import json
import logging
from typing import Any

import mcp.types
import pytest
from google.genai import types as gemini
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import TypeAdapter

from hermes_core import FORMATS, Runtime
from hermes_core.tools.formats import NotStrictError, strict_schema

SEARCH = {"description": "Search the notes", "parameters": {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "description": "What to look for"},
        "limit": {"type": "integer", "default": 10, "minimum": 1},
        "sort": {"type": "string", "enum": ["date", "relevance"]},
        "filters": {"type": "object", "properties": {"tag": {"type": "string"}, "after": {"type": "string",
                                                                                        "format": "date"}},
                    "required": ["tag"]},
        "paths": {"type": "array", "items": {"type": "string", "format": "uri"}, "uniqueItems": True},
    },
    "required": ["query"],
}}


def echo(args: dict[str, Any], **kwargs: Any) -> str:
    return json.dumps(args, sort_keys=True)


@pytest.fixture
def runtime() -> Runtime:
    runtime = Runtime(entry_points=[])
    runtime.register_tool("search_notes", "notes", SEARCH, echo)
    return runtime


def only(definitions: list[dict[str, Any]]) -> dict[str, Any]:
    [definition] = definitions
    return definition


# -- the formats ---------------------------------------------------------------------------------------------


def test_openai_is_todays_chat_completions_shape(runtime):
    definition = only(runtime.get_tool_definitions())

    assert definition == {"type": "function", "function": {"name": "search_notes", **SEARCH}}
    TypeAdapter(ChatCompletionFunctionToolParam).validate_python(definition)


def test_openai_responses_is_flat_and_always_says_whether_it_is_strict(runtime):
    definition = only(runtime.get_tool_definitions(format="openai-responses"))

    assert definition == {"type": "function", "name": "search_notes", **SEARCH, "strict": False}
    TypeAdapter(FunctionToolParam).validate_python(definition)


def test_anthropic_has_an_input_schema(runtime):
    assert only(runtime.get_tool_definitions(format="anthropic")) == {
        "name": "search_notes", "description": SEARCH["description"], "input_schema": SEARCH["parameters"]}


def test_gemini_is_a_function_declaration_with_the_json_schema(runtime):
    declaration = gemini.FunctionDeclaration.model_validate(only(runtime.get_tool_definitions(format="gemini")))

    assert declaration.name == "search_notes" and declaration.parameters_json_schema == SEARCH["parameters"]


def test_mcp_is_what_an_mcp_tool_validates_from(runtime):
    tool = mcp.types.Tool.model_validate(only(runtime.get_tool_definitions(format="mcp")))

    assert (tool.name, tool.description, tool.input_schema) == ("search_notes", SEARCH["description"],
                                                                SEARCH["parameters"])


def test_an_unknown_format_names_the_formats(runtime):
    with pytest.raises(ValueError, match="unknown tool definition format 'claude'") as raised:
        runtime.get_tool_definitions(format="claude")

    assert all(repr(name) in str(raised.value) for name in FORMATS)


@pytest.mark.parametrize("format", ["anthropic", "gemini", "mcp"])
def test_strict_is_refused_for_formats_without_a_strict_mode(runtime, format):
    with pytest.raises(ValueError, match=f"strict=True applies to the OpenAI formats .* not to '{format}'"):
        runtime.get_tool_definitions(format=format, strict=True)


@pytest.mark.parametrize("format", FORMATS)
def test_toolset_filters_and_description_patches_apply_in_every_format(runtime, format):
    runtime.register_tool("execute_code", "code", {"description": "Run a script. It may call search_notes."}, echo)

    definitions = runtime.get_tool_definitions(enabled_toolsets=["code"], format=format)

    [definition] = definitions
    flat = definition.get("function", definition)
    assert flat["name"] == "execute_code"
    assert "search_notes" not in flat["description"].split("from hermes_tools import ...")[0]


def test_the_module_level_function_takes_the_format():
    import hermes_core

    hermes_core.default_runtime().register_tool("search_notes", "notes", SEARCH, echo)

    assert only(hermes_core.get_tool_definitions(format="anthropic"))["input_schema"] == SEARCH["parameters"]


# -- strict mode -----------------------------------------------------------------------------------------------


def objects(schema: Any) -> list[dict[str, Any]]:
    """Every object schema inside ``schema``."""
    found = []
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "object" in (schema.get("type") or []):
            found.append(schema)
        for value in schema.values():
            found += objects(value)
    elif isinstance(schema, list):
        for value in schema:
            found += objects(value)
    return found


@pytest.mark.parametrize("format", ["openai", "openai-responses"])
def test_strict_closes_every_object_requires_every_property_and_makes_optional_ones_nullable(runtime, format):
    definition = only(runtime.get_tool_definitions(format=format, strict=True))
    flat = definition.get("function", definition)
    parameters = flat["parameters"]

    assert flat["strict"] is True
    for schema in objects(parameters):
        assert schema["additionalProperties"] is False
        assert schema["required"] == list(schema["properties"])
    properties = parameters["properties"]
    assert properties["query"] == {"type": "string", "description": "What to look for"}  # required: not nullable
    assert properties["limit"] == {"type": ["integer", "null"], "minimum": 1, "description": "(default: 10)"}
    assert properties["sort"] == {"type": ["string", "null"], "enum": ["date", "relevance", None]}
    assert properties["filters"]["type"] == ["object", "null"]
    assert properties["filters"]["properties"] == {"tag": {"type": "string"},
                                                   "after": {"type": ["string", "null"], "format": "date"}}
    assert properties["paths"] == {"type": ["array", "null"], "items": {"type": "string"}}


def test_strict_conversion_leaves_the_tools_own_schema_alone(runtime):
    runtime.get_tool_definitions(strict=True)

    assert only(runtime.get_tool_definitions())["function"]["parameters"] == SEARCH["parameters"]


@pytest.mark.parametrize("schema, expected", [
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]},
     {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}),
    ({"anyOf": [{"type": "string"}, {"type": "null"}]}, {"anyOf": [{"type": "string"}, {"type": "null"}]}),
    ({"$ref": "#/$defs/Point"}, {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]}),
    ({"const": "x"}, {"anyOf": [{"const": "x"}, {"type": "null"}]}),
    ({"enum": [1, 2]}, {"enum": [1, 2, None]}),
    ({"type": ["string", "null"]}, {"type": ["string", "null"]}),
    ({"allOf": [{"$ref": "#/$defs/Point"}], "description": "Where"},
     {"type": ["object", "null"], "properties": {"x": {"type": "number"}}, "required": ["x"],
      "additionalProperties": False, "description": "Where"}),
], ids=["anyOf", "anyOf-with-null", "ref", "const", "enum", "already-nullable", "pydantic-described-ref"])
def test_each_kind_of_optional_schema_becomes_nullable(schema, expected):
    parameters = {"type": "object", "properties": {"value": schema},
                  "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}}

    converted = strict_schema(parameters)

    assert converted["properties"]["value"] == expected
    assert converted["$defs"]["Point"]["additionalProperties"] is False


@pytest.mark.parametrize("schema, problem", [
    ({"type": "object", "additionalProperties": {"type": "string"}}, "allows additional properties"),
    ({"type": "object"}, "is an object without 'properties'"),
    ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, "uses 'oneOf'"),
    ({"allOf": [{"type": "string"}, {"minLength": 2}]}, "uses 'allOf'"),
    ({"type": "string", "not": {"const": ""}}, "uses 'not'"),
    ({"type": "array", "prefixItems": [{"type": "string"}]}, "uses 'prefixItems'"),
    ({"type": "array"}, "is an array without one 'items' schema"),
    ({"description": "anything at all"}, "has no type"),
    ({"$ref": "https://example.com/schema.json", "description": "remote"}, "only local references"),
    ({"type": "object", "properties": {"deep": {"type": "string", "if": {"const": "a"}}}}, "'value.deep' uses 'if'"),
], ids=["open-map", "free-form-object", "oneOf", "allOf", "not", "tuple", "array-without-items", "untyped",
        "remote-ref", "nested-conditional"])
def test_schemas_strict_mode_cannot_express_are_refused_with_the_place_and_the_reason(schema, problem):
    with pytest.raises(NotStrictError, match=problem) as raised:
        strict_schema({"type": "object", "properties": {"value": schema}})

    assert str(raised.value).startswith("property 'value")


def test_a_tool_that_cannot_be_made_strict_is_left_out_with_one_warning_naming_it(runtime, caplog):
    runtime.register_tool("set_headers", "http", {"description": "Set headers", "parameters": {
        "type": "object", "properties": {"headers": {"type": "object", "additionalProperties": {"type": "string"}}}}},
        echo)

    with caplog.at_level(logging.WARNING, logger="hermes_core.tools.formats"):
        first = runtime.get_tool_definitions(strict=True)
        second = runtime.get_tool_definitions(format="openai-responses", strict=True)

    assert [d["function"]["name"] for d in first] == ["search_notes"]
    assert [d["name"] for d in second] == ["search_notes"]
    assert [r.getMessage() for r in caplog.records] == [
        "tool 'set_headers' left out of the strict definitions: its schema cannot be made strict: property "
        "'headers' allows additional properties (free-form keys cannot be strict)"]
    assert "set_headers" in [d["function"]["name"] for d in runtime.get_tool_definitions()]


def test_a_tool_without_arguments_is_strict(runtime):
    runtime.register_tool("now", "clock", {"description": "The time"}, echo)

    definition = only(runtime.get_tool_definitions(enabled_toolsets=["clock"], strict=True))

    assert definition["function"]["parameters"] == {"type": "object", "properties": {}, "required": [],
                                                    "additionalProperties": False}


# -- a null for an optional argument means "absent" ----------------------------------------------------------


def test_nulls_for_optional_arguments_are_absent_for_every_tool(runtime):
    """What a strict-mode model sends for the arguments it leaves out; the handler never sees them."""
    result = runtime.handle_function_call("search_notes", {"query": "q", "limit": None, "sort": None,
                                                           "filters": {"tag": "t", "after": None}, "paths": None})

    assert json.loads(result) == {"query": "q", "filters": {"tag": "t"}}


def test_a_null_for_a_required_argument_is_still_an_error(runtime):
    error = json.loads(runtime.handle_function_call("search_notes", {"query": None}))

    assert error["problems"] == ["argument 'query' must be string, got null None"]


def test_nulls_inside_arrays_of_objects_are_absent_too(runtime):
    runtime.register_tool("tag_all", "notes", {"description": "Tag notes", "parameters": {
        "type": "object", "properties": {"notes": {"type": "array", "items": {
            "type": "object", "properties": {"id": {"type": "string"}, "tag": {"type": "string"}},
            "required": ["id"]}}}}}, echo)

    result = runtime.handle_function_call("tag_all", '{"notes": [{"id": "a", "tag": null}, {"id": "b", "tag": "x"}]}')

    assert json.loads(result) == {"notes": [{"id": "a"}, {"id": "b", "tag": "x"}]}


def test_a_null_for_an_optional_argument_that_allows_null_is_absent_as_well(runtime):
    runtime.register_tool("rename", "notes", {"description": "Rename", "parameters": {
        "type": "object", "properties": {"title": {"type": ["string", "null"]}}}}, echo)

    assert runtime.handle_function_call("rename", {"title": None}) == "{}"
