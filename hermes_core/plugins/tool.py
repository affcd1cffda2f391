"""``@tool``: a typed function as a Hermes tool — its schema derived from the signature, its handler an adapter.

The function stays what it was (call it directly in a unit test); :func:`tool_spec` gives what Hermes needs:
the name, toolset and description, the JSON Schema of the parameters (pydantic's, from the type hints and
``Annotated[..., Field(description=...)]``), and ``handler(args: dict, **context) -> str``, which validates the
model's arguments with pydantic, calls the function and encodes its result as JSON text.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar, cast, overload

from pydantic import TypeAdapter, ValidationError
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import ArgsKwargs, to_jsonable_python

from ..errors import ToolError
from ..media import ToolResult
from ..tools.registry import NO_ANNOTATIONS, UNLIMITED, ResultLimit, ToolAnnotations
from ..tools.toolnames import check_tool_name

__all__ = ["ToolError", "ToolSpec", "tool", "tool_handler", "tool_spec"]

F = TypeVar("F", bound=Callable[..., Any])
#: The attribute ``@tool`` sets on the function it decorates.
ATTRIBUTE: Final = "__hermes_tool__"


class _ToolSchema(GenerateJsonSchema):
    """Without property titles (the parameter names again: noise for the model), in the order pydantic builds
    it (``type`` first, parameters as the signature has them), which reads best in ``plugin.yaml``."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def sort(self, value: Any, parent_key: str | None = None) -> Any:
        return value


def _arguments_of(function: Callable[..., Any], signature: inspect.Signature) -> Callable[..., dict[str, Any]]:
    """A stand-in with ``function``'s signature that returns the arguments it was given.

    pydantic validates a call and makes it in one step; validating against the stand-in first keeps the
    model's mistakes (invalid arguments) apart from whatever the function itself raises.
    """

    def arguments(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return dict(signature.bind(*args, **kwargs).arguments)

    arguments.__signature__ = signature  # type: ignore[attr-defined]
    arguments.__annotations__ = dict(getattr(function, "__annotations__", {}))
    arguments.__module__ = function.__module__
    arguments.__name__ = arguments.__qualname__ = function.__name__
    return arguments


@dataclass(frozen=True, eq=False)
class ToolSpec:
    """What ``@tool`` knows about one function; the manifest entry and the registry entry are made from it."""

    function: Callable[..., Any]
    name: str
    #: ``None``: the plugin's id (for a manifest entry, the manifest's ``name``).
    toolset: str | None
    description: str
    emoji: str = ""
    #: ``None``: whether the tool is read-only.
    parallel_safe: bool | None = None
    path_args: tuple[str, ...] = ()
    max_result_size_chars: ResultLimit = None
    annotations: ToolAnnotations = NO_ANNOTATIONS

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.function)

    @property
    def reference(self) -> str:
        """``module:qualname``, as a manifest's ``handler`` names it."""
        return f"{self.function.__module__}:{self.function.__qualname__}"

    @functools.cached_property
    def _adapter(self) -> TypeAdapter[Any]:
        signature = inspect.signature(self.function)
        try:
            return TypeAdapter(cast(Any, _arguments_of(self.function, signature)))
        except Exception as exc:  # pydantic's own message names the annotation it cannot use
            raise TypeError(f"tool {self.name!r} ({self.reference}): its parameters cannot be described: "
                            f"{exc}") from None

    @functools.cached_property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the function's parameters (an object schema)."""
        return self._adapter.json_schema(schema_generator=_ToolSchema)

    def validate(self, args: dict[str, Any]) -> dict[str, Any]:
        """The model's arguments converted to the annotated types; raises pydantic's ``ValidationError``."""
        return cast(dict[str, Any], self._adapter.validate_python(ArgsKwargs((), dict(args))))

    @functools.cached_property
    def handler(self) -> Callable[..., Any]:
        """``handler(args: dict, **context) -> str`` (a coroutine function for an ``async def``)."""
        if self.is_async:
            async def call_async(args: dict[str, Any], **_context: Any) -> str | ToolResult:
                try:
                    arguments = self.validate(args)
                except ValidationError as exc:
                    return self._invalid(exc)
                try:
                    return _encoded(await self.function(**arguments))
                except ToolError as exc:
                    return _error(str(exc))

            return call_async

        def call(args: dict[str, Any], **_context: Any) -> str | ToolResult:
            try:
                arguments = self.validate(args)
            except ValidationError as exc:
                return self._invalid(exc)
            try:
                return _encoded(self.function(**arguments))
            except ToolError as exc:
                return _error(str(exc))

        return call

    def _invalid(self, exc: ValidationError) -> str:
        problems = [f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg']}"
                    for error in exc.errors(include_url=False)]
        return _error(f"Invalid arguments for tool '{self.name}': {'; '.join(problems)}", problems=problems)


def _error(message: str, **extra: Any) -> str:
    """The shape of ``hermes_core.plugin.tool_error`` (the dispatcher, which also makes results valid text, is
    downstream of the loader that uses this module)."""
    return json.dumps({"error": message, **extra}, ensure_ascii=False)


def _encoded(result: Any) -> str | ToolResult:
    """Text as it is, a :class:`ToolResult` too (dispatch saves its media); anything else as JSON (pydantic encodes
    models, dataclasses, dates and the like)."""
    if isinstance(result, str | ToolResult):
        return result
    return json.dumps(to_jsonable_python(result), ensure_ascii=False)


def _check(function: Callable[..., Any], name: str, description: str, path_args: tuple[str, ...]) -> None:
    """Refuse at decoration what can never be a tool: the reason names the function."""
    where = f"@tool on {function.__module__}.{function.__qualname__}"
    try:
        check_tool_name(name)
    except ValueError as exc:
        raise TypeError(f"{where}: {exc}") from None
    if not description:
        raise TypeError(f"{where}: the model needs a description: give the function a docstring or pass "
                        "description=")
    parameters = inspect.signature(function).parameters
    for parameter in parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD, parameter.POSITIONAL_ONLY):
            raise TypeError(f"{where}: parameter {parameter.name!r} cannot be described to the model; a tool "
                            "function takes named parameters only (no *args, **kwargs or positional-only)")
    unknown = [arg for arg in path_args if arg not in parameters]
    if unknown:
        raise TypeError(f"{where}: path_args names no parameter: {', '.join(unknown)}")


@overload
def tool(function: F, /) -> F: ...


@overload
def tool(*, name: str | None = None, toolset: str | None = None, description: str | None = None, emoji: str = "",
         parallel_safe: bool | None = None, path_args: tuple[str, ...] | list[str] = (),
         max_result_size_chars: ResultLimit = None,
         annotations: ToolAnnotations | Mapping[str, Any] | None = None) -> Callable[[F], F]: ...


def tool(function: Callable[..., Any] | None = None, /, *, name: str | None = None, toolset: str | None = None,
         description: str | None = None, emoji: str = "", parallel_safe: bool | None = None,
         path_args: tuple[str, ...] | list[str] = (), max_result_size_chars: ResultLimit = None,
         annotations: ToolAnnotations | Mapping[str, Any] | None = None) -> Any:
    """Mark a typed function as a Hermes tool; the function itself is returned unchanged.

    ``name`` defaults to the function's name, ``toolset`` to the plugin's id, ``description`` to the
    docstring. Parameters come from the type hints (``Annotated[T, Field(description=...)]`` describes one).
    ``annotations`` say what it may do (``{"read_only": True}``; ``destructive``, ``idempotent``,
    ``open_world``); ``parallel_safe`` defaults to ``read_only``.
    Register it with ``ctx.register_tool(function)``, or declare it in ``plugin.yaml`` with ``hermes plugins
    compile``. The function returns text, or anything pydantic can encode as JSON; raising
    :class:`ToolError` fails the call with that message.
    """

    def decorate(function: F) -> F:
        where = f"@tool on {function.__module__}.{function.__qualname__}"
        try:
            declared = ToolAnnotations.of(annotations)
        except ValueError as exc:
            raise TypeError(f"{where}: {exc}") from None
        spec = ToolSpec(function, name or function.__name__, toolset,
                        description if description is not None else inspect.getdoc(function) or "",
                        emoji, parallel_safe, tuple(path_args), max_result_size_chars, declared)
        _check(function, spec.name, spec.description, spec.path_args)
        setattr(function, ATTRIBUTE, spec)
        return function

    return decorate(function) if function is not None else decorate


def tool_spec(function: Any) -> ToolSpec | None:
    """The :class:`ToolSpec` of a function decorated with ``@tool``, else None."""
    spec = getattr(function, ATTRIBUTE, None)
    return spec if isinstance(spec, ToolSpec) else None


def tool_handler(target: Any) -> Any:
    """What a manifest's ``handler`` reference calls: a decorated function's adapter, anything else as it is."""
    spec = tool_spec(target)
    return spec.handler if spec is not None else target


def manifest_limit(limit: ResultLimit) -> int | str | None:
    """``max_result_size_chars`` as ``plugin.yaml`` spells it."""
    return "unlimited" if limit is UNLIMITED else limit
