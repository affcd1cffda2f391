"""``ToolContext``: what a tool handler sees of the runtime that calls it — its settings, workspace, approvals.

Handlers reach it with :func:`tool_context` while they run; nothing else in a plugin needs globals, so
several runtimes (with their own homes, configs and approvals) can call the same plugin in one process.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from ..config.data import plugin_settings
from ..config.home import HermesHome
from ..tools.websearch import RegisteredWebSearchProvider
from .approval import Approvals
from .asking import Asking, ModelCallback, ModelReply, ModelRequest, UserAnswer, UserQuestion
from .progress import ProgressReporter

if TYPE_CHECKING:
    from ..backends.base import ExecutionBackend, ExecutionBackends
    from ..config.model import HermesConfig
    from ..skills.catalog import SkillCatalog
    from ..state.agent import AgentState
    from .background import BackgroundRuns
    from .subagents import SubAgentResult, SubAgentTask

__all__ = ["ACTIVE", "CallInfo", "ToolContext", "current_tool_context", "tool_context"]

T = TypeVar("T")

log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class ToolContext:
    """One plugin's view of one runtime, for its tool handlers (the host program's tools have one too)."""

    #: The plugin whose tool is running (``None`` for a tool the host program registered).
    plugin_id: str | None
    #: The runtime's home: config, results, logs.
    home: HermesHome
    #: The folder file tools work in and commands start in.
    workspace: Path
    #: The runtime's approvals (callback, session and permanent approvals).
    approvals: Approvals
    _config: Callable[[], HermesConfig] = field(repr=False)
    _config_data: Callable[[], dict[str, Any]] = field(repr=False)
    _dispatch: Callable[..., str] = field(repr=False)
    _available_tools: Callable[[], list[str]] = field(repr=False)
    _backends: ExecutionBackends = field(repr=False)
    _hooks: Callable[..., list[Any]] = field(repr=False)
    _web_search_providers: Callable[[], list[RegisteredWebSearchProvider]] = field(default=list, repr=False)
    _watch_sessions: Callable[[], None] = field(default=lambda: None, repr=False)
    _skills: Callable[[], SkillCatalog] | None = field(default=None, repr=False)
    _inject: Callable[[str, str], bool] = field(default=lambda content, role: False, repr=False)
    _agent_state: Callable[[], AgentState] | None = field(default=None, repr=False)
    #: Who answers questions to the user and to a model, and hears progress (the runtime's, shared by its views).
    _asking: Asking = field(default_factory=Asking, repr=False)
    #: Runs sub-agents on the tools of the runtime or view whose context this is.
    _delegate: Callable[..., list[SubAgentResult]] | None = field(default=None, repr=False)
    #: Starts sub-agents in the background on the same tools; returns the run's id.
    _background: Callable[..., str] | None = field(default=None, repr=False)
    _background_runs: Callable[[], BackgroundRuns] | None = field(default=None, repr=False)
    #: Runs a plugin's command as the model does (``slash_command``), within the tools offered here.
    _run_command: Callable[[str, str], str | None] | None = field(default=None, repr=False)
    _commands: Callable[[], list[str]] | None = field(default=None, repr=False)
    _state: dict[str, Any] = field(default_factory=dict, repr=False)
    _state_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def config(self) -> HermesConfig:
        """The runtime's ``config.yaml`` as its pydantic models (building them costs a first call a few hundred
        milliseconds: :attr:`settings` and :meth:`section` read the same values without them)."""
        return self._config()

    @property
    def settings(self) -> dict[str, Any]:
        """This plugin's settings: ``plugins.entries.<id>.settings`` and the keys beside it."""
        return plugin_settings(self._config_data(), self.plugin_id) if self.plugin_id else {}

    def section(self, name: str) -> dict[str, Any]:
        """A top-level section of ``config.yaml`` (``web``, ``terminal``, ...) as plain data, validated, with its
        defaults filled in; a copy (empty when the section is absent and has no defaults)."""
        value = self._config_data().get(name)
        return dict(value) if isinstance(value, dict) else {}

    def dispatch(self, tool_name: str, args: dict[str, Any] | str, **context: Any) -> str:
        """Call another tool of the same runtime through the full call path (hooks included)."""
        return self._dispatch(tool_name, args, **context)

    def available_tools(self) -> list[str]:
        """Names of the tools the runtime can call now."""
        return self._available_tools()

    def backend_name(self, task_id: str | None = None) -> str:
        """The name of the backend ``task_id``'s commands run on, without making it."""
        return self._backends.selected(task_id)[0]

    def execution_backend(self, task_id: str | None = None) -> ExecutionBackend:
        """The backend ``task_id``'s commands run on (``terminal.backend``, or the one the agent loop assigned
        to the task); raises :class:`~hermes_core.backends.BackendError` when it is unavailable, saying why."""
        return self._backends.get(task_id)

    def inject_message(self, content: str, role: str = "user") -> bool:
        """Hand a message to the session's agent loop (``runtime.message_sink``), from any thread, e.g. a
        background process that finished; False when no agent loop attached a sink."""
        return self._inject(content, role)

    def invoke_hook(self, hook_name: str, **kwargs: Any) -> list[Any]:
        """Call the plugins' ``hook_name`` implementations (isolated, with their deadline); their return values."""
        return self._hooks(hook_name, **kwargs)

    def web_search_providers(self) -> list[RegisteredWebSearchProvider]:
        """The web search backends plugins registered in the runtime, in registration order."""
        return self._web_search_providers()

    def skills(self) -> SkillCatalog:
        """The runtime's skills: its plugins', the user's and (only when opted in) the project's."""
        if self._skills is None:
            raise RuntimeError("this tool context belongs to no runtime with skills")
        return self._skills()

    def agent_state(self) -> AgentState:
        """The runtime's own agent state: its session store, persistent memory and memory providers (what
        ``todo``, ``memory`` and ``session_search`` use)."""
        if self._agent_state is None:
            raise RuntimeError("this tool context belongs to no runtime with a session store")
        return self._agent_state()

    @property
    def session_id(self) -> str | None:
        """The session of the tool call this context is running now (``None`` outside one, or for a call made
        without a session)."""
        context, call = ACTIVE.get()
        return call.session_id if call is not None and context is self else None

    # -- asking the user, asking a model, reporting progress ------------------------------------

    def ask_user(self, question: str, choices: Sequence[str] = (), *, multi_select: bool = False,
                 free_text: bool = True, timeout: float | None = None) -> UserAnswer:
        """Ask the user ``question`` (a pick among ``choices``, or free text) and wait for the answer, at most
        ``timeout`` seconds (default ``agent.clarify_timeout``, 3600). Raises :class:`~hermes_core.errors.NoAnswer`,
        saying why, when nobody can be asked here (no user callback, an MCP client without elicitation), the user
        declined or was late."""
        call = ACTIVE.get()[1]
        return self._asking.ask_user(UserQuestion(question, tuple(choices), multi_select, free_text,
                                                  call.tool_name if call else None, self.session_id), timeout)

    def ask_model(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = (), *,
                  max_tokens: int | None = None, temperature: float | None = None, model: str | None = None,
                  purpose: str | None = None, timeout: float | None = None,
                  endpoint: ModelCallback | str | None = None) -> ModelReply:
        """One model turn: Chat Completions ``messages`` and ``tools`` in, the reply's text and tool calls out.
        Asks the host's model callback, else the caller's (MCP sampling under ``hermes mcp serve``), else
        ``endpoint`` (a callback of the tool's own, or why it has none) or, without one, the endpoint of
        ``delegation.base_url``; raises :class:`~hermes_core.errors.NoAnswer` when none can be asked (saying why),
        it fails or is later than ``timeout`` seconds (default 300)."""
        request = ModelRequest(tuple(messages), tuple(tools), max_tokens, temperature, model, purpose,
                               self.session_id)
        return self._asking.ask_model(request, timeout, last=endpoint)

    def model_unavailable(self, endpoint: ModelCallback | str | None = None) -> str | None:
        """Why :meth:`ask_model` with this ``endpoint`` could not be answered in a call of this runtime, or None
        (for a ``check_fn``: a served MCP client may answer through sampling, so serving counts as a model)."""
        return self._asking.model_unavailable(endpoint)

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Report how far the running call got (``done`` of ``total`` units; ``message``: what happens now) to
        whoever listens: an MCP client that asked for progress, ``hermes tools call``'s spinner, the host's
        callback. Costs nothing when nobody listens; reports closer than 0.1 s are dropped."""
        self.progress_reporter()(done, total, message)

    def progress_reporter(self) -> ProgressReporter:
        """A reporter bound to the running call, for work the handler hands to other threads (it is falsy when
        nobody listens; its ``output(chunk)`` counts lines of a command's output as progress)."""
        context, call = ACTIVE.get()
        call = call if context is self else None
        listener = self._asking.progress_callback() if call is not None else None
        if call is None:
            return ProgressReporter(None)
        return ProgressReporter(listener, call.tool_name, call.tool_call_id, call.session_id)

    def background_reporter(self) -> ProgressReporter:
        """A reporter for what the running call leaves behind (a background process's end, a watched line): the
        host's progress callback (``Runtime.set_progress_callback``) hears it after the call ended, under the call's
        tool name, id and session. Never the caller's own callback: its call is over by then (an MCP client's
        progress token expires with its request). Falsy when the host set no callback."""
        context, call = ACTIVE.get()
        call = call if context is self else None
        listener = self._asking.host_progress_callback()
        if call is None:
            return ProgressReporter(listener)
        return ProgressReporter(listener, call.tool_name, call.tool_call_id, call.session_id)

    # -- sub-agents ----------------------------------------------------------------------------

    def delegate(self, goal: str, *, context: str | None = None, toolsets: Sequence[str] | None = None,
                 role: str = "leaf", max_iterations: int | None = None, task_id: str | None = None
                 ) -> SubAgentResult:
        """Run one sub-agent on ``goal`` with (some of) the tools offered here and wait for its summary (see
        ``Runtime.delegate``)."""
        from .subagents import SubAgentTask

        task = SubAgentTask(goal, context, tuple(toolsets) if toolsets is not None else None, role)
        return self.delegate_batch([task], max_iterations=max_iterations, task_id=task_id)[0]

    def delegate_batch(self, tasks: Sequence[SubAgentTask], *, max_iterations: int | None = None,
                       task_id: str | None = None) -> list[SubAgentResult]:
        """Run sub-agents side by side (at most ``delegation.max_concurrent_children``), one per task; their
        results in task order."""
        if self._delegate is None:
            raise RuntimeError("this tool context belongs to no runtime that can run sub-agents")
        return self._delegate(tasks, max_iterations=max_iterations, session_id=self.session_id, task_id=task_id,
                              progress=self.progress_reporter())

    def run_command(self, name: str, raw_args: str = "") -> str | None:
        """Run a plugin's command ``/name`` for the model: only one that declared ``allowed_tools``, its tool calls
        limited to those (and to read-only ones unless it declared otherwise). Raises ``KeyError`` for an unknown
        command and :class:`~hermes_core.errors.PolicyError` for one the model may not run."""
        if self._run_command is None:
            raise RuntimeError("this tool context belongs to no runtime with commands")
        return self._run_command(name, raw_args)

    def command_names(self) -> list[str]:
        """The commands the model may run here (those that declared ``allowed_tools``)."""
        return [] if self._commands is None else self._commands()

    def notify_caller(self, title: str, body: str | None = None) -> bool:
        """Send a notification to the client this call came from (an MCP client gets a log notification); False
        when the caller takes none."""
        from .asking import CALLER

        send = CALLER.get().notify
        if send is None:
            return False
        send(title, body)
        return True

    def delegate_in_background(self, tasks: Sequence[SubAgentTask], *, max_iterations: int | None = None,
                               task_id: str | None = None) -> str:
        """Start sub-agents as :meth:`delegate_batch` does, without waiting: the run's id (its completion reaches
        the session once, see ``subagent_status``)."""
        if self._background is None:
            raise RuntimeError("this tool context belongs to no runtime that can run sub-agents")
        return self._background(tasks, max_iterations=max_iterations, session_id=self.session_id, task_id=task_id)

    def background_runs(self) -> BackgroundRuns:
        """The background sub-agent runs of the runtime's home."""
        if self._background_runs is None:
            raise RuntimeError("this tool context belongs to no runtime that can run sub-agents")
        return self._background_runs()

    @contextlib.contextmanager
    def activate(self) -> Iterator[ToolContext]:
        """Make this the current context for the block, as a runtime does around a handler (for calling a
        handler function directly, e.g. in a unit test)."""
        token = ACTIVE.set((self, None))
        try:
            yield self
        finally:
            ACTIVE.reset(token)

    def state(self, key: str, factory: Callable[[], T]) -> T:
        """This plugin's object ``key`` in this runtime, made by ``factory`` on first use (e.g. a process table).

        An object with a ``close()`` method is closed when the runtime closes (e.g. a browser it started); one
        with an ``end_session(session_id)`` method is told when a session of the runtime ends (``on_session_end``,
        however it is fired: ``Runtime.session()``, the agent loop, ``invoke_hook``)."""
        try:
            return self._state[key]
        except KeyError:
            with self._state_lock:
                value = self._state.setdefault(key, factory())
            if callable(getattr(value, "end_session", None)):
                self._watch_sessions()
            return value

    def end_session(self, session_id: str | None) -> None:
        """Tell this plugin's state objects that have ``end_session`` that ``session_id`` ended (failures logged)."""
        with self._state_lock:
            objects = list(self._state.values())
        for value in objects:
            end = getattr(value, "end_session", None)
            if callable(end):
                try:
                    end(session_id)
                except Exception:
                    log.exception("ending session %r in the state of plugin %r failed", session_id, self.plugin_id)

    def close(self) -> None:
        """Close this plugin's state objects that have a ``close()`` method, and forget them all (each failure is
        logged with the plugin's name; the others are still closed)."""
        with self._state_lock:
            objects = list(self._state.values())
            self._state.clear()
        for value in objects:
            close = getattr(value, "close", None)
            if callable(close):
                try:
                    close()
                except Exception:
                    log.exception("closing the state of plugin %r failed", self.plugin_id)


class CallInfo(NamedTuple):
    """The tool call running now, as a handler's questions and progress reports name it."""

    session_id: str | None
    tool_name: str | None = None
    tool_call_id: str | None = None


#: What runs now: the tool context of the handler running (or of a context activated by hand), and its call, for
#: what a handler asks on its behalf (one variable: a call sets it once).
ACTIVE: contextvars.ContextVar[tuple[ToolContext | None, CallInfo | None]] = contextvars.ContextVar(
    "hermes_active", default=(None, None))


def current_tool_context() -> ToolContext | None:
    """The context of the tool handler running now (or activated by hand), or None."""
    return ACTIVE.get()[0]


def tool_context() -> ToolContext:
    """The context of the tool handler running now; raises ``RuntimeError`` outside a Hermes tool call."""
    context = ACTIVE.get()[0]
    if context is None:
        raise RuntimeError("tool_context() is only available while a Hermes runtime is calling a tool handler")
    return context
