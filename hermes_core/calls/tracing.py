"""OpenTelemetry for tool calls, on with ``observability.otel: true`` (and ``hermes-tools[otel]`` installed).

Every call is an ``execute_tool <name>`` span after the GenAI semantic conventions (``gen_ai.operation.name``,
``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.type``, ``error.type`` on failure) with
``hermes.plugin`` and ``hermes.toolset``, a child of the caller's current span. Hook decisions and approval
questions and answers are events of that span; ``hermes.tool.duration`` is a histogram of call durations per
tool. The host's tracer and meter providers are used when it set them; otherwise they are set up from the
standard ``OTEL_*`` variables, as the SDK's auto-configuration does.

Only imported when tracing is on: with it off, no OpenTelemetry module is loaded and dispatch is untouched.
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, cast

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from .._version import __version__
from ..tools.toolcalls import is_error_result
from .approval import ApprovalRequest, Approvals
from .dispatch import Dispatcher

__all__ = ["TraceContext", "TracedDispatcher", "flush", "telemetry"]

log = logging.getLogger(__name__)

OPERATION = "execute_tool"


@dataclass
class _Call:
    """The span of the call being dispatched, and the failure its steps found, if any."""

    span: trace.Span
    error_type: str | None = None


#: The call this context is inside (copied into the worker thread that runs its steps).
_CURRENT: contextvars.ContextVar[_Call | None] = contextvars.ContextVar("hermes_traced_call", default=None)


class Telemetry:
    """The tracer and the duration histogram of this process."""

    def __init__(self) -> None:
        _providers_from_environment()
        self.tracer = trace.get_tracer("hermes_core", __version__)
        self.durations = metrics.get_meter("hermes_core", __version__).create_histogram(
            "hermes.tool.duration", unit="s", description="How long a tool call took, from dispatch to result")

    @contextmanager
    def span(self, dispatcher: Dispatcher, name: str, tool_call_id: str | None) -> Iterator[_Call]:
        """The span of one call, current while the call runs."""
        entry = dispatcher.registry.get(name)
        attributes: dict[str, Any] = {"gen_ai.operation.name": OPERATION, "gen_ai.tool.name": name,
                                      "gen_ai.tool.type": "extension" if entry is not None and
                                      (entry.plugin or "").startswith("mcp:") else "function"}
        if tool_call_id:
            attributes["gen_ai.tool.call.id"] = tool_call_id
        if entry is not None:
            attributes["hermes.plugin"] = entry.plugin or ""
            attributes["hermes.toolset"] = entry.toolset
        started = time.perf_counter()
        with self.tracer.start_as_current_span(f"{OPERATION} {name}", kind=SpanKind.INTERNAL,
                                               attributes=attributes) as span:
            call = _Call(span)
            token = _CURRENT.set(call)
            try:
                yield call
            finally:
                _CURRENT.reset(token)
                if call.error_type is not None:
                    span.set_attribute("error.type", call.error_type)
                    span.set_status(Status(StatusCode.ERROR))
        measured = {"gen_ai.operation.name": OPERATION, "gen_ai.tool.name": name}
        if call.error_type is not None:
            measured["error.type"] = call.error_type
        self.durations.record(time.perf_counter() - started, measured)


def _error_type(result: str) -> str | None:
    """``error.type`` of a result: the error JSON's ``error_type``, else ``tool_error``; None for success."""
    if not is_error_result(result):
        return None
    given = json.loads(result).get("error_type")
    return given if isinstance(given, str) and given else "tool_error"


_telemetry: Telemetry | None = None
_telemetry_lock = threading.Lock()


def telemetry() -> Telemetry:
    """This process's telemetry, its providers set up on first use."""
    global _telemetry
    with _telemetry_lock:
        if _telemetry is None:
            _telemetry = Telemetry()
        return _telemetry


class TracedDispatcher(Dispatcher):
    """The dispatcher, each call in an ``execute_tool`` span: every plan closes with a step that tells the span what
    the hooks did (before ``post_tool_call``), and approvals report into the span."""

    def __init__(self, registry: Any, hooks: Any, middleware: Any, budget: Any, approvals: Approvals,
                 *args: Any, **kwargs: Any) -> None:
        # the proxy answers to everything Approvals does (a scoped copy gets it already wrapped)
        if not isinstance(approvals, _ObservedApprovals):
            approvals = cast(Approvals, _ObservedApprovals(approvals))
        super().__init__(registry, hooks, middleware, budget, approvals, *args, **kwargs)
        self.telemetry = telemetry()

    @staticmethod
    def report(step_call: Any) -> None:
        """A closing step: the arguments the ``pre_tool_call`` hooks changed and a block, as events of the span."""
        call = _CURRENT.get()
        if call is None:
            return None
        for step in getattr(step_call, "trace", ()):  # only calls with hooks or middleware keep a trace
            plugin, _, stage = step.rpartition(":")
            if stage == "pre_tool_call":
                call.span.add_event("hermes.hook.modify", {"hermes.plugin": plugin})
        if step_call.status == "blocked":
            call.span.add_event("hermes.call.blocked", {"hermes.reason": str(step_call.error_message)})
        if step_call.status != "ok" and step_call.error_type:
            call.error_type = str(step_call.error_type)
        return None

    def handle_function_call(self, function_name: str, function_args: Any, task_id: str | None = None,
                             tool_call_id: str | None = None, session_id: str | None = None,
                             user_task: str | None = None, enabled_tools: Iterable[str] | None = None) -> str:
        with self.telemetry.span(self, function_name, tool_call_id) as call:
            result = super().handle_function_call(function_name, function_args, task_id, tool_call_id,
                                                  session_id, user_task, enabled_tools)
            call.error_type = call.error_type or _error_type(result)
            return result

    async def ahandle_function_call(self, function_name: str, function_args: Any, task_id: str | None = None,
                                    tool_call_id: str | None = None, session_id: str | None = None,
                                    user_task: str | None = None,
                                    enabled_tools: Iterable[str] | None = None) -> str:
        with self.telemetry.span(self, function_name, tool_call_id) as call:
            result = await super().ahandle_function_call(function_name, function_args, task_id, tool_call_id,
                                                         session_id, user_task, enabled_tools)
            call.error_type = call.error_type or _error_type(result)
            return result


class _ObservedApprovals:
    """The approvals, each question and its answer an event of the current call's span."""

    def __init__(self, approvals: Approvals) -> None:
        self._approvals = approvals

    def __getattr__(self, name: str) -> Any:
        return getattr(self._approvals, name)

    def ask(self, request: ApprovalRequest) -> bool:
        call = _CURRENT.get()
        if call is not None:
            call.span.add_event("hermes.approval.request", {"hermes.approval.message": request.message,
                                                            "hermes.approval.rule_key": request.rule_key or ""})
        approved = self._approvals.ask(request)
        if call is not None:
            call.span.add_event("hermes.approval.answer", {"hermes.approval.approved": approved})
        return approved


# -- incoming trace context --------------------------------------------------------------------


class TraceContext:
    """ASGI middleware: the W3C ``traceparent`` of an incoming request is the current context while it is
    served, so the spans of its calls continue the caller's trace."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        carrier = _Headers(scope["headers"])
        if "traceparent" not in carrier:
            await self.app(scope, receive, send)
            return
        token = otel_context.attach(propagate.extract(carrier))
        try:
            await self.app(scope, receive, send)
        finally:
            otel_context.detach(token)


class _Headers(Mapping[str, str]):
    """ASGI headers as the mapping a propagator reads (lower-case names)."""

    def __init__(self, raw: Iterable[tuple[bytes, bytes]]) -> None:
        self._headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in raw}

    def __getitem__(self, key: str) -> str:
        return self._headers[key.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._headers)

    def __len__(self) -> int:
        return len(self._headers)


# -- providers ------------------------------------------------------------------------------------


def _providers_from_environment() -> None:
    """A tracer provider and a meter provider from ``OTEL_*``, each unless the host already set one."""
    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create())
        for exporter in _exporters("traces"):
            provider.add_span_processor(BatchSpanProcessor(exporter()))
        trace.set_tracer_provider(provider)
    if type(metrics.get_meter_provider()).__name__ == "_ProxyMeterProvider":  # the API's placeholder
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource

        readers = [PeriodicExportingMetricReader(exporter()) for exporter in _exporters("metrics")]
        metrics.set_meter_provider(MeterProvider(metric_readers=readers, resource=Resource.create()))


def _exporters(signal: str) -> list[Callable[[], Any]]:
    """The exporter classes ``OTEL_<SIGNAL>_EXPORTER`` names (default ``otlp``; ``none`` for none)."""
    names = os.environ.get(f"OTEL_{signal.upper()}_EXPORTER", "otlp").strip()
    if names.lower() == "none":
        return []
    protocol = os.environ.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL") or \
        os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
    found = []
    for name in (part.strip() for part in names.split(",") if part.strip()):
        if name == "otlp":
            name = "otlp_proto_grpc" if protocol == "grpc" else "otlp_proto_http"
        points = entry_points(group=f"opentelemetry_{signal}_exporter", name=name)
        if not points:
            log.warning("OTEL_%s_EXPORTER names %r, which is not installed; %s are not exported there",
                        signal.upper(), name, signal)
            continue
        found.append(next(iter(points)).load())
    return found


def flush() -> None:
    """Export what the providers Hermes set up still hold (before a process leaves without its exit hooks)."""
    for provider in (trace.get_tracer_provider(), metrics.get_meter_provider()):
        force_flush = getattr(provider, "force_flush", None)
        if force_flush is not None:
            force_flush()
