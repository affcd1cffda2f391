"""Hookspecs (pluggy project ``hermes``) and their invocation: keyword-only, signature-filtered,
isolated per implementation and bounded by a deadline.

The implementations of one hook phase (all of ``pre_tool_call``; ``post_tool_call`` with
``transform_tool_result``) run on a worker thread in a single hand-off, under one deadline
(``plugins.hook_timeout``); with ``hook_timeout: 0`` they run inline, in the caller's thread. The
implementation running when the deadline passes is abandoned with its worker (see ``executor.py``); the
next phase gets a fresh worker. Past ``plugins.max_abandoned_hooks`` abandoned threads a plugin's hooks
are switched off for the runtime (its ``pre_tool_call`` then blocks every call it would have seen).

With ``plugins.post_hooks: background`` a phase of observers only (``post_tool_call`` without
``transform_tool_result``) is posted: the caller goes on at once, and that thread's next hook phase waits
for it first (:meth:`HookRunner.observe`); :meth:`HookRunner.flush`, ``close`` and the interpreter's exit
wait for them, too."""

from __future__ import annotations

import atexit
import functools
import inspect
import logging
import operator
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pluggy

from ..errors import HermesError, HookImplementationError, PluginFault
from ..workers.executor import Batch, Job, Workers, run_inline
from ..workers.exitguard import sigints, user_interrupted
from .middleware import MIDDLEWARE_KINDS

__all__ = [
    "KNOWN_HOOKS",
    "HermesHookSpecs",
    "HookImpl",
    "HookImplementationError",
    "HookPhase",
    "HookRunner",
    "hookimpl",
    "hookspec",
]

log = logging.getLogger(__name__)

hookspec = pluggy.HookspecMarker("hermes")
hookimpl = pluggy.HookimplMarker("hermes")


class HermesHookSpecs:
    """The hooks of Hermes; implementations declare only the parameters they use."""

    @hookspec
    def pre_tool_call(self, tool_name: str, args: dict[str, Any], task_id: str | None, session_id: str | None,
                      tool_call_id: str | None, turn_id: str | None, api_request_id: str | None,
                      middleware_trace: list[str]) -> dict[str, Any] | None:
        """Before a tool runs: return ``{"action": "block"|"approve"|"modify", ...}`` or ``None``."""

    @hookspec
    def post_tool_call(self, tool_name: str, args: dict[str, Any], result: str, duration_ms: float, status: str,
                       error_type: str | None, error_message: str | None, task_id: str | None,
                       session_id: str | None, tool_call_id: str | None, turn_id: str | None,
                       api_request_id: str | None, middleware_trace: list[str]) -> None:
        """After a tool ran (``status`` is ``ok``, ``error`` or ``blocked``); the return value is ignored."""

    @hookspec(firstresult=True)
    def transform_terminal_output(self, command: str, output: str, returncode: int, task_id: str,
                                  env_type: str) -> str | None:
        """After a foreground ``terminal`` command: the first ``str`` returned replaces its output."""

    @hookspec(firstresult=True)
    def transform_tool_result(self, tool_name: str, args: dict[str, Any], result: str, duration_ms: float,
                              status: str, error_type: str | None, error_message: str | None,
                              task_id: str | None, session_id: str | None, tool_call_id: str | None,
                              turn_id: str | None, api_request_id: str | None,
                              middleware_trace: list[str]) -> str | None:
        """The first ``str`` returned replaces the tool's result."""


#: Seconds a read of the hook timeout is reused, so a hook phase costs no look at config.yaml.
TIMEOUT_TTL = 1.0

#: Every hook name Hermes Agent 0.19 defines; others are accepted with a warning.
KNOWN_HOOKS: frozenset[str] = frozenset({
    "pre_tool_call", "post_tool_call", "transform_terminal_output", "transform_tool_result",
    "transform_llm_output", "pre_llm_call", "post_llm_call", "pre_verify", "pre_api_request",
    "post_api_request", "api_request_error", "on_session_start", "on_session_end", "on_session_finalize",
    "on_session_reset", "subagent_start", "subagent_stop", "pre_gateway_dispatch", "pre_approval_request",
    "post_approval_response", "kanban_task_claimed", "kanban_task_completed", "kanban_task_blocked",
})


@dataclass(frozen=True, eq=False)
class HookImpl:
    """One implementation, with the keyword names it accepts (``None``: all of them) and how to call it."""

    plugin: str
    hook: str
    function: Callable[..., Any]
    accepts: frozenset[str] | None
    #: ``call(kwargs)``: the implementation called with the keywords of ``kwargs`` it accepts; positionally when it
    #: takes them all that way (as pluggy calls implementations: the cheapest call).
    call: Callable[[dict[str, Any]], Any] = field(repr=False)

    @property
    def label(self) -> str:
        """``pre_tool_call hook`` or ``tool_request middleware``: what it is, for messages."""
        return f"{self.hook} {'middleware' if self.hook in MIDDLEWARE_KINDS else 'hook'}"

    @classmethod
    def of(cls, plugin: str, hook: str, function: Callable[..., Any]) -> HookImpl:
        accepts, positional = _parameters(function)
        return cls(plugin, hook, function, accepts, _caller(function, accepts, positional))


#: How a phase calls one implementation: with the keywords of the phase it accepts.
_Call = Callable[[dict[str, Any]], Any]

#: A phase's implementations in calling order (those of switched-off plugins left out), their ``call`` functions,
#: the first implementation of a switched-off plugin, if any (a fail-closed phase refuses to run without it), and
#: whether one of them is ``firstresult``.
_Phase = tuple[tuple[HookImpl, ...], tuple[Callable[[dict[str, Any]], Any], ...], HookImpl | None, bool]


class HookPhase:
    """What one phase of hook calls did."""

    __slots__ = ("end", "fault", "missed", "results", "stopped", "switched_off")

    def __init__(self, start: int) -> None:
        #: ``(implementation, value)`` for each implementation that returned, in calling order.
        self.results: list[tuple[HookImpl, Any]] = []
        #: In a fail-closed phase: the implementation that missed the deadline (the phase ended there), or
        #: whose plugin's hooks are switched off (``switched_off``; the phase did not run).
        self.missed: HookImpl | None = None
        self.switched_off = False
        #: An implementation raised something that is not an ``Exception`` (the phase ended there).
        self.fault: PluginFault | None = None
        #: ``stop`` ended the phase at the last result.
        self.stopped = False
        #: Where to resume a stopped phase (``start=``).
        self.end = start


def accepted_keywords(function: Callable[..., Any]) -> frozenset[str] | None:
    """The parameter names ``function`` takes by keyword, or ``None`` when it takes ``**kwargs``."""
    return _parameters(function)[0]


def _caller(function: Callable[..., Any], accepts: frozenset[str] | None,
            positional: tuple[str, ...] | None) -> Callable[[dict[str, Any]], Any]:
    """``kwargs -> function(...)`` given the keywords of ``kwargs`` it accepts (see :attr:`HookImpl.call`)."""
    if accepts is None:
        return lambda kwargs: function(**kwargs)

    def by_keyword(kwargs: dict[str, Any]) -> Any:
        return function(**{key: kwargs[key] for key in accepts if key in kwargs})

    if positional is None:
        return by_keyword
    if not positional:
        return lambda kwargs: function()
    if len(positional) == 1:
        [name] = positional

        def one(kwargs: dict[str, Any]) -> Any:
            try:
                value = kwargs[name]
            except KeyError:  # a parameter (with a default, if the call is to work) this call does not give
                return by_keyword(kwargs)
            return function(value)

        return one
    pick = operator.itemgetter(*positional)

    def several(kwargs: dict[str, Any]) -> Any:
        try:
            values = pick(kwargs)
        except KeyError:
            return by_keyword(kwargs)
        return function(*values)

    return several


def _parameters(function: Callable[..., Any]) -> tuple[frozenset[str] | None, tuple[str, ...] | None]:
    """The parameter names ``function`` takes by keyword (``None`` when it takes ``**kwargs``), and, when every
    parameter may be given positionally (none is keyword-only, ``*args`` or ``**kwargs``), their names in order."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None, None
    positional = tuple(p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD)
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None, None
    accepts = frozenset(p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    return accepts, positional if len(positional) == len(parameters) else None


class _Carrier:
    """Holds one callback as a pluggy hook implementation, so ordering markers and listing work."""

    def __init__(self, hook: str, function: Callable[..., Any]) -> None:
        setattr(self, hook, hookimpl(specname=hook)(_forward(function)) if hook in _SPECS else
                hookimpl(_forward(function)))


def _forward(function: Callable[..., Any]) -> Callable[..., Any]:
    def forward(**kwargs: Any) -> Any:
        return function(**kwargs)

    forward.__wrapped_callback__ = function  # type: ignore[attr-defined]
    return forward


_SPECS = frozenset(name for name in dir(HermesHookSpecs) if not name.startswith("_"))
_FIRSTRESULT = frozenset(name for name in _SPECS
                         if getattr(getattr(HermesHookSpecs, name), "hermes_spec", {}).get("firstresult"))


_WRAPPER_PROBLEM = ("{marker} implementations are not supported: Hermes calls each implementation on its own, "
                    "with a deadline, so nothing can wrap the others. Return a value instead (pre_tool_call may "
                    "block, approve or modify; transform_tool_result may replace the result).")


def _refuse_wrappers(plugin: str, module: Any) -> None:
    """Raise :class:`HookImplementationError` for a ``wrapper=True`` or ``hookwrapper=True`` implementation."""
    for name in dir(module):
        function = getattr(module, name, None)
        options = getattr(function, "hermes_impl", None)
        if callable(function) and isinstance(options, dict):
            for marker in ("wrapper", "hookwrapper"):
                if options.get(marker):
                    raise HookImplementationError(plugin, options.get("specname") or name, function,
                                                  _WRAPPER_PROBLEM.format(marker=f"{marker}=True"))


class _State:
    """The registered implementations as one published value: a change publishes a new one, so a phase that
    starts after a registration returned sees it. Its phases are worked out on first use (under the runner's
    lock) and kept with it."""

    __slots__ = ("active", "generation", "phases")

    def __init__(self, generation: int, active: frozenset[str]) -> None:
        self.generation = generation
        #: Names of the hooks that have at least one implementation.
        self.active = active
        self.phases: dict[tuple[str, ...], _Phase] = {}


class _Lane(threading.local):
    #: The observers this thread posted last, which its next phase waits for.
    posted: Job | None = None


class HookRunner:
    """The plugin manager and the calling convention of Hermes hooks."""

    def __init__(self, timeout: Callable[[], float | None], background: Callable[[], bool] = lambda: False,
                 max_abandoned: Callable[[], int] = lambda: 4) -> None:
        self.pm = pluggy.PluginManager("hermes")
        self.pm.add_hookspecs(HermesHookSpecs)
        #: Seconds a phase may take, 0 or None for no deadline; whether observers run in the background (see
        #: :meth:`in_background`); abandoned threads a plugin may hold before its hooks are switched off. Each
        #: read at most once a second.
        self.timeout, self.background, self.max_abandoned = timeout, background, max_abandoned
        self._settings: tuple[float | None, bool, int] = (None, False, 4)
        self._settings_read = float("-inf")
        self._workers = Workers("hermes-hooks")
        self._lock = threading.Lock()
        self._counter = 0
        #: The published state (compare it by identity to tell whether anything changed).
        self.state = _State(0, frozenset())
        self._lane = _Lane()
        #: Posted jobs not yet ended, and the implementations they run.
        self._posted: dict[Job, tuple[HookImpl, ...]] = {}
        self._missed = False  # a posted job missed its deadline since the last flush
        #: Abandoned threads still running, per plugin.
        self._abandoned: dict[str, int] = {}
        #: Plugins whose hooks are switched off for this runtime, and why.
        self.switched_off: dict[str, str] = {}
        #: Per plugin: the last ``pre_tool_call`` answer that blocked a call because it was not a valid answer.
        self.bad_answers: dict[str, str] = {}
        #: Middleware callbacks as implementations, by kind and the callbacks' identities.
        self._callbacks: dict[tuple[Any, ...], tuple[tuple[HookImpl, ...], tuple[_Call, ...]]] = {}
        _runners.add(self)

    def add_callback(self, plugin: str, hook: str, function: Callable[..., Any]) -> Callable[[], None]:
        """Register ``function`` for ``hook`` on behalf of ``plugin``; returns what removes it again."""
        options = getattr(function, "hermes_impl", None)
        for marker in ("wrapper", "hookwrapper"):
            if isinstance(options, dict) and options.get(marker):
                raise HookImplementationError(plugin, hook, function, _WRAPPER_PROBLEM.format(marker=f"{marker}=True"))
        if hook not in KNOWN_HOOKS and hook not in _SPECS:
            log.warning("plugin %r registered unknown hook %r; kept, but Hermes never calls it itself",
                        plugin, hook)
        with self._lock:
            self._counter += 1
            handle = f"{plugin}::{hook}::{self._counter}"
            self.pm.register(_Carrier(hook, function), name=handle)
            self._publish()
        return functools.partial(self._remove, handle)

    def add_module(self, plugin: str, module: Any) -> Callable[[], None] | None:
        """Register the pluggy-marked ``@hookimpl`` functions of a plugin module, if it has any; returns what
        removes them again.

        Raises :class:`HookImplementationError` for an implementation Hermes cannot run (a wrapper, or
        arguments the hookspec does not have)."""
        if not any(hasattr(getattr(module, name, None), "hermes_impl") for name in dir(module)):
            return None
        _refuse_wrappers(plugin, module)
        handle = f"{plugin}::module"
        with self._lock:
            try:
                self.pm.register(module, name=handle)
            except pluggy.PluginValidationError as exc:
                raise HermesError(str(exc).replace(repr(handle), repr(plugin))) from None
            self._publish()
        return functools.partial(self._remove, handle)

    def _remove(self, handle: str) -> None:
        with self._lock:
            if self.pm.get_plugin(handle) is not None:
                self.pm.unregister(name=handle)
                self._publish()

    def _publish(self) -> None:
        """(The lock held.) Publish the implementations registered now as the state every later phase uses."""
        active = frozenset(name for name, caller in vars(self.pm.hook).items()
                           if hasattr(caller, "get_hookimpls") and caller.get_hookimpls())
        self.state = _State(self.state.generation + 1, active)

    @property
    def generation(self) -> int:
        """Changes whenever an implementation is added or removed, or a plugin's hooks are switched off."""
        return self.state.generation

    @property
    def active(self) -> frozenset[str]:
        """Names of the hooks that have at least one implementation."""
        return self.state.active

    def implementations(self, hook: str) -> list[HookImpl]:
        """Implementations of ``hook`` in calling order: registration order, tryfirst/trylast respected (those of
        switched-off plugins included)."""
        with self._lock:
            return self._implementations(hook)

    def _implementations(self, hook: str) -> list[HookImpl]:
        caller = getattr(self.pm.hook, hook, None)
        hookimpls = caller.get_hookimpls() if caller else []
        ordered = sorted(hookimpls, key=lambda i: 0 if i.tryfirst else 2 if i.trylast else 1)  # (a stable sort)
        return [HookImpl.of(impl.plugin_name.split("::", 1)[0], hook,
                            getattr(impl.function, "__wrapped_callback__", impl.function)) for impl in ordered]

    def _phase(self, hooks: tuple[str, ...], state: _State | None = None) -> _Phase:
        state = self.state if state is None else state
        phase = state.phases.get(hooks)
        if phase is None:
            with self._lock:
                impls = [impl for hook in hooks for impl in self._implementations(hook)]
                on = tuple(impl for impl in impls if impl.plugin not in self.switched_off)
                off = next((impl for impl in impls if impl.plugin in self.switched_off), None)
                phase = state.phases[hooks] = (on, tuple(impl.call for impl in on), off,
                                               any(impl.hook in _FIRSTRESULT for impl in on))
        return phase

    def callbacks_phase(self, kind: str, callbacks: Sequence[tuple[str, Callable[..., Any]]]) -> _Phase:
        """Middleware ``callbacks`` of ``kind`` as a phase (each called with the keywords it takes, as hooks are)."""
        key = (kind, *((plugin, id(function)) for plugin, function in callbacks))
        known = self._callbacks.get(key)
        if known is None:  # (a cached implementation keeps its function, so its id is not reused meanwhile)
            impls = tuple(HookImpl.of(plugin, kind, function) for plugin, function in callbacks)
            if len(self._callbacks) >= 64:
                self._callbacks.clear()
            known = self._callbacks[key] = (impls, tuple(impl.call for impl in impls))
        impls, calls = known
        if self.switched_off and any(impl.plugin in self.switched_off for impl in impls):
            on = tuple(impl for impl in impls if impl.plugin not in self.switched_off)
            off = next(impl for impl in impls if impl.plugin in self.switched_off)
            return on, tuple(impl.call for impl in on), off, False
        return impls, calls, None, False


    def call(self, hook: str, **kwargs: Any) -> list[tuple[HookImpl, Any]]:
        """Call the implementations in order; exceptions and timeouts are logged with the plugin's name and
        skipped. For a ``firstresult`` hookspec the calls stop at the first result that is not ``None``."""
        phase = self.run((hook,), kwargs)
        if phase.fault is not None:
            log.error("%s; skipped", phase.fault, exc_info=phase.fault.error)
        return phase.results

    def run(self, hooks: tuple[str, ...], kwargs: dict[str, Any], *,
            stop: Callable[[HookImpl, Any], bool] | None = None, fail_closed: bool = False,
            start: int = 0, state: _State | None = None, phase: _Phase | None = None) -> HookPhase:
        """One phase: the implementations of each of ``hooks`` in turn, given ``kwargs``, in one hand-off to a
        worker, under one deadline.

        ``stop(impl, value)`` runs after each implementation that returned, where it ran (it may update
        ``kwargs`` for the implementations after it), and ends the phase by returning True; so does the first
        value that is not None of a ``firstresult`` hook (which comes last in any phase Hermes runs). An
        ``Exception`` is logged and skipped; anything else a plugin raises ends the phase (``fault``). A missed
        deadline is logged and the rest runs on a fresh worker, or, with ``fail_closed``, ends the phase with
        ``missed`` set; a fail-closed phase with an implementation of a switched-off plugin does not run.
        ``start`` resumes a stopped phase; ``state`` is the published state to use (default: the current one);
        ``phase`` the implementations to run instead of those of ``hooks`` (middleware)."""
        if self._lane.posted is not None:
            self._wait_for_posted()  # (which may switch a plugin off)
        impls, calls, off, firstresult = phase or self._phase(hooks, None if self.switched_off else state)
        outcome = HookPhase(start)
        if fail_closed and off is not None:
            outcome.missed, outcome.switched_off = off, True
            return outcome
        if start >= len(impls):
            return outcome

        def check(index: int, value: Any) -> bool:
            impl = impls[index]
            if stop is not None and stop(impl, value):
                outcome.stopped = True
                return True
            return value is not None and impl.hook in _FIRSTRESULT

        after = check if stop is not None or firstresult else None  # (None: nothing to look at, the cheapest)

        timeout = self._settings_now()[0]  # (:meth:`current_timeout`, inline)
        since = sigints()
        while True:
            job = self._workers.run(self._job(impls, calls, kwargs, timeout, start, after)) if timeout else \
                run_inline(calls, kwargs, start, after)
            for index, ok, value in job.outcomes:
                if ok:
                    outcome.results.append((impls[index], value))
                elif isinstance(value, Exception):
                    _log_raised(impls[index], value)
                elif not timeout and user_interrupted(value, since):
                    raise value
                else:
                    impl = impls[index]
                    outcome.fault = PluginFault(impl.plugin, f"the {impl.label}", value)
                    return outcome
            outcome.end = start = job.end
            if job.missed is None:
                return outcome
            impl = impls[job.missed]
            if fail_closed:
                outcome.missed = impl
                return outcome
            _log_late(impl, timeout or 0)
            start = job.missed + 1
            if start >= len(impls):
                return outcome

    def _job(self, impls: tuple[HookImpl, ...], calls: tuple[Callable[[dict[str, Any]], Any], ...],
             kwargs: dict[str, Any], timeout: float, start: int = 0, after: Callable[[int, Any], bool] | None = None,
             report: Callable[[Job], None] | None = None) -> Job:
        """A job of a phase whose abandoned threads count against the plugin whose implementation was running."""
        def abandoned(job: Job) -> None:
            plugin = impls[job.index].plugin
            with self._lock:
                self._abandoned[plugin] = count = self._abandoned.get(plugin, 0) + 1
                if count >= self._settings[2] and plugin not in self.switched_off:
                    self.switched_off[plugin] = (f"{count} of its hook calls missed their {timeout:g} s deadline and "
                                                 "are still running (plugins.max_abandoned_hooks)")
                    log.error("the hooks of plugin %r are switched off: %s", plugin, self.switched_off[plugin])
                    self._publish()

        def returned(job: Job) -> None:
            plugin = impls[job.index].plugin
            with self._lock:
                self._abandoned[plugin] -= 1

        return Job(calls, kwargs, timeout, start, after, on_abandon=abandoned, on_late_return=returned,
                   report=report)

    def _settings_now(self) -> tuple[float | None, bool, int]:
        now = time.monotonic()
        if now - self._settings_read > TIMEOUT_TTL:
            self._settings, self._settings_read = (self.timeout(), self.background(), self.max_abandoned()), now
        return self._settings

    def current_timeout(self) -> float | None:
        """The hook timeout in force (``self.timeout()``, read again once it is a second old)."""
        return self._settings_now()[0]

    def in_background(self) -> bool:
        """Whether observer phases are posted (:meth:`observe`) rather than waited for (``plugins.post_hooks``)."""
        return self._settings_now()[1]

    def after_tool_call(self, kwargs: dict[str, Any], state: _State | None = None) -> str | None:
        """A tool call's last phase, ``post_tool_call`` then ``transform_tool_result``: the first ``str`` a transform
        returned (the call's result), if one did; raises :class:`PluginFault`. With ``plugins.post_hooks:
        background`` and no transform implemented, the observers are posted (:meth:`observe`)."""
        state = self.state if state is None else state
        if "transform_tool_result" not in state.active and self._settings_now()[1]:  # (:meth:`in_background`)
            self.observe("post_tool_call", kwargs, state)
            return None
        phase = self.run(("post_tool_call", "transform_tool_result"), kwargs, state=state)
        if phase.fault is not None:
            raise phase.fault
        for impl, value in phase.results:
            if impl.hook == "transform_tool_result" and isinstance(value, str):
                return value
        return None

    def observe(self, hook: str, kwargs: dict[str, Any], state: _State | None = None) -> None:
        """Call the implementations of ``hook``, observers whose values are not used, without making the caller wait:
        with a deadline they are posted, and this thread's next phase waits for them; without one they run
        inline. Exceptions and missed deadlines are logged as :meth:`run` logs them."""
        self._wait_for_posted()
        impls, calls, _, _ = self._phase((hook,), None if self.switched_off else state)
        if not impls:
            return
        timeout = self.current_timeout()
        if not timeout:
            _report(impls, run_inline(calls, kwargs))
            return
        job = self._job(impls, calls, kwargs, timeout, report=functools.partial(self._reported, impls))
        with self._lock:
            self._posted[job] = impls
        self._lane.posted = self._workers.start(job)

    def _reported(self, impls: tuple[HookImpl, ...], job: Job) -> None:
        with self._lock:
            self._posted.pop(job, None)
        _report(impls, job, job.timeout)

    def _wait_for_posted(self) -> None:
        """Wait for the observers this thread posted last (each part within its deadline)."""
        job = self._lane.posted
        while job is not None and not job.wait():
            job = self._rescue(job)
        self._lane.posted = None

    def _rescue(self, job: Job) -> Job | None:
        """A posted job missed its deadline: report it, and post what was left of it on a fresh worker (once,
        whoever finds it late); that job, if any."""
        with self._lock:
            impls = self._posted.pop(job, None)
            rest = job.rest()
            if impls is None:  # another thread found it late first
                return rest
            self._missed = True
            if rest is not None:
                self._posted[rest] = impls
                self._workers.start(rest)
        _report(impls, job, job.timeout)
        return rest

    def flush(self) -> bool:
        """Wait for the observers posted so far, by any thread, each part within its deadline; False when one posted
        since the last flush missed it (logged; what was posted after it in the same phase still ran)."""
        while True:
            with self._lock:
                pending = list(self._posted)
                if not pending:
                    clean, self._missed = not self._missed, False
                    return clean
            for posted in pending:
                job: Job | None = posted
                while job is not None and not job.wait():
                    job = self._rescue(job)
                if job is not None:
                    with self._lock:
                        self._posted.pop(job, None)

    def close(self) -> None:
        """Wait for the observers posted so far (as :meth:`flush`), then end the idle hook workers (a later call
        starts new ones)."""
        self.flush()
        self._workers.close()

    @property
    def late(self) -> int:
        """Hook calls abandoned at their deadline that are still running (each holds one thread)."""
        with self._lock:
            return sum(self._abandoned.values())

    def problems_of(self, plugin: str) -> list[str]:
        """What went wrong with ``plugin``'s hooks in this runtime: switched off, or a ``pre_tool_call`` answer that
        is not valid (the last one, which blocked its call)."""
        problems = []
        if plugin in self.switched_off:
            problems.append(f"hooks switched off: {self.switched_off[plugin]}")
        if plugin in self.bad_answers:
            problems.append(f"pre_tool_call gave an answer that is not valid, which blocked the call: "
                            f"{self.bad_answers[plugin]}")
        return problems

    def plugins_with(self, hook: str) -> list[str]:
        return [impl.plugin for impl in self.implementations(hook)]

    def hooks_of(self, plugin: str) -> list[str]:
        """The hooks ``plugin`` implements, sorted."""
        return sorted(hook for hook in self.active if plugin in self.plugins_with(hook))


def _log_raised(impl: HookImpl, exc: BaseException) -> None:
    log.error("%s of plugin %r raised; skipped", impl.label, impl.plugin, exc_info=exc)


def _log_late(impl: HookImpl, timeout: float) -> None:
    log.warning("%s of plugin %r did not finish within %g s; abandoned and skipped", impl.label, impl.plugin,
                timeout)


def _report(impls: tuple[HookImpl, ...], job: Batch, timeout: float = 0.0) -> None:
    """Log what went wrong in a posted phase: implementations that raised or missed the deadline."""
    for index, ok, value in job.outcomes:
        if not ok:
            _log_raised(impls[index], value)
    if job.missed is not None:
        _log_late(impls[job.missed], timeout)


_runners: weakref.WeakSet[HookRunner] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    """What was posted runs to its end (each part within its deadline) before the interpreter goes."""
    for runner in list(_runners):
        runner.flush()
