"""Asking the user and asking a model from inside a tool call: the questions, the answers, and who answers.

A host says who answers for a runtime (``Runtime.set_user_callback``, ``Runtime.set_model_callback``); a server
that serves several clients from one runtime says who answers the calls of one client (:func:`caller_callbacks`:
``hermes mcp serve`` asks the MCP client through elicitation and sampling). A handler asks through its
``ToolContext`` (``ctx.ask_user(...)``, ``ctx.ask_model(...)``). Nothing waits without a bound: with nobody to
ask, :class:`~hermes_core.errors.NoAnswer` says why at once; a callback gets a deadline.

Callbacks may be plain functions or coroutine functions (awaited on the caller's event loop when the call came
from the async API). Messages and tools are OpenAI Chat Completions dicts, the shape every provider SDK and
``answer_tool_calls`` read.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import inspect
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

from ..errors import DeadlineExceeded, NoAnswer
from .progress import ProgressCallback

__all__ = [
    "Asking",
    "CallerCallbacks",
    "ModelCallback",
    "ModelReply",
    "ModelRequest",
    "ModelToolCall",
    "NoAnswer",
    "UserAnswer",
    "UserCallback",
    "UserQuestion",
    "caller_callbacks",
]

#: How long a question waits for the user unless ``agent.clarify_timeout`` (Hermes Agent's setting, and its
#: default: people step away) or the asker says otherwise.
USER_TIMEOUT: Final = 3600.0
#: The longest wait for the user a setting or an asker may ask for (a day).
MAX_USER_TIMEOUT: Final = 86_400.0
#: How long one model request waits unless the asker says otherwise.
MODEL_TIMEOUT: Final = 300.0
#: Tokens a model reply may use unless the asker says otherwise (MCP sampling needs a number).
MAX_TOKENS: Final = 4096


@dataclass(frozen=True)
class UserQuestion:
    """A question for the user: free text, or a pick among ``choices`` (and then, with ``free_text``, an answer of
    their own instead)."""

    question: str
    choices: tuple[str, ...] = ()
    #: Several choices may be picked; the answer's ``selected`` holds them.
    multi_select: bool = False
    #: The user may type an answer of their own (always, when there are no choices).
    free_text: bool = True
    #: The tool that asks, and the session it asks for.
    tool_name: str | None = None
    session_id: str | None = None
    #: Seconds the asker waits for the answer (set by :meth:`Asking.ask_user`; a callback may wait less).
    timeout: float = USER_TIMEOUT


def user_timeout(setting: Any) -> float:
    """The wait ``agent.clarify_timeout`` asks for, within (0, :data:`MAX_USER_TIMEOUT`]; :data:`USER_TIMEOUT`
    when it is unset or not a positive number."""
    if isinstance(setting, bool) or not isinstance(setting, int | float) or not setting > 0:
        return USER_TIMEOUT
    return min(float(setting), MAX_USER_TIMEOUT)


@dataclass(frozen=True)
class UserAnswer:
    """What the user answered: the text, and the choices picked when they picked some."""

    text: str
    selected: tuple[str, ...] = ()

    @classmethod
    def of(cls, value: Any, question: UserQuestion) -> UserAnswer:
        """A callback's return value as an answer: a :class:`UserAnswer`, a string, or the list of choices picked
        (``None``: the user declined, :class:`NoAnswer`)."""
        if isinstance(value, UserAnswer):
            return value
        if value is None:
            raise NoAnswer("the user declined to answer")
        if isinstance(value, str):
            text = value.strip()
            return cls(text, (text,) if text in question.choices else ())
        if isinstance(value, Sequence) and all(isinstance(item, str) for item in value):
            picked = tuple(item.strip() for item in value)
            return cls(", ".join(picked), tuple(item for item in picked if item in question.choices))
        raise NoAnswer(f"the user callback returned a {type(value).__name__}, not an answer (a string, a list of "
                       "strings or a UserAnswer)")


@dataclass(frozen=True)
class ModelRequest:
    """A request for one model turn: the conversation so far and the tools the model may call."""

    #: Chat Completions messages (``system``, ``user``, ``assistant`` with ``tool_calls``, ``tool``).
    messages: tuple[dict[str, Any], ...]
    #: Chat Completions tool definitions (``{"type": "function", "function": {...}}``); empty for none.
    tools: tuple[dict[str, Any], ...] = ()
    max_tokens: int | None = None
    temperature: float | None = None
    #: The model wanted, when the asker has a preference (a host may ignore it).
    model: str | None = None
    #: What the request is for (``delegate_task``, ...), for hosts that route requests.
    purpose: str | None = None
    session_id: str | None = None


@dataclass(frozen=True)
class ModelToolCall:
    """One tool call of a model reply (readable by ``answer_tool_calls``, which answers it with a ``tool`` message)."""

    id: str
    name: str
    #: A dict, or the JSON text the model wrote.
    arguments: dict[str, Any] | str = field(default_factory=dict)

    def chat_completions(self) -> dict[str, Any]:
        """The call as a Chat Completions ``tool_calls`` item."""
        arguments = self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments,
                                                                                      ensure_ascii=False)
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": arguments}}


@dataclass(frozen=True)
class ModelReply:
    """One model turn: its text and the tools it calls (none: the model is done)."""

    text: str = ""
    tool_calls: tuple[ModelToolCall, ...] = ()
    #: The model that answered, when known.
    model: str | None = None
    stop_reason: str | None = None

    def message(self) -> dict[str, Any]:
        """The reply as the Chat Completions ``assistant`` message that goes back into the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [call.chat_completions() for call in self.tool_calls]
        return message

    @classmethod
    def of(cls, value: Any) -> ModelReply:
        """A callback's return value as a reply: a :class:`ModelReply`, a string, a Chat Completions response or
        message, or an Anthropic message (dicts or the SDKs' objects)."""
        if isinstance(value, ModelReply):
            return value
        if isinstance(value, str):
            return cls(value)
        model = _field(value, "model")
        choices = _field(value, "choices")
        stop = _field(value, "stop_reason")
        if isinstance(choices, Sequence) and choices:
            stop = _field(choices[0], "finish_reason")
            value = _field(choices[0], "message")
        content, calls = _field(value, "content"), _field(value, "tool_calls")
        if isinstance(content, Sequence) and not isinstance(content, str):  # content blocks (Anthropic)
            calls = [block for block in content if _field(block, "type") == "tool_use"]
            content = "".join(_field(block, "text") or "" for block in content if _field(block, "type") == "text")
        if not (isinstance(content, str) or (content is None and (calls or _has(value, "content")))):
            raise NoAnswer(f"the model callback returned a {type(value).__name__}, not a reply (a string, a "
                           "ModelReply, a Chat Completions response or message, or an Anthropic message)")
        from ..tools.toolcalls import read_tool_calls  # (the call path's: not for listing tools)

        read = [ModelToolCall(call.id or f"call_{index}", call.name,
                              call.arguments if isinstance(call.arguments, dict | str) else {})
                for index, call in enumerate(read_tool_calls(calls or ()), 1)]
        return cls(content or "", tuple(read), model if isinstance(model, str) else None,
                   stop if isinstance(stop, str) else None)


def _field(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, Mapping) else getattr(value, key, None)


def _has(value: Any, key: str) -> bool:
    return key in value if isinstance(value, Mapping) else hasattr(value, key)


#: Answers a question: a string, the list of choices picked, a :class:`UserAnswer`, or ``None`` when the user
#: declined; or an awaitable of one of these.
UserCallback: TypeAlias = Callable[[UserQuestion], Any]
#: Answers a model request: a :class:`ModelReply`, a string, or a provider's response (see :meth:`ModelReply.of`);
#: or an awaitable of one of these.
ModelCallback: TypeAlias = Callable[[ModelRequest], Any]


@dataclass(frozen=True)
class CallerCallbacks:
    """Who answers the calls made in a :func:`caller_callbacks` block; a string says why nobody does (``None``:
    the runtime's callback answers)."""

    user: UserCallback | str | None = None
    model: ModelCallback | str | None = None
    #: An approval callback (``ApprovalRequest`` -> ``once``/``session``/``always``/``deny``).
    approval: Callable[[Any], str] | str | None = None
    progress: ProgressCallback | None = None
    #: Sends ``(title, body)`` to the caller as a notification (an MCP client's log notification).
    notify: Callable[[str, str | None], None] | None = None


_NONE: Final = CallerCallbacks()
#: The callbacks of the calls made now (by default none: the runtime's answer everything).
CALLER: contextvars.ContextVar[CallerCallbacks] = contextvars.ContextVar("hermes_caller", default=_NONE)


@contextlib.contextmanager
def caller_callbacks(*, user: UserCallback | str | None = None, model: ModelCallback | str | None = None,
                     approval: Callable[[Any], str] | str | None = None,
                     progress: ProgressCallback | None = None,
                     notify: Callable[[str, str | None], None] | None = None) -> Iterator[CallerCallbacks]:
    """While the block runs, the tool calls made in it (and in the threads and tasks it hands its context to) ask
    these callbacks instead of the runtime's: for a server whose clients each have their own user and model.

    A string instead of a callback says nobody answers here, and why (``user="a cron job has no user"``).
    ``None`` keeps what was there. The user's and the approval callbacks come before the runtime's; the runtime's
    model callback comes before this one (the host's model first, as ``delegate_task`` documents).
    """
    current = CALLER.get()
    callbacks = CallerCallbacks(current.user if user is None else user, current.model if model is None else model,
                                current.approval if approval is None else approval, progress or current.progress,
                                notify or current.notify)
    token = CALLER.set(callbacks)
    try:
        yield callbacks
    finally:
        CALLER.reset(token)


class Asking:
    """One runtime's answerers: its user, model and progress callbacks (shared by its filtered views), and the
    configured model endpoint as the last resort for model requests."""

    def __init__(self, endpoint: Callable[[], ModelCallback | str] | None = None,
                 user_timeout: Callable[[], float] | None = None) -> None:
        #: The configured endpoint's callback, or why there is none.
        self._endpoint = endpoint
        #: The configured wait for the user's answers (``agent.clarify_timeout``).
        self._user_timeout = user_timeout or (lambda: USER_TIMEOUT)
        self._user: UserCallback | None = None
        self._model: ModelCallback | None = None
        self._progress: ProgressCallback | None = None
        #: Who may answer model requests beside the host when a call comes (``hermes mcp serve``: "MCP sampling"),
        #: for availability checks, which run outside any call.
        self.callers_model: str | None = None

    def set_user_callback(self, callback: UserCallback | None) -> UserCallback | None:
        """Answer this runtime's questions to the user with ``callback``; returns the previous one."""
        previous, self._user = self._user, callback
        return previous

    def set_model_callback(self, callback: ModelCallback | None) -> ModelCallback | None:
        """Answer this runtime's model requests with ``callback``; returns the previous one."""
        previous, self._model = self._model, callback
        return previous

    def set_progress_callback(self, callback: ProgressCallback | None) -> ProgressCallback | None:
        """Tell ``callback`` the progress of this runtime's calls; returns the previous one."""
        previous, self._progress = self._progress, callback
        return previous

    # -- who answers -----------------------------------------------------------------------------

    def user_callback(self) -> UserCallback | str:
        """Who answers a question to the user here, or why nobody does."""
        caller = CALLER.get().user
        if caller is not None:
            return caller
        return self._user or ("no user can be asked here: the program running Hermes set no user callback "
                              "(Runtime.set_user_callback)")

    def model_callback(self, last: ModelCallback | str | None = None) -> ModelCallback | str:
        """Who answers a model request here (the host's callback, the caller's, then ``last`` or else the configured
        endpoint), or why nobody does."""
        reasons = []
        endpoint = last if last is not None else self._endpoint() if self._endpoint is not None else \
            "no model endpoint is configured"
        for source in (self._model or "the program running Hermes set no model callback (Runtime.set_model_callback)",
                       CALLER.get().model, endpoint):
            if callable(source):
                return source
            if isinstance(source, str):
                reasons.append(source)
        return "no model can be asked here: " + "; ".join(reasons)

    def model_unavailable(self, last: ModelCallback | str | None = None) -> str | None:
        """None when a model request made in a call could be answered (by the host, a serving client's sampling, or
        ``last`` / the configured endpoint); otherwise why not. For availability checks."""
        if self.callers_model is not None:
            return None
        chosen = self.model_callback(last)
        return chosen if isinstance(chosen, str) else None

    def progress_callback(self) -> ProgressCallback | None:
        """Who hears the progress of a call made here (the caller's callback, else the runtime's)."""
        return CALLER.get().progress or self._progress

    def host_progress_callback(self) -> ProgressCallback | None:
        """The runtime's own progress callback (the host's), which outlives any one call."""
        return self._progress

    # -- asking ----------------------------------------------------------------------------------

    def ask_user(self, question: UserQuestion, timeout: float | None = None) -> UserAnswer:
        """The user's answer to ``question``; :class:`NoAnswer` when nobody can answer, the user declined or did
        not answer within ``timeout`` seconds (default ``agent.clarify_timeout``; at most
        :data:`MAX_USER_TIMEOUT`)."""
        callback = self.user_callback()
        if isinstance(callback, str):
            raise NoAnswer(callback)
        wait = min(self._user_timeout() if timeout is None else max(timeout, 0.0), MAX_USER_TIMEOUT)
        question = dataclasses.replace(question, timeout=wait)
        return UserAnswer.of(answer(callback, question, wait, "the user"), question)

    def ask_model(self, request: ModelRequest, timeout: float | None = None,
                  callback: ModelCallback | None = None, last: ModelCallback | str | None = None) -> ModelReply:
        """The model's reply to ``request``, from ``callback`` or else :meth:`model_callback`'s (``last`` in place of
        the configured endpoint); :class:`NoAnswer` when no model can be asked, it fails or does not reply within
        ``timeout`` seconds (default :data:`MODEL_TIMEOUT`)."""
        chosen = callback or self.model_callback(last)
        if isinstance(chosen, str):
            raise NoAnswer(chosen)
        return ModelReply.of(answer(chosen, request, MODEL_TIMEOUT if timeout is None else timeout, "the model"))


def answer(callback: Callable[[Any], Any], argument: Any, timeout: float, who: str) -> Any:
    """``callback(argument)``, awaited when it returns an awaitable, within ``timeout`` seconds; :class:`NoAnswer`
    naming ``who`` when it fails or is late."""
    from ..workers.asyncbridge import awaited  # (asyncio and worker threads: not for listing tools)
    from ..workers.executor import call_with_deadline

    def run() -> Any:
        value = callback(argument)
        return awaited(value) if inspect.isawaitable(value) else value

    try:
        return call_with_deadline(run, timeout)
    except DeadlineExceeded:
        raise NoAnswer(f"{who} did not answer within {timeout:g} s") from None
    except NoAnswer:
        raise
    except Exception as exc:
        raise NoAnswer(f"asking {who} failed: {type(exc).__name__}: {exc}") from exc
