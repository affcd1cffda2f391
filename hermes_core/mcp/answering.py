"""Answering an MCP server's questions: its elicitation requests go to the user (``ask_user``, one question per
field of its form, the answers checked against its schema), its sampling requests to the model (``ask_model``,
only when the user allowed sampling for that server, within its limits), and every refusal says why.

Runs on the MCP event loop; the user and the model are asked from a worker thread, in the calling tool's context
(:class:`~hermes_core.mcp.callers.Caller`), each with a deadline, so a server never waits without a bound.
"""

from __future__ import annotations

import collections
import json
import logging
import time
from collections.abc import Callable
from functools import partial
from typing import Any, Final

import anyio
import anyio.to_thread
import jsonschema
import mcp.types as types

from ..calls.asking import ModelReply, ModelRequest, UserQuestion
from ..config.model import McpServerConfig
from ..errors import NoAnswer
from .asking import ANSWER_CHARS
from .callers import Caller

__all__ = ["ServerQuestions"]

log = logging.getLogger(__name__)

#: What ``UserAnswer.of`` says when the user callback returned None.
_DECLINED: Final = "the user declined to answer"
#: The most fields a form may ask for, and the longest message of a server shown to the user.
MAX_FIELDS: Final = 20
MESSAGE_CHARS: Final = 4000
_YES, _NO = ("yes", "y", "true", "1"), ("no", "n", "false", "0")


class _InvalidAnswer(ValueError):
    """An answer that does not fit the server's form."""


class ServerQuestions:
    """One server's elicitation and sampling callbacks (``ClientSession``'s), for the connection's life."""

    def __init__(self, name: str, config: McpServerConfig, caller: Callable[[], Caller],
                 note: Callable[[str], None]) -> None:
        self.name = name
        self.config = config
        #: The answerers of the call the server asks about (the latest call in progress, else the runtime's).
        self.caller = caller
        self.note = note
        self._sampled: collections.deque[float] = collections.deque()

    # -- elicitation ---------------------------------------------------------------------------------

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        """The user's answer to the server's form or URL request; decline when nobody can be asked."""
        caller = self.caller()
        why = caller.who_answers_user()
        if why is not None:
            self.note(f"elicitation declined: {why}")
            return types.ElicitResult(action="decline")
        ask = partial(self._open_url, caller, params) if isinstance(params, types.ElicitRequestURLParams) \
            else partial(self._fill_form, caller, params)
        try:
            content = await anyio.to_thread.run_sync(ask, abandon_on_cancel=True)
        except NoAnswer as exc:
            action = "decline" if str(exc) == _DECLINED else "cancel"
            self.note(f"elicitation answered {action}: {exc}")
            return types.ElicitResult(action=action)
        except _InvalidAnswer as exc:
            self.note(f"elicitation cancelled: {exc}")
            log.warning("MCP server %r: the answer to its question was not sent: %s", self.name, exc)
            return types.ElicitResult(action="cancel")
        self.note("elicitation answered")
        return types.ElicitResult(action="accept", content=content)

    def _intro(self, message: str) -> str:
        return f"MCP server '{self.name}' asks: {message[:MESSAGE_CHARS]}"

    def _open_url(self, caller: Caller, params: types.ElicitRequestURLParams) -> None:
        """Whether the user agrees to open the server's address (they open it; Hermes does not)."""
        answer = caller.ask_user(UserQuestion(f"{self._intro(params.message)}\nOpen this address: {params.url}",
                                              ("open", "decline"), free_text=False, tool_name=caller.tool_name,
                                              session_id=caller.session_id))
        if answer.text != "open":
            raise NoAnswer(_DECLINED)

    def _fill_form(self, caller: Caller, params: types.ElicitRequestFormParams) -> dict[str, Any]:
        """The form the server asks for, one question per field, checked against its schema."""
        schema = params.requested_schema
        properties = schema.get("properties") or {}
        if not isinstance(properties, dict) or len(properties) > MAX_FIELDS:
            raise _InvalidAnswer(f"the form has {len(properties)} fields; Hermes asks at most {MAX_FIELDS}")
        required = set(schema.get("required") or ())
        intro = self._intro(params.message)
        if not properties:  # a confirmation
            caller.ask_user(UserQuestion(intro, ("ok",), free_text=False, tool_name=caller.tool_name,
                                         session_id=caller.session_id))
            return {}
        content: dict[str, Any] = {}
        for index, (key, spec) in enumerate(properties.items()):
            spec = spec if isinstance(spec, dict) else {}
            value = self._field(caller, intro if index == 0 else None, key, spec, key in required)
            if value is not None:
                content[key] = value
        try:
            jsonschema.validate(content, schema)
        except jsonschema.ValidationError as exc:
            raise _InvalidAnswer(f"the answer does not fit the server's form: {exc.message}") from None
        except jsonschema.SchemaError as exc:
            raise _InvalidAnswer(f"the server's form is not a valid schema: {exc.message}") from None
        return content

    def _field(self, caller: Caller, intro: str | None, key: str, spec: dict[str, Any], required: bool) -> Any:
        kind = spec.get("type")
        label = str(spec.get("title") or key) + (f" ({spec['description']})" if spec.get("description") else "")
        if "default" in spec:
            label += f" [default: {spec['default']}]"
        if not required:
            label += " (optional)"
        choices = _choices(spec.get("items") if kind == "array" else spec)
        if kind == "boolean":
            choices = {"yes": True, "no": False}
        question = UserQuestion(f"{intro}\n{label}" if intro else label, tuple(choices), kind == "array",
                                free_text=not choices or not required, tool_name=caller.tool_name,
                                session_id=caller.session_id)
        answer = caller.ask_user(question)
        text = answer.text[:ANSWER_CHARS]
        if kind == "array":
            picked = answer.selected or tuple(item.strip() for item in text.split(",") if item.strip())
            return [choices.get(item, item) for item in picked] if picked or required else None
        if not text:
            return spec.get("default")
        if text in choices:
            return choices[text]
        return _typed(key, kind, text)

    # -- sampling -----------------------------------------------------------------------------------

    async def sample(self, context: Any, params: types.CreateMessageRequestParams
                     ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
        """The model's reply to the server's sampling request, when the user allowed sampling for it."""
        settings = self.config.sampling_settings
        if settings is None:
            return self._refuse(f"sampling is off for MCP server '{self.name}' (the user can allow it: "
                                f"mcp_servers.{self.name}.sampling: allow)")
        now = time.monotonic()
        while self._sampled and now - self._sampled[0] > 60.0:
            self._sampled.popleft()
        if len(self._sampled) >= settings.max_rpm:
            return self._refuse(f"MCP server '{self.name}' made more than {settings.max_rpm} sampling requests "
                                "in a minute (mcp_servers.<name>.sampling.max_rpm)")
        self._sampled.append(now)
        caller = self.caller()
        why = caller.who_answers_model()
        if why is not None:
            return self._refuse(why)
        request = model_request(params, settings.max_tokens_cap, settings.model, settings.allowed_models,
                                caller.session_id)
        what = (f"sampling request: {len(request.messages)} messages, {len(request.tools)} tools, max_tokens "
                f"{request.max_tokens}, model {request.model or '(any)'}")
        log.info("MCP server %r %s", self.name, what)
        self.note(what)
        try:
            reply = await anyio.to_thread.run_sync(partial(caller.ask_model, request, settings.timeout),
                                                   abandon_on_cancel=True)
        except NoAnswer as exc:
            return self._refuse(str(exc))
        self.note(f"sampling answered by {reply.model or 'the model'}")
        return sampling_result(reply, bool(params.tools))

    def _refuse(self, reason: str) -> types.ErrorData:
        log.warning("MCP server %r: sampling request refused: %s", self.name, reason)
        self.note(f"sampling request refused: {reason}")
        return types.ErrorData(code=types.INVALID_REQUEST, message=f"Hermes refused the sampling request: {reason}")


def _choices(spec: Any) -> dict[str, Any]:
    """A field's choices, as the user sees them -> the value sent: ``enum`` (named by ``enumNames``), or ``oneOf``
    / ``anyOf`` of ``const`` values with titles."""
    if not isinstance(spec, dict):
        return {}
    if isinstance(spec.get("enum"), list):
        names = spec.get("enumNames")
        shown = names if isinstance(names, list) and len(names) == len(spec["enum"]) else spec["enum"]
        return {str(name): value for name, value in zip(shown, spec["enum"], strict=True)}
    options = spec.get("oneOf") or spec.get("anyOf")
    if isinstance(options, list):
        return {str(option.get("title") or option["const"]): option["const"] for option in options
                if isinstance(option, dict) and "const" in option}
    return {}


def _typed(key: str, kind: Any, text: str) -> Any:
    """A typed answer as the field's type."""
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
    except ValueError:
        raise _InvalidAnswer(f"{key!r} needs a {kind}, not {text[:40]!r}") from None
    if kind == "boolean":
        if text.lower() in _YES + _NO:
            return text.lower() in _YES
        raise _InvalidAnswer(f"{key!r} needs yes or no, not {text[:40]!r}")
    return text


def model_request(params: types.CreateMessageRequestParams, max_tokens_cap: int, model: str | None,
                  allowed_models: list[str], session_id: str | None) -> ModelRequest:
    """A sampling request as a model request: Chat Completions messages and tools, the server's max tokens within
    the cap, its first model hint (among the allowed ones) unless the user named a model."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": params.system_prompt}] \
        if params.system_prompt else []
    for message in params.messages:
        messages.extend(_chat_messages(message))
    hints = [hint.name for hint in (params.model_preferences.hints or []) if hint.name] \
        if params.model_preferences else []
    if allowed_models:
        hints = [hint for hint in hints if hint in allowed_models]
    tools = tuple({"type": "function", "function": {"name": tool.name, "description": tool.description or "",
                                                     "parameters": tool.input_schema}}
                  for tool in params.tools or ())
    return ModelRequest(tuple(messages), tools, min(params.max_tokens, max_tokens_cap), params.temperature,
                        model or (hints[0] if hints else None), "mcp_sampling", session_id)


def _chat_messages(message: types.SamplingMessage) -> list[dict[str, Any]]:
    blocks = message.content if isinstance(message.content, list) else [message.content]
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, types.TextContent):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, types.ImageContent):
            parts.append({"type": "image_url", "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"}})
        elif isinstance(block, types.AudioContent):
            parts.append({"type": "text", "text": f"[audio ({block.mime_type}), not passed on]"})
        elif isinstance(block, types.ToolUseContent):
            calls.append({"id": block.id, "type": "function",
                          "function": {"name": block.name, "arguments": json.dumps(block.input)}})
        elif isinstance(block, types.ToolResultContent):
            text = "\n".join(item.text for item in block.content if isinstance(item, types.TextContent))
            results.append({"role": "tool", "tool_call_id": block.tool_use_id, "content": text})
    out: list[dict[str, Any]] = list(results)
    if parts or calls:
        content: Any = parts[0]["text"] if len(parts) == 1 and parts[0]["type"] == "text" else parts or None
        chat: dict[str, Any] = {"role": message.role, "content": content}
        if calls:
            chat["tool_calls"] = calls
        out.append(chat)
    return out


_STOPS = {"length": "maxTokens", "max_tokens": "maxTokens", "tool_calls": "toolUse", "tool_use": "toolUse",
          "stop": "endTurn", "end_turn": "endTurn", "stop_sequence": "stopSequence"}


def sampling_result(reply: ModelReply, with_tools: bool
                    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools:
    """A model reply as the sampling result: text, and ``tool_use`` blocks when the server offered tools."""
    model = reply.model or "hermes"
    stop = _STOPS.get(reply.stop_reason or "", reply.stop_reason) or ("toolUse" if reply.tool_calls else "endTurn")
    if with_tools and reply.tool_calls:
        blocks: list[Any] = [types.TextContent(text=reply.text)] if reply.text else []
        for call in reply.tool_calls:
            arguments = call.arguments
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments or "{}")
                except ValueError:
                    arguments = {}
            blocks.append(types.ToolUseContent(id=call.id, name=call.name,
                                               input=arguments if isinstance(arguments, dict) else {}))
        return types.CreateMessageResultWithTools(role="assistant", content=blocks, model=model, stop_reason=stop)
    return types.CreateMessageResult(role="assistant", content=types.TextContent(text=reply.text), model=model,
                                     stop_reason=stop)
