"""Hookspecs (pluggy project ``hermes``) and their invocation: keyword-only, signature-filtered,
isolated per implementation and bounded by a deadline.

The implementations of one hook phase (all of ``pre_tool_call``; ``post_tool_call`` with
``transform_tool_result``) run on one of the runtime's persistent workers in a single hand-off, each with
its own deadline (``plugins.hook_timeout``); with ``hook_timeout: 0`` they run inline, in the caller's
thread. An implementation that misses its deadline is abandoned with its worker (see ``deadline.py``).

With ``plugins.post_hooks: background`` a phase of observers only (``post_tool_call`` without
``transform_tool_result``) is posted: the caller goes on at once, and the implementations run on the calling
thread's hook worker before that thread's next hook phase (:meth:`HookRunner.observe`);
:meth:`HookRunner.flush`, ``close`` and the interpreter's exit wait for them."""

from __future__ import annotations

import functools
import inspect
import logging
import operator
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pluggy

from ..errors import HermesError, HookImplementationError
from .deadline import Batch, Deadlines, run_inline

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
    def register(self, ctx: Any) -> None:
        """Called once when the plugin loads; contribute tools, hooks and commands through ``ctx``."""

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

    @classmethod
    def of(cls, plugin: str, hook: str, function: Callable[..., Any]) -> HookImpl:
        accepts, positional = _parameters(function)
        return cls(plugin, hook, function, accepts, _caller(function, accepts, positional))


#: A phase's implementations in calling order, their ``call`` functions, and whether one is ``firstresult``.
_Phase = tuple[tuple[HookImpl, ...], tuple[Callable[[dict[str, Any]], Any], ...], bool]


class HookPhase:
    """What one phase of hook calls did."""

    __slots__ = ("end", "missed", "results", "still_late", "stopped")

    def __init__(self, start: int) -> None:
        #: ``(implementation, value)`` for each implementation that returned, in calling order.
        self.results: list[tuple[HookImpl, Any]] = []
        #: In a fail-closed phase: the implementation that missed its deadline (the phase ended there).
        self.missed: HookImpl | None = None
        #: ``missed`` was not even started: an earlier call of it is still running past its deadline.
        self.still_late = False
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


class HookRunner:
    """The plugin manager and the calling convention of Hermes hooks."""

    def __init__(self, timeout: Callable[[], float | None], background: Callable[[], bool] = lambda: False) -> None:
        self.pm = pluggy.PluginManager("hermes")
        self.pm.add_hookspecs(HermesHookSpecs)
        #: Seconds each implementation may take, 0 or None for no deadline; and whether observers run in the
        #: background (see :meth:`in_background`). Each read at most once a second.
        self.timeout = timeout
        self.background = background
        self._timeout: float | None = None
        self._background = False
        self._timeout_read = float("-inf")
        self._workers = Deadlines("hermes-hooks")
        self._lock = threading.Lock()
        self._impls: dict[str, list[HookImpl]] = {}
        self._phases: dict[tuple[str, ...], _Phase] = {}
        self._active: frozenset[str] | None = None
        self._counter = 0
        #: Changes whenever an implementation is added or removed.
        self.generation = 0

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
        self._changed()
        return functools.partial(self._remove, handle)

    def add_module(self, plugin: str, module: Any) -> Callable[[], None] | None:
        """Register the pluggy-marked ``@hookimpl`` functions of a plugin module, if it has any; returns what
        removes them again.

        Raises :class:`HookImplementationError` for an implementation Hermes cannot run (a wrapper, or
        arguments the hookspec does not have)."""
        if not any(hasattr(getattr(module, name, None), "hermes_impl") for name in dir(module)
                   if name != "register"):
            return None
        _refuse_wrappers(plugin, module)
        handle = f"{plugin}::module"
        try:
            self.pm.register(module, name=handle)
        except pluggy.PluginValidationError as exc:
            raise HermesError(str(exc).replace(repr(handle), repr(plugin))) from None
        self._changed()
        return functools.partial(self._remove, handle)

    def _remove(self, handle: str) -> None:
        if self.pm.get_plugin(handle) is not None:
            self.pm.unregister(name=handle)
            self._changed()

    def _changed(self) -> None:
        with self._lock:
            self._impls = {}
            self._phases = {}
            self._active = None
            self.generation += 1

    @property
    def active(self) -> frozenset[str]:
        """Names of the hooks that have at least one implementation."""
        active = self._active
        if active is None:
            active = self._active = frozenset(
                name for name, caller in vars(self.pm.hook).items()
                if hasattr(caller, "get_hookimpls") and caller.get_hookimpls() and name != "register")
        return active

    def implementations(self, hook: str) -> list[HookImpl]:
        """Implementations of ``hook`` in calling order: registration order, tryfirst/trylast respected."""
        impls = self._impls.get(hook)
        if impls is None:
            caller = getattr(self.pm.hook, hook, None)
            hookimpls = caller.get_hookimpls() if caller else []
            ordered = sorted(hookimpls, key=lambda i: 0 if i.tryfirst else 2 if i.trylast else 1)
            impls = []
            for impl in ordered:
                if hook == "register":
                    continue
                function = getattr(impl.function, "__wrapped_callback__", impl.function)
                plugin = impl.plugin_name.split("::", 1)[0]
                impls.append(HookImpl.of(plugin, hook, function))
            self._impls[hook] = impls
        return impls

    def has(self, hook: str) -> bool:
        return bool(self.implementations(hook))

    def call(self, hook: str, **kwargs: Any) -> list[tuple[HookImpl, Any]]:
        """Call the implementations in order; exceptions and timeouts are logged with the plugin's name and
        skipped. For a ``firstresult`` hookspec the calls stop at the first result that is not ``None``."""
        return self.run((hook,), kwargs).results

    def run(self, hooks: tuple[str, ...], kwargs: dict[str, Any], *,
            stop: Callable[[HookImpl, Any], bool] | None = None, fail_closed: bool = False,
            start: int = 0) -> HookPhase:
        """One phase: the implementations of each of ``hooks`` in turn, given ``kwargs``, in one hand-off to a
        worker.

        ``stop(impl, value)`` runs after each implementation that returned, where it ran (it may update
        ``kwargs`` for the implementations after it), and ends the phase by returning True. An exception
        is logged and skipped. A missed deadline is logged and skipped, or, with ``fail_closed``, ends the
        phase with ``missed`` set. ``start`` resumes a stopped phase.
        """
        impls, calls, firstresult = self._phase(hooks)
        phase = HookPhase(start)
        if start >= len(impls):
            return phase
        after: Callable[[int, Any], bool] | None = None
        if firstresult:
            def after(index: int, value: Any) -> bool:
                impl = impls[index]
                if stop is not None and stop(impl, value):
                    phase.stopped = True
                    return True
                # a firstresult hook is done at its first answer; the phase goes on with the next hook
                return value is not None and impl.hook in _FIRSTRESULT
        elif stop is not None:
            def after(index: int, value: Any) -> bool:
                return stop(impls[index], value)

        timeout = self.current_timeout()
        while True:
            batch = self._workers.run(calls, kwargs, timeout, start=start, after=after) if timeout else \
                run_inline(calls, kwargs, start, after)
            if not firstresult:  # (with a firstresult hook, ``after`` tells the two reasons to stop apart)
                phase.stopped = batch.stopped
            results = phase.results
            for index, ok, value in batch.outcomes:
                if ok:
                    results.append((impls[index], value))
                else:
                    _log_raised(impls[index], value)
            phase.end = start = batch.end
            if batch.missed is None:
                if phase.stopped or start >= len(impls):
                    return phase
                hook = impls[start - 1].hook  # a firstresult hook answered: skip its other implementations
                start = next((i for i in range(start, len(impls)) if impls[i].hook != hook), len(impls))
                if start >= len(impls):
                    return phase
                continue
            impl = impls[batch.missed]
            if fail_closed:
                phase.missed, phase.still_late = impl, batch.still_late
                return phase
            _log_late(impl, timeout or 0, batch.still_late)
            start = batch.missed + 1
            if start >= len(impls):
                return phase

    def _phase(self, hooks: tuple[str, ...]) -> _Phase:
        """The implementations of ``hooks`` in calling order, their ``call`` functions, and whether one of them is
        ``firstresult``."""
        phase = self._phases.get(hooks)
        if phase is None:
            impls = tuple(impl for hook in hooks for impl in self.implementations(hook))
            phase = self._phases[hooks] = (impls, tuple(impl.call for impl in impls),
                                           any(impl.hook in _FIRSTRESULT for impl in impls))
        return phase

    def current_timeout(self) -> float | None:
        """The hook timeout in force (``self.timeout()``, read again once it is a second old)."""
        now = time.monotonic()
        if now - self._timeout_read > TIMEOUT_TTL:
            self._timeout, self._background, self._timeout_read = self.timeout(), self.background(), now
        return self._timeout

    def in_background(self) -> bool:
        """Whether observer phases are posted (:meth:`observe`) rather than waited for (``plugins.post_hooks``)."""
        self.current_timeout()
        return self._background

    def after_tool_call(self, kwargs: dict[str, Any]) -> str | None:
        """A tool call's last phase, ``post_tool_call`` then ``transform_tool_result``: the first ``str`` a transform
        returned (the call's result), if one did. With ``plugins.post_hooks: background`` and no transform
        implemented, the observers are posted (:meth:`observe`): the caller goes on at once."""
        if "transform_tool_result" not in self.active and self.in_background():
            self.observe("post_tool_call", kwargs)
            return None
        for impl, value in self.run(("post_tool_call", "transform_tool_result"), kwargs).results:
            if impl.hook == "transform_tool_result" and isinstance(value, str):
                return value
        return None

    def observe(self, hook: str, kwargs: dict[str, Any]) -> None:
        """Call the implementations of ``hook``, observers whose values are not used, without making the caller wait:
        with a deadline they are posted to this thread's hook worker and run before its next phase; without one
        they run inline. Exceptions and missed deadlines are logged as :meth:`run` logs them."""
        impls, calls, _ = self._phase((hook,))
        if not impls:
            return
        timeout = self.current_timeout()
        if timeout:
            self._workers.post(calls, kwargs, timeout, functools.partial(_report, impls))
        else:
            _report(impls, run_inline(calls, kwargs), 0)

    def flush(self) -> bool:
        """Wait for the observers posted so far, by any thread (each within its deadline); False when one of them is
        still running past it (logged, not waited for)."""
        return self._log_unwaited(self._workers.flush())

    def close(self) -> None:
        """Wait for the observers posted so far (as :meth:`flush`), then end the hook workers (a later call starts
        new ones)."""
        self._log_unwaited(self._workers.close())

    def _log_unwaited(self, flushed: tuple[int, list[tuple[Callable[[Any], Any], float]]]) -> bool:
        rescued, late = flushed
        if late:
            impls = {impl.call: impl for impls, _, _ in list(self._phases.values()) for impl in impls}
            for call, timeout in late:
                impl = impls.get(call)
                log.warning("%s hook of plugin %r is running past its %g s deadline; not waited for",
                            impl.hook if impl else "a", impl.plugin if impl else "?", timeout)
        return not (rescued or late)

    @property
    def late(self) -> int:
        """Hook calls abandoned at their deadline that are still running (each holds one thread)."""
        return self._workers.late()

    def plugins_with(self, hook: str) -> list[str]:
        return [impl.plugin for impl in self.implementations(hook)]

    def hooks_of(self, plugin: str) -> list[str]:
        """The hooks ``plugin`` implements, sorted."""
        return sorted(hook for hook in self.active if plugin in self.plugins_with(hook))


def _log_raised(impl: HookImpl, exc: BaseException) -> None:
    log.error("%s hook of plugin %r raised; skipped", impl.hook, impl.plugin, exc_info=exc)


def _log_late(impl: HookImpl, timeout: float, still_late: bool) -> None:
    if still_late:
        log.warning("%s hook of plugin %r is still running an earlier call that missed its %g s deadline; skipped",
                    impl.hook, impl.plugin, timeout)
    else:
        log.warning("%s hook of plugin %r did not finish within %g s; abandoned and skipped", impl.hook, impl.plugin,
                    timeout)


def _report(impls: tuple[HookImpl, ...], batch: Batch, timeout: float) -> None:
    """Log what went wrong in a posted phase: implementations that raised, missed their deadline or were skipped."""
    for index, ok, value in batch.outcomes:
        if not ok:
            _log_raised(impls[index], value)
    for index in batch.skipped:
        _log_late(impls[index], timeout, True)
    if batch.missed is not None:
        _log_late(impls[batch.missed], timeout, batch.still_late)
