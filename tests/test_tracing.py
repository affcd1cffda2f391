"""OpenTelemetry: ``execute_tool`` spans with the GenAI attributes, hook and approval events, a duration
histogram, the trace context of an MCP HTTP request, and nothing of OpenTelemetry when it is off."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hermes_core import Runtime

support = sys.modules["hermes_serve_test_support"]  # loaded by conftest.py
scaled = support.scaled

PLUGIN = '''
def echo(args, **kwargs):
    return args["text"]


def fail(args, **kwargs):
    raise ValueError("failed on purpose")


def guard(tool_name, args, **kwargs):
    if tool_name == "forbidden":
        return {"action": "block", "message": "forbidden is blocked by the guard"}
    if tool_name == "echo" and args.get("text") == "modify me":
        return {"action": "modify", "args": {"text": "modified"}}
    if tool_name == "echo" and args.get("text") == "ask me":
        return {"action": "approve", "message": "May echo ask me?", "rule_key": "echo-ask"}
    return None


def register(ctx):
    text = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    ctx.register_tool("echo", "traced", {"description": "Return the text", "parameters": text}, echo)
    ctx.register_tool("fail", "traced", {"description": "Raise", "parameters": {"type": "object"}}, fail)
    ctx.register_tool("forbidden", "traced", {"description": "Blocked", "parameters": {"type": "object"}}, echo)
    ctx.register_hook("pre_tool_call", guard)
'''


def write_home(home: Path, otel: bool) -> Path:
    folder = home / "plugins" / "traced"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text("name: traced\nversion: '1.0'\ndescription: Tools for the tracing tests\n")
    (folder / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    (home / "config.yaml").write_text(f"plugins:\n  enabled: [traced]\nobservability:\n  otel: {str(otel).lower()}\n"
                                      "approvals:\n  mode: approve\n")
    return home


class Telemetry:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.metrics = InMemoryMetricReader()

    def finished(self, name: str) -> list[Any]:
        return [span for span in self.spans.get_finished_spans() if span.name == name]


@pytest.fixture(scope="module")
def host_telemetry() -> Telemetry:
    """The host application's providers, set before Hermes traces anything (once per process, as the API allows)."""
    telemetry = Telemetry()
    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        trace.set_tracer_provider(TracerProvider())
    provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider), "another test set a tracer provider that is not the SDK's"
    provider.add_span_processor(SimpleSpanProcessor(telemetry.spans))
    metrics.set_meter_provider(MeterProvider(metric_readers=[telemetry.metrics]))
    return telemetry


@pytest.fixture
def traced(host_telemetry: Telemetry, tmp_path: Path) -> Iterator[tuple[Runtime, Telemetry]]:
    runtime = Runtime(home=write_home(tmp_path / "home", otel=True))
    runtime.load_plugins()
    host_telemetry.spans.clear()
    yield runtime, host_telemetry
    runtime.close()


def test_a_call_under_the_callers_span_is_a_child_execute_tool_span(traced):
    runtime, telemetry = traced
    tracer = trace.get_tracer("agent")
    with tracer.start_as_current_span("agent turn") as parent:
        assert runtime.handle_function_call("echo", {"text": "hi"}, tool_call_id="call-1") == "hi"
    (span,) = telemetry.finished("execute_tool echo")
    assert span.parent is not None and span.parent.span_id == parent.get_span_context().span_id
    assert span.context.trace_id == parent.get_span_context().trace_id
    assert dict(span.attributes) == {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "echo",
                                     "gen_ai.tool.call.id": "call-1", "gen_ai.tool.type": "function",
                                     "hermes.plugin": "traced", "hermes.toolset": "traced"}
    assert span.kind == trace.SpanKind.INTERNAL and span.status.is_ok


def test_a_blocked_call_has_the_hook_event_and_error_type(traced):
    runtime, telemetry = traced
    assert "blocked by the guard" in json.loads(runtime.handle_function_call("forbidden", {}))["error"]
    (span,) = telemetry.finished("execute_tool forbidden")
    assert span.attributes["error.type"] == "Blocked"
    assert span.status.status_code == trace.StatusCode.ERROR
    (event,) = [event for event in span.events if event.name == "hermes.call.blocked"]
    assert "blocked by the guard" in event.attributes["hermes.reason"]


def test_a_failure_modification_and_approval_are_on_their_spans(traced):
    runtime, telemetry = traced
    runtime.handle_function_call("fail", {})
    assert runtime.handle_function_call("echo", {"text": "modify me"}) == "modified"
    assert runtime.handle_function_call("echo", {"text": "ask me"}) == "ask me"
    (failed,) = telemetry.finished("execute_tool fail")
    assert failed.attributes["error.type"] == "ValueError"
    modified, asked = telemetry.finished("execute_tool echo")
    assert [(e.name, dict(e.attributes)) for e in modified.events] == [
        ("hermes.hook.modify", {"hermes.plugin": "traced"})]
    assert [(e.name, dict(e.attributes)) for e in asked.events] == [
        ("hermes.approval.request", {"hermes.approval.message": "May echo ask me?",
                                     "hermes.approval.rule_key": "echo-ask"}),
        ("hermes.approval.answer", {"hermes.approval.approved": True})]
    assert "error.type" not in asked.attributes


def test_the_async_path_makes_one_span_and_durations_are_recorded_per_tool(traced):
    runtime, telemetry = traced
    assert anyio.run(runtime.ahandle_function_call, "echo", {"text": "async"}) == "async"
    assert len(telemetry.finished("execute_tool echo")) == 1
    data = telemetry.metrics.get_metrics_data()
    points = [point for resource in data.resource_metrics for scope in resource.scope_metrics
              for metric in scope.metrics if metric.name == "hermes.tool.duration"
              for point in metric.data.data_points]
    tools = {point.attributes["gen_ai.tool.name"] for point in points}
    assert "echo" in tools and all(point.count >= 1 for point in points)


def test_an_mcp_http_call_with_a_traceparent_continues_that_trace(tmp_path):
    home = write_home(tmp_path / "home", otel=True)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    spans_file = tmp_path / "spans.jsonl"
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    with support.replicas(home, workspace, 1, "--stateless", "--drain-grace", "0", env={
            "OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"}, stdout=spans_file) as (replica,):
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"text": "traced"}}}
        answer = httpx2.post(replica.url, json=request, timeout=scaled(30), headers={
            "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18",
            "traceparent": f"00-{trace_id}-{parent_id}-01"})
        assert answer.json()["result"]["content"][0]["text"] == "traced"
        replica.terminate()
        assert replica.process.wait(timeout=scaled(30)) == 0, replica.log()
    spans = {span["context"]["span_id"]: span for span in _console_spans(spans_file.read_text())}
    (tool_span,) = [span for span in spans.values() if span["name"] == "execute_tool echo"]
    assert tool_span["context"]["trace_id"] == f"0x{trace_id}"
    chain, span = [], tool_span  # up from the tool's span (through the SDK's server span) to the caller's
    while span["parent_id"] in spans:
        span = spans[span["parent_id"]]
        chain.append(span["name"])
    assert span["parent_id"] == f"0x{parent_id}", chain
    assert tool_span["attributes"]["gen_ai.tool.call.id"].startswith("mcp-")


def _console_spans(text: str) -> Iterator[dict]:
    """The spans the SDK's console exporter wrote: JSON objects one after another."""
    decoder = json.JSONDecoder()
    position = 0
    while (start := text.find("{", position)) != -1:
        span, position = decoder.raw_decode(text, start)
        yield span


def test_with_tracing_off_nothing_of_opentelemetry_is_imported(tmp_path):
    home = write_home(tmp_path / "home", otel=False)
    code = f"""
import sys
from hermes_core import Runtime
runtime = Runtime(home={str(home)!r})
runtime.load_plugins()
assert runtime.handle_function_call("echo", {{"text": "plain"}}) == "plain"
assert runtime.handle_function_call("forbidden", {{}}).startswith('{{"error"')
runtime.close()
print(sorted(name for name in sys.modules if name.split(".")[0] == "opentelemetry"))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=scaled(60))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
