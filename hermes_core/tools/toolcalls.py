"""The tool calls of every provider read into one shape, and the reply each provider expects back.

A call may be a dict or the provider SDK's own object (a pydantic model, or anything with the same
attributes): OpenAI Chat Completions tool calls, OpenAI Responses ``function_call`` items, Anthropic
``tool_use`` blocks, Gemini function calls (or the Parts that hold them) and the plain
``{"name", "arguments"}`` of Hermes Agent. Nothing here imports a provider SDK.

A reply carries the images of a result where its provider takes them in a tool result (Anthropic image blocks,
Responses ``input_image``, Gemini inline data); everywhere else the result's text names the saved file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal, NamedTuple, TypeAlias, TypedDict

from ..media import ATTACH_MAX_BYTES, Attachment, MediaStore, has_references

__all__ = [
    "AnthropicToolResult",
    "AnthropicToolUse",
    "ChatCompletionsToolCall",
    "ChatCompletionsToolMessage",
    "GeminiFunctionCall",
    "GeminiFunctionResponsePart",
    "PlainToolCall",
    "ResponsesFunctionCall",
    "ResponsesFunctionCallOutput",
    "ToolCall",
    "ToolCallLike",
    "ToolReply",
    "is_error_result",
    "read_tool_call",
    "read_tool_calls",
    "tool_reply",
]

#: The call shapes Hermes reads; ``plain`` is ``{"name", "arguments"}`` with an optional ``id``.
Provider = Literal["openai", "openai-responses", "anthropic", "gemini", "plain"]


# -- what comes in (documentation types: any object with these keys or attributes is read) -------------------


class ChatCompletionsFunction(TypedDict):
    name: str
    #: JSON text, as the model wrote it.
    arguments: str


class ChatCompletionsToolCall(TypedDict):
    """An OpenAI Chat Completions tool call (``message.tool_calls[i]``)."""

    id: str
    type: Literal["function"]
    function: ChatCompletionsFunction


class ResponsesFunctionCall(TypedDict):
    """An OpenAI Responses output item of type ``function_call``; ``call_id`` is the id hooks see."""

    type: Literal["function_call"]
    call_id: str
    name: str
    arguments: str


class AnthropicToolUse(TypedDict):
    """An Anthropic ``tool_use`` content block."""

    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]


class GeminiFunctionCall(TypedDict, total=False):
    """A Gemini function call (``response.function_calls[i]``, or a Part holding one as ``function_call``)."""

    name: str
    args: dict[str, Any]
    id: str | None


class PlainToolCall(TypedDict, total=False):
    """Hermes Agent's own shape: a name and the arguments (a dict or JSON text)."""

    name: str
    arguments: dict[str, Any] | str
    id: str


#: Anything ``run_tool_calls`` and ``answer_tool_calls`` accept: one of the shapes above, as a dict or as the
#: provider SDK's object. A value that is none of them becomes an error result in its place.
ToolCallLike: TypeAlias = (
    ChatCompletionsToolCall | ResponsesFunctionCall | AnthropicToolUse | GeminiFunctionCall | PlainToolCall | object
)


# -- what goes back ------------------------------------------------------------------------------------------


class ChatCompletionsToolMessage(TypedDict):
    """The reply to a Chat Completions (or plain) tool call: the next message of the conversation."""

    role: Literal["tool"]
    tool_call_id: str | None
    content: str


class ResponsesFunctionCallOutput(TypedDict):
    """The reply to a Responses function call: an input item of the next request (its output a list of
    ``input_text`` and ``input_image`` items when the result has images)."""

    type: Literal["function_call_output"]
    call_id: str | None
    output: str | list[dict[str, Any]]


class AnthropicToolResult(TypedDict):
    """The reply to an Anthropic tool-use block: a content block of the next user message (its content a list of
    a text block and image blocks when the result has images)."""

    type: Literal["tool_result"]
    tool_use_id: str | None
    content: str | list[dict[str, Any]]
    #: True when the result is Hermes' ``{"error": ...}``.
    is_error: bool


class GeminiFunctionResponse(TypedDict, total=False):
    id: str
    name: str
    #: The result when it is a JSON object (errors are ``{"error": ...}``), else ``{"output": text}``.
    response: dict[str, Any]
    #: The result's images, as ``inline_data`` parts.
    parts: list[dict[str, Any]]


class GeminiFunctionResponsePart(TypedDict):
    """The reply to a Gemini function call: a Part (``google.genai.types.Part.model_validate`` accepts it)."""

    function_response: GeminiFunctionResponse


#: What ``answer_tool_calls`` returns for each call: the reply its provider expects.
ToolReply: TypeAlias = (
    ChatCompletionsToolMessage | ResponsesFunctionCallOutput | AnthropicToolResult | GeminiFunctionResponsePart
)


# -- reading ---------------------------------------------------------------------------------------------------


class ToolCall(NamedTuple):
    """One call, whatever its provider: what to run, the id to answer, and why it cannot run if it cannot."""

    provider: Provider
    name: str
    #: As the provider sent them: JSON text, a dict, or None.
    arguments: Any
    #: The id the reply must carry (Chat Completions ``id``, Responses ``call_id``, Anthropic ``id``, Gemini ``id``).
    id: str | None
    #: Why the call cannot be run (then it is answered with this error), else None.
    problem: str | None = None


_EXPECTED = ("expected an OpenAI tool call, an OpenAI Responses function_call, an Anthropic tool_use block, a Gemini "
             "function call or {name, arguments}")


def _field(value: object, key: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(key)
    return getattr(value, key, None)


def _has(value: object, key: str) -> bool:
    return key in value if isinstance(value, Mapping) else hasattr(value, key)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _describe(value: object) -> str:
    kind = _field(value, "type")
    of_type = f" of type {kind!r}" if isinstance(kind, str) else ""
    if isinstance(value, Mapping):
        keys = ", ".join(repr(str(key)) for key in list(value)[:6])
        return f"a dict{of_type} with keys {keys}" if keys else "an empty dict"
    return f"a {type(value).__name__}{of_type}"


def read_tool_call(call: object) -> ToolCall:
    """``call`` in Hermes' one shape; never raises (a call it cannot read carries a ``problem``)."""
    kind = _field(call, "type")
    if kind == "function_call":
        return _named(call, "openai-responses", _field(call, "name"), _field(call, "arguments"),
                      _field(call, "call_id"))
    if kind == "tool_use":
        return _named(call, "anthropic", _field(call, "name"), _field(call, "input"), _field(call, "id"))
    function = _field(call, "function")
    if kind in (None, "function") and function is not None:
        return _named(call, "openai", _field(function, "name"), _field(function, "arguments"), _field(call, "id"))
    if kind is None:
        part = _field(call, "function_call")
        if part is None:
            part = _field(call, "functionCall")
        if part is not None:
            return _named(call, "gemini", _field(part, "name"), _field(part, "args"), _field(part, "id"))
        if _has(call, "args"):
            return _named(call, "gemini", _field(call, "name"), _field(call, "args"), _field(call, "id"))
        if _has(call, "name"):
            return _named(call, "plain", _field(call, "name"), _field(call, "arguments"), _field(call, "id"))
    provider: Provider = "openai-responses" if _has(call, "call_id") else \
        "anthropic" if isinstance(kind, str) and kind.endswith("tool_use") else "openai"
    call_id = _field(call, "call_id") if provider == "openai-responses" else _field(call, "id")
    return ToolCall(provider, "", None, _text(call_id),
                    f"Not a tool call Hermes can run: {_describe(call)}; {_EXPECTED}")


#: Content a model returns beside its tool calls, which is never a call: Anthropic's text and thinking blocks
#: (``response.content``) and OpenAI Responses' message and reasoning items (``response.output``).
NOT_CALLS = frozenset({"text", "thinking", "redacted_thinking", "message", "reasoning"})


def read_tool_calls(calls: Iterable[object]) -> list[ToolCall]:
    """The calls among ``calls`` in Hermes' one shape: a whole ``response.content`` or ``response.output`` may be
    given, whose text, thinking, message and reasoning items are left out (they need no answer)."""
    return [read_tool_call(call) for call in calls if _field(call, "type") not in NOT_CALLS]


def _named(call: object, provider: Provider, name: Any, arguments: Any, call_id: Any) -> ToolCall:
    if not _text(name):
        return ToolCall(provider, "", arguments, _text(call_id),
                        f"The tool call has no tool name: {_describe(call)}; {_EXPECTED}")
    return ToolCall(provider, name, arguments, _text(call_id))


# -- replying ------------------------------------------------------------------------------------------------


def is_error_result(text: str) -> bool:
    """Whether a tool result is Hermes' error JSON (``{"error": "..."}``)."""
    if not text.startswith("{") or '"error"' not in text:
        return False
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and isinstance(value.get("error"), str) and bool(value["error"])


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def tool_reply(call: ToolCall, result: str, media: MediaStore | None = None) -> ToolReply:
    """The item that answers ``call`` with ``result`` in its provider's own format; with ``media`` (the runtime's
    media folder), the images the result's reference lines name are attached where the provider takes them."""
    if call.provider == "openai":
        return {"role": "tool", "tool_call_id": call.id, "content": result}  # text only: the text names the file
    images = [found for found in media.attachments(result, ("image",), ATTACH_MAX_BYTES) if found.attachable_image()] \
        if media is not None and has_references(result) else []
    if call.provider == "openai-responses":
        if images:
            return {"type": "function_call_output", "call_id": call.id, "output": [
                {"type": "input_text", "text": result},
                *({"type": "input_image", "image_url": _data_url(image), "detail": "auto"} for image in images)]}
        return {"type": "function_call_output", "call_id": call.id, "output": result}
    if call.provider == "anthropic":
        content: str | list[dict[str, Any]] = [{"type": "text", "text": result}, *(
            {"type": "image", "source": {"type": "base64", "media_type": image.saved.mime_type,
                                         "data": image.base64}} for image in images)] if images else result
        return {"type": "tool_result", "tool_use_id": call.id, "content": content,
                "is_error": is_error_result(result)}
    if call.provider == "gemini":
        parsed = _json_object(result)
        response: GeminiFunctionResponse = {"name": call.name,
                                            "response": {"output": result} if parsed is None else parsed}
        if images:
            response["parts"] = [{"inline_data": {"mime_type": image.saved.mime_type, "data": image.base64}}
                                 for image in images]
        if call.id is not None:
            response = {"id": call.id, **response}
        return {"function_response": response}
    return {"role": "tool", "tool_call_id": call.id, "content": result}


def _data_url(image: Attachment) -> str:
    return f"data:{image.saved.mime_type};base64,{image.base64}"
