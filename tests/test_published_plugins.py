"""Published Hermes Agent plugins from PyPI, each installed into a fresh venv: discovered, loaded, their tools
listed, calls made and their hooks, middleware, commands, skills and providers seen to work.

The versions are pinned; each venv is made once per session. Where a plugin talks to a service, the
service is a local HTTP server on 127.0.0.1 (its base URL is one of the plugin's settings) or, when the
plugin has no such setting, the call is made without a key and must come back as a clean JSON error.
docs/hermes-agent-compatibility.md has the table of every plugin tried, these among them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.network


#: Run in each venv before the test's own code: a local HTTP service, a runtime, and an observer of tool calls.
PRELUDE = '''
import json, os, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import hermes_core


class Service:
    """A local HTTP server that answers every request with one JSON body and records what it was asked."""

    def __init__(self, body, status=200):
        self.requests = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                service.requests.append({"method": self.command, "path": self.path.split("?")[0],
                                         "authorization": self.headers.get("Authorization"),
                                         "body": self.rfile.read(length).decode() if length else ""})
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = _answer

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


def runtime():
    """A runtime of this venv's plugins, and the (tool, status) of every call its hooks saw."""
    rt = hermes_core.Runtime()
    rt.load_plugins()
    seen = []
    rt.context("observer").register_hook("post_tool_call",
                                         lambda tool_name, status, **kw: seen.append([tool_name, status]))
    return rt, seen


def record(rt, plugin_id):
    r = rt.plugin(plugin_id)
    return {"state": r.state, "reason": r.reason, "tools": r.tools, "hooks": r.hooks, "warnings": r.warnings,
            **rt.contributions.of_plugin(plugin_id)}


def call(rt, name, args):
    return json.loads(rt.handle_function_call(name, args, session_id="s-1", task_id="t-1", tool_call_id="c-1"))


def host_tool(rt, name, result):
    rt.register_tool(name, "host", {"description": name, "parameters": {"type": "object", "properties": {
        "command": {"type": "string"}, "text": {"type": "string"}}}},
        lambda args, **kw: json.dumps(result(args)))


out = {}
'''


@pytest.fixture(scope="session")
def published(published_plugin):
    """``published(plugin_id)``: the plugin's venv, with the web pack when asked."""
    return lambda plugin_id, *, web=False: published_plugin(plugin_id, *(["web"] if web else []))


def run(venv: Any, code: str, **env: str) -> dict:
    """Run the prelude and ``code`` in ``venv``; ``code`` fills ``out``, which comes back as JSON."""
    return venv.json(PRELUDE + code + "\nprint(json.dumps(out))\n", env=env, timeout=300)


# -- hooks that block, with Hermes Agent-style plugin settings ----------------------------------------------

TENUO = '''
rt, seen = runtime()
host_tool(rt, "echo", lambda args: {"echo": args["text"]})
out["passthrough"] = [record(rt, "hermes-tenuo"), call(rt, "echo", {"text": "hi"}), seen]
with open(os.path.join(os.environ["HERMES_HOME"], "config.yaml"), "w") as config:
    config.write("plugins:\\n  entries:\\n    hermes-tenuo:\\n      require_warrant: true\\n")
rt, seen = runtime()
host_tool(rt, "echo", lambda args: {"echo": args["text"]})
out["enforcing"] = [record(rt, "hermes-tenuo"), call(rt, "echo", {"text": "hi"}), seen]
'''


def test_tenuo_reads_its_hermes_agent_settings_and_blocks_every_call_when_they_say_so(published, isolated_home):
    out = run(published("hermes-tenuo"), TENUO)
    plugin, result, seen = out["passthrough"]
    assert (plugin["state"], plugin["hooks"], plugin["skills"]) == (
        "loaded", ["on_session_end", "on_session_start", "post_tool_call", "pre_tool_call", "subagent_start"],
        ["hermes-tenuo:tenuo-scope"])
    assert (result, seen) == ({"echo": "hi"}, [["echo", "ok"]])
    # plugins.entries.hermes-tenuo.require_warrant, read through the hermes_cli.config shim: block everything
    plugin, result, seen = out["enforcing"]
    assert (plugin["state"], plugin["hooks"]) == ("loaded", ["pre_tool_call"])
    assert result == {"error": "hermes-tenuo: require_warrant is enabled but no warrant is configured"}
    assert seen == [["echo", "blocked"]]


# -- web search providers -----------------------------------------------------------------------------------

OLLAMA = '''
service = Service({"results": [{"title": "Hermes", "url": "https://example.org/hermes", "content": "Plugins."}]})
os.environ["OLLAMA_WEB_BASE_URL"] = service.url + "/api"
rt, seen = runtime()
out["without_key"] = [record(rt, "ollama-cloud"), rt.registry.check("web_search").reason]
os.environ["OLLAMA_API_KEY"] = "test-key"
rt.registry.invalidate_checks()
out["search"] = call(rt, "web_search", {"query": "hermes plugins", "max_results": 3})
out["requests"] = service.requests
out["seen"] = seen
'''


def test_ollama_cloud_is_the_web_search_provider_of_the_web_pack(published, isolated_home, monkeypatch):
    for name in ("OLLAMA_API_KEY", "SEARXNG_URL", "BRAVE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    out = run(published("ollama-cloud", web=True), OLLAMA)
    plugin, reason = out["without_key"]
    assert (plugin["state"], plugin["tools"], plugin["web_search_providers"]) == ("loaded", [], ["ollama-cloud"])
    assert reason.endswith("; ollama-cloud reports itself unavailable")
    assert out["search"] == {"query": "hermes plugins", "provider": "ollama-cloud", "results": [
        {"title": "Hermes", "url": "https://example.org/hermes", "snippet": "Plugins."}]}
    [request] = out["requests"]
    assert (request["method"], request["path"], request["authorization"]) == (
        "POST", "/api/web_search", "Bearer test-key")
    assert json.loads(request["body"])["query"] == "hermes plugins"
    assert out["seen"] == [["web_search", "ok"]]


SERPAPI = '''
rt, seen = runtime()
out["plugin"] = record(rt, "serpapi")
out["news"] = call(rt, "serpapi_news_search", {"query": "hermes"})
out["definitions"] = [d["function"]["name"] for d in rt.get_tool_definitions()]
out["seen"] = seen
'''


def test_serpapi_lists_its_tools_and_provider_and_says_which_key_is_missing(published, isolated_home,
                                                                             monkeypatch):
    monkeypatch.delenv("SERPAPI_API_KEY", raising=False)
    out = run(published("serpapi"), SERPAPI)
    plugin = out["plugin"]
    assert plugin["state"] == "loaded" and plugin["web_search_providers"] == ["serpapi"]
    assert plugin["tools"] == ["serpapi_maps_search", "serpapi_news_search", "serpapi_shopping_search",
                               "serpapi_hotels_search", "serpapi_flights_search", "serpapi_travel_explore_search"]
    # a tool missing only its plugin's requires_env reaches the handler, as in Hermes Agent: the plugin's own hint
    # (its client refuses before any request without the key)
    assert "SERPAPI_API_KEY is not set. Run `hermes tools` to configure SerpApi." in out["news"]["error"]
    assert out["definitions"] == [] and out["seen"] == [["serpapi_news_search", "ok"]]  # (the handler ran)


# -- async handlers -----------------------------------------------------------------------------------------

TABSTACK = '''
service = Service({"error": "invalid API key"}, status=401)
os.environ.update(TABSTACK_API_KEY="test-key", TABSTACK_BASE_URL=service.url)
rt, seen = runtime()
out["plugin"] = record(rt, "tabstack")
out["async"] = rt.registry.get("extract_page_content").is_async
out["result"] = call(rt, "extract_page_content", {"url": "https://example.org/"})
out["requests"] = service.requests
out["seen"] = seen
'''


def test_tabstack_runs_its_async_handlers_against_the_service(published, isolated_home):
    out = run(published("tabstack"), TABSTACK)
    plugin = out["plugin"]
    assert plugin["state"] == "loaded" and plugin["web_search_providers"] == ["tabstack"]
    assert plugin["tools"] == ["extract_structured_data", "extract_page_content", "research_question",
                               "generate_structured_data", "automate_browser_task"]
    assert out["async"] is True
    assert out["result"] == {"error": "Error code: 401 - {'error': 'invalid API key'}", "status": 401}
    assert out["requests"] and out["requests"][0]["authorization"] == "Bearer test-key"
    assert out["seen"] == [["extract_page_content", "ok"]]


HINDSIGHT = '''
service = Service({"detail": "no such bank"}, status=404)
os.environ.update(HINDSIGHT_API_URL=service.url, HINDSIGHT_BANK_ID="project-notes")
rt, seen = runtime()
out["plugin"] = record(rt, "hindsight")
import inspect
out["async"] = [inspect.iscoroutinefunction(rt.registry.get(name).handler) for name in out["plugin"]["tools"]]
out["recall"] = call(rt, "hindsight_recall", {"query": "what did we decide?"})
out["paths"] = sorted({request["path"] for request in service.requests})
out["seen"] = seen
'''


def test_hindsight_registers_async_memory_tools_that_reach_its_server(published, isolated_home):
    out = run(published("hindsight"), HINDSIGHT)
    assert out["plugin"]["state"] == "loaded"
    assert out["plugin"]["tools"] == ["hindsight_retain", "hindsight_recall", "hindsight_reflect"]
    assert out["async"] == [True, True, True]
    assert list(out["recall"]) == ["error"] and out["paths"]
    assert out["seen"] == [["hindsight_recall", "ok"]]


# -- an output transformer ----------------------------------------------------------------------------------

NOISEGATE = '''
rt, seen = runtime()
noisy = "\\n".join([f"tests/test_{i}.py::test_case PASSED [{i}%]" for i in range(300)] + ["===== 300 passed ====="])
host_tool(rt, "terminal", lambda args: {"output": noisy, "exit_code": 0})
out["plugin"] = record(rt, "noisegate")
result = call(rt, "terminal", {"command": "pytest -q"})
out["result"] = {"output_lines": result["output"].count("\\n") + 1, "noisegate": result.get("noisegate"),
                 "last_line": result["output"].splitlines()[-1]}
out["seen"] = seen
'''


def test_noisegate_compacts_a_noisy_tool_result(published, isolated_home):
    out = run(published("noisegate"), NOISEGATE)
    assert (out["plugin"]["state"], out["plugin"]["hooks"]) == ("loaded", ["transform_terminal_output",
                                                                           "transform_tool_result"])
    result = out["result"]
    field = result["noisegate"]["fields"]["output"]
    assert result["noisegate"]["compacted"] is True and field["reducer"] == "pytest"
    assert result["output_lines"] < 301 - 200 and result["last_line"] == "===== 300 passed ====="
    assert out["seen"] == [["terminal", "ok"]]


# -- middleware and approval hooks --------------------------------------------------------------------------

AGENTGUARD = '''
rt, seen = runtime()
ran = []
host_tool(rt, "terminal", lambda args: ran.append(args["command"]) or {"output": "done", "exit_code": 0})
out["plugin"] = record(rt, "agentguard-spend")
out["calls"] = [call(rt, "terminal", {"command": command}) for command in ("ls -la", "rm -rf /")]
out["ran"] = ran
out["status"] = rt.run_command("agentguard", "status").splitlines()[0]
decisions = os.path.join(os.environ["HERMES_HOME"], "agentguard", "decisions.ndjson")
out["decisions"] = [json.loads(line)["decision"]["governanceReceipt"]["decision"] for line in open(decisions)]
out["seen"] = seen
'''


def test_agentguard_middleware_gates_every_tool_call(published, isolated_home):
    out = run(published("agentguard-spend"), AGENTGUARD)
    plugin = out["plugin"]
    assert plugin["state"] == "loaded" and plugin["commands"] == ["agentguard"]
    assert plugin["middleware"] == ["llm_execution", "llm_request", "tool_execution"]
    assert {"pre_approval_request", "post_approval_response"} <= set(plugin["hooks"])
    allowed, denied = out["calls"]
    assert allowed == {"output": "done", "exit_code": 0}
    assert denied["error"].startswith("AgentGuard: blocked by") and denied["agentguard"]["decision"] == "deny"
    assert out["ran"] == ["ls -la"] and out["status"] == "AgentGuard status"
    assert len(out["decisions"]) >= 2
    assert out["seen"] == [["terminal", "ok"], ["terminal", "ok"]]


# -- session hooks, from the command line -------------------------------------------------------------------


def test_sagtask_tools_work_from_hermes_tools_call_because_it_runs_a_session(published, isolated_home, tmp_path):
    venv = published("sagtask")
    env = {"HOME": str(tmp_path)}
    listed = venv.hermes_cli("tools", "call", "sag_task_list", env=env)
    assert (listed.returncode, json.loads(listed.stdout)) == (0, {"ok": True, "tasks": []}), listed.stderr
    assert (tmp_path / ".hermes" / "sag_tasks").is_dir()  # made by its on_session_start hook
    plugins = json.loads(venv.hermes_cli("plugins", "list", "--json", env=env).stdout)
    [sagtask] = [p for p in plugins if p["id"] == "sagtask"]
    assert sagtask["hooks"] == ["on_session_start", "pre_llm_call"] and sagtask["commands"] == ["sagtask"]
    assert len(sagtask["tools"]) == 20 and sagtask["warnings"][0].startswith("deprecated: entry-point value")


def test_hermes_loop_keeps_its_state_across_calls(published, isolated_home, tmp_path):
    venv = published("hermes-loop")

    def tool(*args: str) -> dict:
        result = venv.hermes_cli("tools", "call", *args, cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        return json.loads(result.stdout)

    assert tool("init_loop", '{"total_tasks": 3}')["message"] == "Loop initialized with 3 tasks"
    assert tool("complete_task")["remaining"] == 2
    status = tool("loop_status")
    assert (status["active"], status["tasks_completed"], status["remaining_tasks"]) == (True, 1, 2)
    assert (tmp_path / ".hermes-loop-state.json").is_file()


# -- declared-in-code tools, slash commands, skills, foreign manifests, requires_env --------------------------

TWEET = '''
service = Service({"account": {"plan": "free", "credits": 12}})
os.environ.update(XQUIK_API_KEY="test-key", XQUIK_BASE_URL=service.url)
rt, seen = runtime()
out["plugin"] = record(rt, "hermes-tweet")
out["read"] = call(rt, "tweet_read", {"path": "/api/v1/account"})
out["requests"] = service.requests
out["skill"] = rt.skills["hermes-tweet:hermes-tweet"].read()[:200]
out["seen"] = seen
'''


def test_hermes_tweet_reads_through_its_api_and_lists_commands_and_skill(published, isolated_home):
    out = run(published("hermes-tweet"), TWEET)
    plugin = out["plugin"]
    assert plugin["tools"] == ["tweet_explore", "tweet_read", "tweet_action"]
    assert (plugin["commands"], plugin["skills"]) == (["xstatus", "xtrends"], ["hermes-tweet:hermes-tweet"])
    assert "unknown manifest field 'optional_env' ignored" in plugin["warnings"]
    assert "credits" in json.dumps(out["read"]) and out["requests"][0]["path"] == "/api/v1/account"
    assert out["skill"].strip() and out["seen"] == [["tweet_read", "ok"]]


PLIVO = '''
rt, seen = runtime()
out["plugin"] = record(rt, "plivo-tools")
manifest = rt.plugin("plivo-tools").manifest
out["manifest"] = [manifest.name, rt.plugin("plivo-tools").candidate.foreign_manifest,
                   [[env.name, env.secret] for env in manifest.requires_env]]
out["sms"] = call(rt, "send_sms", {"to": "+15555550100", "text": "hello"})
'''


def test_plivo_tools_with_a_hermes_agent_manifest_name_the_missing_credentials(published, isolated_home,
                                                                                monkeypatch):
    for name in ("PLIVO_AUTH_ID", "PLIVO_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    out = run(published("plivo-tools"), PLIVO)
    plugin = out["plugin"]
    assert (plugin["state"], plugin["tools"]) == ("loaded", ["send_sms", "make_call", "lookup_number"])
    # its requires_env items carry Hermes Agent's set-up fields (prompt, password): read as ours
    assert out["manifest"] == ["plivo-tools", True, [["PLIVO_AUTH_ID", False], ["PLIVO_AUTH_TOKEN", True],
                                                     ["PLIVO_PHONE_NUMBER", False]]]
    assert plugin["warnings"] == ["unknown manifest field 'label' ignored",
                                  "unknown manifest field 'optional_env' ignored"]
    # missing only its requires_env, the call reaches the plugin's handler, which names what to set (as in Hermes
    # Agent)
    assert out["sms"] == {"error": "Plivo credentials missing. Set PLIVO_AUTH_ID and PLIVO_AUTH_TOKEN (from "
                                   "https://cx.plivo.com/)."}


HERMEAD = '''
rt, seen = runtime()
host_tool(rt, "echo", lambda args: {"echo": args["text"]})
out["plugin"] = record(rt, "hermead")
out["call"] = call(rt, "echo", {"text": "hi"})
out["command"] = rt.run_command("hermead", "")
out["seen"] = seen
'''


def test_hermead_observes_calls_and_answers_its_slash_command(published, isolated_home):
    out = run(published("hermead"), HERMEAD)
    assert (out["plugin"]["hooks"], out["plugin"]["commands"]) == (["post_tool_call"], ["hermead"])
    assert out["call"] == {"echo": "hi"} and out["seen"] == [["echo", "ok"]]
    assert isinstance(out["command"], str) and out["command"].strip()


# -- delegate_task, patched by a plugin through tools.delegate_tool ------------------------------------------------

DELEGATE_ROUTING = '''
service = Service({"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "any", "choices": [
    {"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}]})
with open(os.path.join(os.environ["HERMES_HOME"], "config.yaml"), "w") as config:
    config.write(f"delegation:\\n  base_url: {service.url}/v1\\n  model: default-model\\n")
rt, seen = runtime()
out["plugin"] = record(rt, "delegate_routing")
out["routed"] = call(rt, "delegate_task", {"tasks": [{"goal": "Summarise cheaply", "model": "cheap-model"},
                                                     {"goal": "Summarise"}]})
out["models"] = sorted(json.loads(request["body"])["model"] for request in service.requests)
out["refused"] = call(rt, "delegate_task", {"tasks": [{"goal": "x", "provider": "elsewhere"}]})
out["seen"] = seen
'''


def test_delegate_routing_loads_active_and_routes_each_task_to_its_model(published_plugin, isolated_home):
    out = run(published_plugin("delegate_routing", "agent"), DELEGATE_ROUTING)
    plugin = out["plugin"]
    assert plugin["state"] == "loaded" and not any("INACTIVE" in warning for warning in plugin["warnings"])
    assert plugin["middleware"] == ["tool_execution"]  # delegate_task calls go through its patched functions
    assert [result["status"] for result in out["routed"]["results"]] == ["completed", "completed"]
    assert [result["model"] for result in out["routed"]["results"]] == ["any", "any"]  # (the endpoint says so)
    assert out["models"] == ["cheap-model", "default-model"]  # what each sub-agent asked for
    assert "delegate_task routing: could not resolve model/provider for task 0" in out["refused"]["error"]
    assert "cannot switch to provider 'elsewhere'" in out["refused"]["error"]
    assert out["seen"] == [["delegate_task", "ok"], ["delegate_task", "ok"]]


def test_every_pinned_plugin_is_in_the_compatibility_table():
    table = (Path(__file__).parent.parent / "docs" / "hermes-agent-compatibility.md").read_text()
    pinned = sys.modules["hermes_compat_harness"].PINNED
    assert [requirement for requirement in pinned.values() if f"`{requirement}`" not in table] == []
