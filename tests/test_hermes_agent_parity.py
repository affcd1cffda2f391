"""Parity with Hermes Agent 0.19's shared tools, checked against its own wheel (installed in a venv once per session).

For every tool name the first-party packs share with Hermes Agent: each of its properties is one of ours with a
type, enum and bounds that accept what its schema accepts, and we require nothing it does not; then a call shaped
as its schema (validated against it) runs here. A new shared tool, or a change on either side, fails a test.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jsonschema
import pytest

from hermes_core import Runtime
from hermes_core.authoring.testing import scaled_timeout

pytestmark = pytest.mark.network

PACKS = [("hermes_plugin_file", "file"), ("hermes_plugin_terminal", "terminal"), ("hermes_plugin_web", "web"),
         ("hermes_plugin_code", "code"), ("hermes_plugin_agent", "agent"), ("hermes_plugin_skills", "skills"),
         ("hermes_plugin_browser", "browser")]
#: JSON Schema types each of ours accepts.
ACCEPTS = {"number": {"number", "integer"}, "integer": {"integer"}, "string": {"string"}, "boolean": {"boolean"},
           "array": {"array"}, "object": {"object"}}


@pytest.fixture
def runtime(pack_runtime: Any) -> Runtime:
    """Every first-party pack, loopback reachable for the web and browser tools; a user who answers "yes" and a
    model that answers "hello" (clarify and delegate_task ask them)."""
    config = {"web": {"allow_private_networks": True}, "browser": {"allow_private": True}}
    made: Runtime = pack_runtime(config, *PACKS)
    made.set_user_callback(lambda question: "yes")
    made.set_model_callback(lambda request: "hello")
    return made


def shared_names(reference: dict[str, Any], runtime: Runtime) -> list[str]:
    return sorted(set(reference["schemas"]) & set(runtime.registry.names()))


def test_the_shared_tools_are_the_ones_this_test_calls(hermes_agent_reference, runtime) -> None:
    assert shared_names(hermes_agent_reference, runtime) == sorted(CALLS)


def shape_problems(theirs: dict[str, Any], ours: dict[str, Any], where: str = "") -> list[str]:
    """What of ``theirs`` (a JSON Schema object) ``ours`` would refuse."""
    problems = []
    our_properties = ours.get("properties", {})
    for key, their in theirs.get("properties", {}).items():
        mine = our_properties.get(key)
        if mine is None:
            problems.append(f"{where}{key}: missing")
            continue
        if "type" in their and "type" in mine and their["type"] not in ACCEPTS[mine["type"]]:
            problems.append(f"{where}{key}: type {mine['type']} refuses {their['type']}")
        if "enum" in mine and not set(their.get("enum", [None])) <= set(mine["enum"]):
            problems.append(f"{where}{key}: enum {mine['enum']} lacks some of {their.get('enum', 'any value')}")
        for side in ("lower", "upper"):
            if not _within(_bound(their, side), _bound(mine, side), side):
                problems.append(f"{where}{key}: {side} bound {_bound(mine, side)} is tighter than "
                                f"{_bound(their, side) or 'none'}")
        for bound, tighter in (("minItems", max), ("minLength", max), ("maxItems", min), ("maxLength", min)):
            if bound in mine and (bound not in their or tighter(mine[bound], their[bound]) != their[bound]):
                problems.append(f"{where}{key}: {bound} {mine[bound]} is tighter than {their.get(bound, 'none')}")
        if their.get("type") == "array" and isinstance(their.get("items"), dict):
            problems += shape_problems({"properties": {"[]": their["items"]}},
                                       {"properties": {"[]": mine.get("items", {})}}, f"{where}{key}")
        if their.get("type") == "object" and "properties" in their:
            problems += shape_problems(their, mine, f"{where}{key}.")
    extra = set(ours.get("required", [])) - set(theirs.get("required", []))
    if extra:
        problems.append(f"{where}required: we also require {sorted(extra)}")
    return problems


def _bound(schema: dict[str, Any], side: str) -> tuple[float, bool] | None:
    """A number's ``lower`` or ``upper`` bound and whether it is exclusive, or None."""
    inclusive, exclusive = ("minimum", "exclusiveMinimum") if side == "lower" else ("maximum", "exclusiveMaximum")
    if exclusive in schema:
        return float(schema[exclusive]), True
    return (float(schema[inclusive]), False) if inclusive in schema else None


def _within(theirs: tuple[float, bool] | None, ours: tuple[float, bool] | None, side: str) -> bool:
    """Whether every number within ``theirs`` is within ``ours``."""
    if ours is None:
        return True
    if theirs is None:
        return False
    (their_value, their_strict), (our_value, our_strict) = theirs, ours
    if their_value != our_value:
        return our_value < their_value if side == "lower" else our_value > their_value
    return their_strict or not our_strict


#: Known drift, each with the issue that removes it.
KNOWN_DRIFT: dict[str, list[str]] = {}


def test_every_shared_tool_accepts_hermes_agents_properties_required_lists_and_enums(hermes_agent_reference,
                                                                                    runtime) -> None:
    drift = {}
    for name in shared_names(hermes_agent_reference, runtime):
        theirs = hermes_agent_reference["schemas"][name]["parameters"]
        problems = shape_problems(theirs, runtime.registry.get(name).schema["parameters"])
        if problems:
            drift[name] = problems
    assert drift == KNOWN_DRIFT


def test_shape_problems_finds_each_kind_of_drift() -> None:
    theirs = {"properties": {"a": {"type": "integer"}, "b": {"type": "string", "enum": ["x", "y"]},
                             "c": {"type": "integer"}, "d": {"type": "array", "items": {"type": "integer"}}},
              "required": ["a"]}
    ours = {"properties": {"a": {"type": "number"}, "b": {"type": "string", "enum": ["x"]},
                           "c": {"type": "integer", "minimum": 1}, "d": {"type": "array", "items": {"type": "string"}}},
            "required": ["a", "b"]}

    assert shape_problems(theirs, ours) == [
        "b: enum ['x'] lacks some of ['x', 'y']", "c: lower bound (1.0, False) is tighter than none",
        "d[]: type string refuses integer", "required: we also require ['b']"]
    assert shape_problems({"properties": {"e": {"type": "string"}}}, {"properties": {}}) == ["e: missing"]
    assert shape_problems({"properties": {"t": {"type": "integer", "minimum": 1}}},
                          {"properties": {"t": {"type": "number", "exclusiveMinimum": 0}}}) == []
    assert shape_problems({"properties": {"t": {"type": "integer", "minimum": 0}}},
                          {"properties": {"t": {"type": "number", "exclusiveMinimum": 0}}}) == [
        "t: lower bound (0.0, True) is tighter than (0.0, False)"]


# -- a call of each shared tool, shaped as Hermes Agent's schema ----------------------------------------------

V4A = """*** Begin Patch
*** Update File: notes.txt
@@ first
 first
-TODO: second
+second, done
*** Add File: docs/new.md
+# New
*** End Patch"""

#: One call per shared tool (``{placeholders}`` are filled in by :func:`filled`), in an order where each finds what
#: an earlier one made (a page, a background process, a dialog).
CALLS: dict[str, dict[str, Any]] = {
    "read_file": {"path": "notes.txt", "offset": 1, "limit": 10},
    "write_file": {"path": "written.txt", "content": "hello\n", "cross_profile": False},
    "patch": {"mode": "patch", "patch": V4A},
    "search_files": {"pattern": "TODO", "output_mode": "count", "context": 1, "offset": 0},
    "terminal": {"command": "printf 'name? '; read name; echo \"hi $name\"", "background": True, "pty": True,
                 "notify_on_complete": True},
    "process": {"action": "write", "session_id": "{process}", "data": "Ada\n"},
    "read_terminal": {"start_line": 0, "count": 5},
    "close_terminal": {"process_id": "{process}"},
    "web_extract": {"urls": ["{page}/one", "{page}/two"], "char_limit": 5000},
    "web_search": {"query": "hermes", "limit": 2},
    "execute_code": {"code": "print(6 * 7)"},
    "skills_list": {},
    "skill_manage": {"action": "create", "name": "greeting",
                     "content": "---\nname: greeting\ndescription: Say hello\n---\n# Greeting\nSay hello.\n"},
    "skill_view": {"name": "greeting"},
    "browser_navigate": {"url": "{page}/form"},
    "browser_snapshot": {"full": True},
    "browser_type": {"ref": "@e1", "text": "Ada"},
    "browser_click": {"ref": "@e2"},
    "browser_dialog": {"action": "accept", "prompt_text": "yes"},
    "browser_scroll": {"direction": "down"},
    "browser_press": {"key": "Tab"},
    "browser_get_images": {},
    "browser_console": {"clear": False},
    "browser_vision": {"question": "What is on the page?", "annotate": False},
    "browser_cdp": {"method": "Runtime.evaluate", "params": {"expression": "document.title", "returnByValue": True},
                    "timeout": 30},
    "browser_back": {},
    "todo": {"todos": [{"id": "1", "content": "check parity", "status": "in_progress"}], "merge": False},
    "memory": {"action": "add", "target": "memory", "content": "parity checked"},
    "session_search": {"query": "parity", "limit": 3},
    "clarify": {"question": "Go on?", "choices": ["yes", "no"]},
    "delegate_task": {"goal": "Say hello", "context": "a test"},
}
PAGES = {
    "/one": ("text/plain", "page one"),
    "/two": ("text/plain", "page two"),
    "/form": ("text/html", "<title>Form</title><input aria-label='Name'>"
                           "<button onclick=\"document.title = 'sent ' + prompt('sure?')\">Send</button>"
                           "<div style='height: 3000px'></div>"),
    "/search": ("application/json", json.dumps({"results": [
        {"url": "https://example.org/a", "title": "A", "content": "a"},
        {"url": "https://example.org/b", "title": "B", "content": "b"},
        {"url": "https://example.org/c", "title": "C", "content": "c"}]})),
}


@pytest.fixture
def site(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Pages and a SearXNG-like search on 127.0.0.1."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            content_type, body = PAGES.get(self.path.split("?")[0], ("text/plain", ""))
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body.encode())))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("SEARXNG_URL", url)
    yield url
    server.shutdown()
    server.server_close()


def filled(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        for name, text in names.items():
            value = value.replace(f"{{{name}}}", text)
        return value
    if isinstance(value, list):
        return [filled(item, names) for item in value]
    if isinstance(value, dict):
        return {key: filled(item, names) for key, item in value.items()}
    return value


def test_a_call_shaped_as_hermes_agents_schema_runs_for_every_shared_tool(hermes_agent_reference, runtime, site,
                                                                        workspace) -> None:
    if not any(shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")):
        pytest.skip("the browser tools need Chromium")
    (workspace / "notes.txt").write_text("first\nTODO: second\nthird\n")
    names = {"page": site, "process": ""}
    failures = {}
    for tool, template in CALLS.items():
        args = filled(template, names)
        jsonschema.validate(args, hermes_agent_reference["schemas"][tool]["parameters"])  # truly Hermes Agent's
        if tool == "browser_navigate":  # a page before it, for browser_back
            runtime.handle_function_call(tool, {"url": f"{site}/one"}, task_id="parity", session_id="parity")
        answer = json.loads(runtime.handle_function_call(tool, args, task_id="parity", session_id="parity"))
        if tool == "terminal":
            names["process"] = answer["session_id"]
        if answer.get("error") or answer.get("success") is False:
            failures[tool] = answer
    assert failures == {}
    assert (workspace / "notes.txt").read_text() == "first\nsecond, done\nthird\n"
    assert (workspace / "docs" / "new.md").read_text() == "# New\n"
    process = json.loads(runtime.handle_function_call(
        "process", {"action": "wait", "session_id": names["process"], "timeout": scaled_timeout(20)},
        task_id="parity"))
    assert process["exit_code"] == 0
    log = json.loads(runtime.handle_function_call(
        "process", {"action": "log", "session_id": names["process"]}, task_id="parity"))
    assert "hi Ada" in log["output"]


def test_hermes_agents_urls_and_count_calls_answer_in_its_shapes(hermes_agent_reference, runtime, site,
                                                               workspace) -> None:
    (workspace / "a.py").write_text("# TODO one\n# TODO two\n")

    extracted = json.loads(runtime.handle_function_call("web_extract", {"urls": [f"{site}/one", f"{site}/two"]}))
    counted = json.loads(runtime.handle_function_call("search_files", {"pattern": "TODO", "output_mode": "count"}))

    assert [(page["url"], page["content"], page["error"]) for page in extracted["results"]] == [
        (f"{site}/one", "page one", None), (f"{site}/two", "page two", None)]
    assert counted["counts"] == {"a.py": 2} and counted["total_count"] == 2


# -- toolsets ---------------------------------------------------------------------------------------------


def test_each_of_hermes_agents_toolsets_is_its_tools_minus_those_not_shipped(hermes_agent_reference) -> None:
    from hermes_core.tools.toolsets import HERMES_AGENT_TOOLSETS, NOT_SHIPPED, PRESETS

    theirs = hermes_agent_reference["toolsets"]
    ours = {**PRESETS, **HERMES_AGENT_TOOLSETS}
    assert sorted(ours) == sorted(theirs)
    for name, toolset in ours.items():
        assert (sorted({*toolset.tools, *toolset.omitted}), list(toolset.includes)) == (
            sorted(set(theirs[name]["tools"])), theirs[name]["includes"]), name
        assert not set(toolset.tools) & set(NOT_SHIPPED), name
    core = hermes_agent_reference["core_tools"]
    assert list(PRESETS["hermes-cli"].tools) == [tool for tool in core if tool not in NOT_SHIPPED]
    every_tool = {tool for toolset in theirs.values() for tool in toolset["tools"]}
    assert set(NOT_SHIPPED) <= every_tool  # no reason kept for a tool Hermes Agent does not have


def test_hermes_cli_and_every_hermes_agent_toolset_name_resolve_without_unknown(hermes_agent_reference, runtime,
                                                                               caplog) -> None:
    names = sorted(hermes_agent_reference["toolsets"])

    tools, unknown = runtime.toolsets.resolve_many(names)
    definitions = runtime.get_tool_definitions(enabled_toolsets=["hermes-cli"])

    assert unknown == []
    assert "unknown" not in caplog.text.lower()
    assert {d["function"]["name"] for d in definitions} <= set(tools)
    assert set(runtime.resolve_toolset("hermes-cli")) == {
        t for t in hermes_agent_reference["core_tools"] if t in runtime.registry.names()}
