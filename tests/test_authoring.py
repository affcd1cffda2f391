"""``@hermes_core.tool``: a typed function's schema from its signature, and the function registered as a tool
imperatively (``ctx.register_tool(fn)``) or declared in ``plugin.yaml``, called through the full call path."""

from __future__ import annotations

import json
import textwrap
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

import hermes_core.plugin
from hermes_core.plugin import ToolError, tool, tool_spec

TOOLS_MODULE = '''
from __future__ import annotations

import asyncio
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from hermes_core.plugin import ToolError, tool


class Point(BaseModel):
    x: int
    y: int


@tool(toolset="geometry", emoji="📐", parallel_safe=True)
def distance(a: Point, b: Annotated[Point, Field(description="The other point.")],
             metric: Literal["euclid", "manhattan"] = "euclid") -> dict[str, float]:
    """How far apart two points are."""
    dx, dy = abs(a.x - b.x), abs(a.y - b.y)
    return {"distance": (dx * dx + dy * dy) ** 0.5 if metric == "euclid" else float(dx + dy)}


@tool
def shout(text: str, times: int = 1) -> str:
    """Upper-case text, repeated."""
    if not text:
        raise ToolError("text is empty: say what to shout")
    return " ".join([text.upper()] * times)


@tool(name="echo_point")
async def echo(point: Point) -> Point:
    """Give the point back."""
    await asyncio.sleep(0)
    return point


@tool
def broken(value: int) -> str:
    """Fails inside: a pydantic error of its own is not the model's mistake."""
    Point.model_validate({"x": "not a number", "y": value})
    return "unreachable"
'''


class Point(BaseModel):
    x: int


class Opaque:
    """No schema can describe it."""


def call(runtime, name: str, **args) -> object:
    return json.loads(runtime.handle_function_call(name, args))


# -- the schema --------------------------------------------------------------------------------


def test_parameters_come_from_type_hints_and_field_descriptions():
    @tool(toolset="weather")
    def forecast(city: Annotated[str, Field(description="Where.")], days: Annotated[int, Field(ge=1, le=7)] = 3,
                 unit: Literal["C", "F"] = "C", title: str | None = None) -> str:
        """Forecast the weather.

        Several days at most."""
        return city

    spec = tool_spec(forecast)

    assert spec is not None
    assert (spec.name, spec.toolset, spec.description) == \
        ("forecast", "weather", "Forecast the weather.\n\nSeveral days at most.")
    assert spec.parameters == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "city": {"type": "string", "description": "Where."},
            "days": {"type": "integer", "default": 3, "minimum": 1, "maximum": 7},
            "unit": {"type": "string", "enum": ["C", "F"], "default": "C"},
            # a parameter named like a JSON Schema keyword is still a property (titles are dropped, not it)
            "title": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["city"],
    }
    assert spec.reference.endswith(":test_parameters_come_from_type_hints_and_field_descriptions.<locals>.forecast")


def test_the_decorated_function_is_returned_unchanged():
    def plain(text: str) -> str:
        """Echo."""
        return text

    assert tool(plain) is plain
    assert plain("x") == "x"


def test_name_description_and_options_can_be_given():
    @tool(name="say", description="Say it.", path_args=["path"], max_result_size_chars=hermes_core.plugin.UNLIMITED)
    def whatever(path: str) -> str:
        return path

    spec = tool_spec(whatever)
    assert spec is not None
    assert (spec.name, spec.description, spec.path_args, spec.max_result_size_chars) == \
        ("say", "Say it.", ("path",), hermes_core.plugin.UNLIMITED)


def test_models_in_parameters_become_definitions():
    @tool
    def move(point: Point) -> str:
        """Move."""
        return ""

    spec = tool_spec(move)
    assert spec is not None
    assert spec.parameters["properties"]["point"] == {"$ref": "#/$defs/Point"}
    assert spec.parameters["$defs"]["Point"]["properties"] == {"x": {"type": "integer"}}


@pytest.mark.parametrize(("source", "message"), [
    ("def f(x: int) -> str:\n    return ''", "needs a description: give the function a docstring"),
    ("def f(*values: int) -> str:\n    '''Doc.'''", "parameter 'values' cannot be described"),
    ("def f(**options: int) -> str:\n    '''Doc.'''", "parameter 'options' cannot be described"),
    ("def f(x: int, /) -> str:\n    '''Doc.'''", "positional-only"),
])
def test_functions_that_cannot_be_tools_are_refused_at_decoration(source: str, message: str):
    namespace: dict = {}
    exec(source, namespace)

    with pytest.raises(TypeError, match=message):
        tool(namespace["f"])


def test_invalid_names_and_unknown_path_args_are_refused():
    def f(path: str) -> str:
        """Doc."""
        return path

    with pytest.raises(TypeError, match="tool name 'two words' has SPACE"):
        tool(name="two words")(f)
    with pytest.raises(TypeError, match="path_args names no parameter: file"):
        tool(path_args=["file"])(f)


def test_an_annotation_pydantic_cannot_describe_is_reported_naming_the_tool():
    @tool
    def use(thing: Opaque) -> str:
        """Use it."""
        return ""

    spec = tool_spec(use)
    assert spec is not None
    with pytest.raises(TypeError, match=r"tool 'use' \(.*\): its parameters cannot be described: .*Opaque"):
        _ = spec.parameters


# -- registered with ctx.register_tool(fn) -----------------------------------------------------


@pytest.fixture
def imperative(plugins):
    """A folder plugin whose register(ctx) registers the decorated functions alone."""
    plugins.folder("shapes", init=textwrap.dedent("""
        from .tools import broken, distance, echo, shout


        def register(ctx):
            for function in (distance, shout, echo, broken):
                ctx.register_tool(function)
    """), files={"tools.py": TOOLS_MODULE})
    runtime = plugins.runtime()
    runtime.load_plugins()
    record = runtime.plugin("shapes")
    assert record is not None and record.state == "loaded", record and record.reason
    return runtime


def test_register_tool_takes_a_decorated_function_alone(imperative):
    entry = imperative.registry.get("distance")

    assert (entry.toolset, entry.emoji, entry.parallel_safe, entry.plugin) == ("geometry", "📐", True, "shapes")
    assert entry.schema["description"] == "How far apart two points are."
    assert imperative.registry.get("shout").toolset == "shapes"  # no toolset given: the plugin's id
    assert imperative.registry.get("echo_point").is_async


def test_calls_validate_into_the_annotated_types_and_encode_the_result(imperative):
    assert call(imperative, "distance", a={"x": 0, "y": 0}, b={"x": 3, "y": 4}) == {"distance": 5.0}
    assert call(imperative, "distance", a={"x": 0, "y": 0}, b={"x": 3, "y": 4}, metric="manhattan") == \
        {"distance": 7.0}
    assert imperative.handle_function_call("shout", {"text": "hi", "times": "2"}) == "HI HI"
    assert call(imperative, "echo_point", point={"x": 1, "y": 2}) == {"x": 1, "y": 2}


def test_the_models_mistakes_are_listed_in_one_error(imperative):
    result = call(imperative, "distance", a={"x": 0}, b={"x": 1, "y": 1}, metric="chebyshev")

    assert result["error"].startswith("Invalid arguments for tool 'distance'")
    assert "metric" in result["error"]


def test_a_tool_error_is_the_message_the_model_gets(imperative):
    assert call(imperative, "shout", text="") == {"error": "text is empty: say what to shout"}


def test_a_validation_error_inside_the_function_is_the_functions_failure_not_the_models(imperative):
    result = call(imperative, "broken", value=1)

    assert "Invalid arguments" not in result["error"]
    assert result["error"].startswith("Tool 'broken' failed: ValidationError")


def test_keywords_beside_the_function_override_the_decorator(plugins):
    plugins.folder("over", init=textwrap.dedent("""
        from .tools import shout


        def register(ctx):
            ctx.register_tool(shout, toolset="loud", emoji="📢")
            ctx.register_tool(name="yell", toolset="loud", handler=shout)  # Hermes Agent's keywords
    """), files={"tools.py": TOOLS_MODULE})
    runtime = plugins.runtime()
    runtime.load_plugins()

    assert (runtime.registry.get("shout").toolset, runtime.registry.get("shout").emoji) == ("loud", "📢")
    assert runtime.registry.get("yell").schema["parameters"]["required"] == ["text"]
    assert runtime.handle_function_call("yell", {"text": "a"}) == "A"


def test_hermes_agents_signature_still_works(plugins):
    plugins.folder("classic", init=textwrap.dedent("""
        import json


        def register(ctx):
            ctx.register_tool(name="add", toolset="math",
                              schema={"name": "add", "description": "Add.",
                                      "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}},
                              handler=lambda args, **kw: json.dumps({"sum": args["a"] + 1}))
    """))
    runtime = plugins.runtime()
    runtime.load_plugins()

    assert call(runtime, "add", a=1) == {"sum": 2}


def test_an_undecorated_function_alone_fails_the_load_saying_what_to_do(plugins):
    plugins.folder("bare", init=textwrap.dedent("""
        def handler(args, **kwargs):
            return "x"


        def register(ctx):
            ctx.register_tool(handler)
    """))
    runtime = plugins.runtime()
    runtime.load_plugins()
    record = runtime.plugin("bare")

    assert record.state == "error"
    assert "must be decorated with @hermes_core.plugin.tool" in record.reason


# -- declared in plugin.yaml --------------------------------------------------------------------


def test_a_manifest_handler_that_names_a_decorated_function_calls_its_adapter(plugins):
    plugins.folder("declared", manifest=textwrap.dedent("""
        name: declared
        tools:
          - name: shout
            toolset: declared
            description: Upper-case text.
            parameters:
              type: object
              properties: {text: {type: string}, times: {type: integer}}
              required: [text]
            handler: .tools:shout
    """), init="", files={"tools.py": TOOLS_MODULE})
    runtime = plugins.runtime()
    runtime.load_plugins()

    assert runtime.plugin("declared").state == "declared"
    assert runtime.handle_function_call("shout", {"text": "hey", "times": 2}) == "HEY HEY"
    assert plugins.imported("declared")  # the handler's module imports the package first


def test_a_decorated_function_is_callable_in_a_unit_test_as_written():
    @tool
    def double(value: int) -> int:
        """Twice the value."""
        return value * 2

    assert double(4) == 8
    assert tool_spec(double).handler({"value": "4"}, task_id="t") == "8"


def test_tool_error_is_public():
    assert hermes_core.plugin.ToolError is ToolError and hermes_core.plugin.tool is tool
