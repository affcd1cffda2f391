"""What a served call asks its MCP client: the user, through elicitation (``clarify``, approvals), the client's
model, through sampling with tools (``delegate_task``'s sub-agents), and progress notifications for the request.

A tool call runs on a worker thread; each question is sent on the request's own channel from the server's event
loop and waited for with a bound. A client that did not declare the capability is never asked: the call is told
why nobody can answer. An approval "for the session" is kept per client connection (its MCP session), so it never
covers another client's calls.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp.types as types
from mcp.shared.exceptions import MCPError
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from ..calls.asking import (
    MAX_TOKENS,
    MODEL_TIMEOUT,
    CallerCallbacks,
    ModelReply,
    ModelRequest,
    ModelToolCall,
    UserAnswer,
    UserQuestion,
)
from ..calls.progress import Progress
from ..errors import NoAnswer
from ..tools.toolcalls import is_error_result

__all__ = ["ClientAnswers"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: The longest answer text taken from a client (the model reads it).
ANSWER_CHARS: Final = 20_000
#: Seconds sending a notification to the client may take.
NOTIFY_TIMEOUT: Final = 10.0
_DECISIONS = {"once": "Allow once", "session": "Allow for this session", "always": "Always allow", "deny": "Deny"}


#: How a server's operator lets calls that need approval run for clients that cannot be asked.
ALLOW_HINT: Final = ("to let such calls run without asking, add their rule to command_allowlist (or set "
                     "approvals.mode: approve) in the config.yaml of the served home, or use an MCP client that "
                     "supports elicitation")


class ClientAnswers:
    """One client connection's answerers: what it approved for its session, and the callbacks of its requests."""

    def __init__(self, approval_timeout: Callable[[], float] = lambda: 60.0) -> None:
        self._approved: set[str] = set()
        self._lock = threading.Lock()
        #: ``approvals.timeout``: how long an approval question waits for the client's user.
        self._approval_timeout = approval_timeout

    def callbacks(self, ctx: Any, call_id: str) -> CallerCallbacks:
        """The callbacks of the call ``call_id`` that the request of ``ctx`` makes (from its handler, on the loop)."""
        request = _Request(ctx, anyio.lowlevel.current_token())
        meta = ctx.meta or {}
        wants_progress = meta.get("progress_token", meta.get("progressToken")) is not None
        why = request.why_not("elicitation")
        # without elicitation nobody is asked: never the server's own terminal, which is not the client's user
        return CallerCallbacks(user=why or request.ask_user, model=request.why_not("sampling") or request.ask_model,
                               approval=f"{why}, so its user cannot approve the call; {ALLOW_HINT}" if why
                               else (lambda question: self._approve(request, question)),
                               progress=request.progress(call_id) if wants_progress else None,
                               notify=request.notify)

    def _approve(self, request: _Request, question: Any) -> str:
        """Ask the client's user to approve; ``session`` is remembered here, for this connection only."""
        rule = question.rule_key
        with self._lock:
            if rule and rule in self._approved:
                return "once"
        decision = request.approve(question, self._approval_timeout())
        if decision == "session" and rule:
            with self._lock:
                self._approved.add(rule)
            return "once"  # (the runtime would remember it for every client of the server's session)
        return decision


class _Request:
    """One request of one client: its questions, sent from a worker thread through the server's event loop."""

    def __init__(self, ctx: Any, token: Any) -> None:
        self.ctx, self.token = ctx, token

    def why_not(self, capability: str) -> str | None:
        """Why this client cannot be asked through ``capability`` (None when it can)."""
        if self.ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return (f"the MCP client speaks protocol {self.ctx.protocol_version}, in which Hermes cannot ask it "
                    f"for {capability} in the middle of a call")
        wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability()) if capability == "elicitation" \
            else types.ClientCapabilities(sampling=types.SamplingCapability(tools=types.SamplingToolsCapability()))
        if not self.ctx.session.check_client_capability(wanted):
            return f"the MCP client did not declare the {capability} capability" + \
                (" with tools" if capability == "sampling" else "")
        return None

    def _run(self, make: Callable[[], Awaitable[T]], timeout: float, what: str) -> T:
        async def bounded() -> T:
            with anyio.fail_after(timeout):
                return await make()

        try:
            return anyio.from_thread.run(bounded, token=self.token)
        except TimeoutError:
            raise NoAnswer(f"the MCP client did not answer the {what} within {timeout:g} s") from None
        except MCPError as exc:
            raise NoAnswer(f"the MCP client refused the {what}: {exc}") from None

    def _elicit(self, message: str, schema: dict[str, Any], timeout: float) -> dict[str, Any] | None:
        """The form the client's user filled in, or None when they declined or cancelled."""
        session, request_id = self.ctx.session, self.ctx.request_id
        result = self._run(lambda: session.elicit_form(message, schema, related_request_id=request_id), timeout,
                           "question")
        return result.content or {} if result.action == "accept" else None

    # -- the callbacks --------------------------------------------------------------------------

    def ask_user(self, question: UserQuestion) -> UserAnswer | None:
        other = {"type": "string", "title": "Your answer" if not question.choices else "Or your own answer"}
        properties: dict[str, Any] = {}
        if question.choices and question.multi_select:
            properties["choices"] = {"type": "array", "title": "Pick any",
                                     "items": {"type": "string", "enum": list(question.choices)}}
        elif question.choices:
            properties["choice"] = {"type": "string", "title": "Pick one", "enum": list(question.choices)}
        if question.free_text or not question.choices:
            properties["answer"] = other
        schema = {"type": "object", "properties": properties,
                  "required": [] if question.choices else ["answer"]}
        content = self._elicit(question.question, schema, question.timeout)
        if content is None:
            return None
        typed = content.get("answer")
        if isinstance(typed, str) and typed.strip():
            return UserAnswer(typed.strip()[:ANSWER_CHARS])
        picked = content.get("choices") if question.multi_select else [content.get("choice")]
        chosen = tuple(item for item in picked or [] if isinstance(item, str) and item in question.choices)
        if not chosen:
            raise NoAnswer("the user submitted an empty answer")
        return UserAnswer(", ".join(chosen), chosen)

    def approve(self, question: Any, timeout: float) -> str:
        choices = [choice for choice in question.choices if choice in _DECISIONS]
        schema = {"type": "object", "required": ["decision"], "properties": {"decision": {
            "type": "string", "title": "Decision", "enum": choices,
            "enumNames": [_DECISIONS[choice] for choice in choices]}}}
        try:
            content = self._elicit(f"{question.message}\n\nApprove?", schema, timeout)
        except NoAnswer as exc:
            log.warning("approval of %r refused: %s", question.rule_key or question.tool_name, exc)
            return "deny"
        decision = (content or {}).get("decision")
        return decision if isinstance(decision, str) and decision in choices else "deny"

    def ask_model(self, request: ModelRequest) -> ModelReply:
        system, messages = sampling_messages(request.messages)
        tools = [types.Tool(name=tool["function"]["name"], description=tool["function"].get("description"),
                            input_schema=tool["function"].get("parameters") or {"type": "object"})
                 for tool in request.tools]
        params = types.CreateMessageRequestParams(
            messages=messages, system_prompt=system, max_tokens=request.max_tokens or MAX_TOKENS,
            temperature=request.temperature, tools=tools or None,
            model_preferences=types.ModelPreferences(hints=[types.ModelHint(name=request.model)])
            if request.model else None)
        result = self._run(lambda: self.ctx.session.send_request(
            types.CreateMessageRequest(params=params), types.CreateMessageResultWithTools,
            metadata=_related(self.ctx.request_id)), MODEL_TIMEOUT, "sampling request")
        return model_reply(result)

    def progress(self, call_id: str) -> Callable[[Progress], None]:
        def report(progress: Progress) -> None:
            if progress.tool_call_id != call_id:  # a call the served one made (a sub-agent's, a script's)
                return
            try:
                anyio.from_thread.run(self.ctx.session.report_progress, progress.done, progress.total,
                                      progress.message, token=self.token)
            except Exception as exc:  # the client may be gone: the call goes on
                log.debug("progress notification not sent: %s", exc)

        return report


    def notify(self, title: str, body: str | None) -> None:
        """``notify``: a log notification (level ``notice``, logger ``hermes.notify``) tied to the request."""
        session, request_id = self.ctx.session, self.ctx.request_id
        self._run(lambda: session.send_log_message("notice", {"title": title, "body": body}, logger="hermes.notify",
                                                   related_request_id=request_id), NOTIFY_TIMEOUT, "notification")


def _related(request_id: Any) -> Any:
    from mcp.shared.message import ServerMessageMetadata

    return ServerMessageMetadata(related_request_id=request_id)


def sampling_messages(messages: tuple[dict[str, Any], ...]) -> tuple[str | None, list[types.SamplingMessage]]:
    """Chat Completions messages as MCP sampling messages: the system prompt apart, tool calls as ``tool_use``
    blocks, each run of tool results as one user message of ``tool_result`` blocks."""
    system: list[str] = []
    sampled: list[types.SamplingMessage] = []
    results: list[types.ToolResultContent] = []
    for message in messages:
        role, content = message.get("role"), _text(message.get("content"))
        if role == "tool":
            results.append(types.ToolResultContent(tool_use_id=str(message.get("tool_call_id") or ""),
                                                   content=[types.TextContent(text=content)],
                                                   is_error=is_error_result(content)))
            continue
        if results:
            sampled.append(types.SamplingMessage(role="user", content=list(results)))
            results = []
        if role == "system":
            system.append(content)
        elif role == "assistant":
            blocks: list[Any] = [types.TextContent(text=content)] if content else []
            for call in message.get("tool_calls") or []:
                arguments = call["function"].get("arguments") or "{}"
                try:
                    parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
                except ValueError:
                    parsed = {}
                blocks.append(types.ToolUseContent(id=call["id"], name=call["function"]["name"],
                                                   input=parsed if isinstance(parsed, dict) else {}))
            sampled.append(types.SamplingMessage(role="assistant", content=blocks or types.TextContent(text="")))
        else:
            sampled.append(types.SamplingMessage(role="user", content=_user_content(message.get("content"))))
    if results:
        sampled.append(types.SamplingMessage(role="user", content=list(results)))
    return ("\n\n".join(system) or None), sampled


def _user_content(content: Any) -> Any:
    """A user message's content for sampling: its text, or its parts in order when it has images (Chat Completions
    ``image_url`` parts holding base64 data URLs become ``ImageContent``; other URLs stay text, as the client cannot
    be asked to fetch them)."""
    if not isinstance(content, list) or not any(isinstance(part, dict) and part.get("type") == "image_url"
                                                for part in content):
        return types.TextContent(text=_text(content))
    blocks: list[types.TextContent | types.ImageContent] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "image_url":
            url = str((part.get("image_url") or {}).get("url") or "")
            header, comma, data = url.partition(",")
            if url.startswith("data:image/") and comma and header.endswith(";base64"):
                blocks.append(types.ImageContent(data=data, mime_type=header[5:].removesuffix(";base64")))
            else:
                blocks.append(types.TextContent(text=f"[image: {url[:200]}]"))
        elif part.get("text"):
            blocks.append(types.TextContent(text=str(part["text"])))
    return blocks


def model_reply(result: types.CreateMessageResultWithTools) -> ModelReply:
    """A sampling result as a model reply: its text and its ``tool_use`` blocks."""
    blocks = result.content_as_list
    text = "".join(block.text for block in blocks if isinstance(block, types.TextContent))
    calls = tuple(ModelToolCall(block.id, block.name, block.input) for block in blocks
                  if isinstance(block, types.ToolUseContent))
    return ModelReply(text, calls, result.model, result.stop_reason)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)
