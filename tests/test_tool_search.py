"""Tool search (issue 43): ``tools.tool_search`` puts the tools outside Hermes Agent's core set behind the bridge
tools ``tool_search``, ``tool_describe`` and ``tool_call``; Anthropic's native deferral; Hermes Agent's settings."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from hermes_core.tools.search import (
    ANTHROPIC_TOOL_SEARCH,
    BRIDGE_TOOL_NAMES,
    ToolIndex,
    ToolSearchSettings,
)

fakes = sys.modules["hermes_fake_provider"]  # loaded by conftest.py

DOMAINS = [
    ("github", "GitHub repositories", "issue"), ("jira", "Jira projects", "ticket"),
    ("calendar", "the user's calendar", "event"), ("crm", "the sales CRM", "contact"),
    ("billing", "the billing system", "invoice"), ("spotify", "Spotify", "playlist"),
    ("grafana", "Grafana", "dashboard"), ("pagerduty", "PagerDuty", "incident"),
    ("notion", "Notion workspaces", "page"), ("shopify", "the Shopify store", "order"),
    ("zendesk", "Zendesk support", "conversation"), ("s3", "S3 buckets", "object"),
    ("k8s", "the Kubernetes cluster", "deployment"), ("flags", "LaunchDarkly", "feature flag"),
    ("hr", "the HR system", "employee record"), ("travel", "the travel agency", "flight booking"),
    ("weather", "the weather service", "forecast"), ("recipes", "the recipe book", "recipe"),
    ("fleet", "the vehicle fleet", "vehicle"), ("library", "the library catalogue", "book loan"),
    ("gym", "the gym", "class reservation"), ("garden", "the garden sensors", "soil reading"),
    ("payroll", "payroll", "payslip"), ("legal", "the contracts archive", "contract"),
    ("survey", "the survey tool", "survey response"), ("wiki", "the team wiki", "article"),
    ("ads", "the ad platform", "campaign"), ("mail", "the mailing list", "subscriber"),
    ("photos", "the photo library", "album"), ("iot", "smart home devices", "thermostat setting"),
]
VERBS = [("list", "List every {thing} in {where}", True), ("get", "Fetch one {thing} from {where} by id", True),
         ("search", "Search {where} for a {thing} matching words", True),
         ("create", "Create a new {thing} in {where}", False), ("update", "Change fields of a {thing} in {where}",
                                                                  False),
         ("delete", "Delete a {thing} from {where} permanently", False),
         ("export", "Export the {thing}s of {where} as CSV", True),
         ("count", "Count the {thing}s in {where}", True), ("archive", "Archive an old {thing} in {where}", False),
         ("comment", "Add a comment to a {thing} in {where}", False)]
HANDLER = {"tools.py": "import json\n\n"
                       "def run(args, **kwargs):\n    return json.dumps({'ran': __name__, 'args': args})\n"}


def manifest(domain: str, where: str, thing: str) -> str:
    tools = []
    for verb, text, read_only in VERBS:
        description = (text.format(thing=thing, where=where) + f". Returns JSON with the {thing} fields; the "
                       f"limit caps how many come back and the cursor pages through long results.")
        tools.append(f"  - name: {domain}_{verb}_{thing.replace(' ', '_')}\n    toolset: {domain}\n"
                     f"    description: {json.dumps(description)}\n"
                     "    parameters: {type: object, properties: {id: {type: string, description: The identifier}, "
                     "query: {type: string, description: Words to match}, limit: {type: integer, minimum: 1}, "
                     "cursor: {type: string, description: Where the previous page ended}}}\n"
                     f"    handler: .tools:run\n    annotations: {{read_only: {str(read_only).lower()}}}\n")
    return f"name: {domain}\nversion: 1.0.0\ntools:\n{''.join(tools)}"


#: One core tool (Hermes Agent's ``read_file`` name): never deferred.
CORE = ("name: files\nversion: 1.0.0\ntools:\n  - name: read_file\n    toolset: file\n    description: Read a text "
        "file\n    parameters: {type: object, properties: {path: {type: string}}, required: [path]}\n"
        "    handler: .tools:run\n    annotations: {read_only: true}\n")


@pytest.fixture
def many(plugins, isolated_home):
    """300 declared tools in 30 user plugins and one core tool; returns a function making a runtime with a
    config.yaml."""
    for domain, where, thing in DOMAINS:
        plugins.folder(domain, manifest=manifest(domain, where, thing), files=HANDLER)
    plugins.folder("files", manifest=CORE, files=HANDLER)

    def runtime(config: str = ""):
        (isolated_home / "config.yaml").write_text(config)
        made = plugins.runtime()
        made.load_plugins()
        return made
    return runtime


def names(definitions):
    return [d["function"]["name"] if "function" in d else d["name"] for d in definitions]


def test_auto_with_300_tools_offers_the_core_tools_and_the_bridge(many):
    runtime = many("tools:\n  tool_search: {enabled: auto}\n")
    assert len(runtime.registry) == 301

    definitions = runtime.get_tool_definitions()

    assert names(definitions) == ["read_file", "tool_search", "tool_describe", "tool_call"]
    assert "300 more tools" in definitions[1]["function"]["description"]
    assert definitions[3]["function"]["parameters"]["required"] == ["name", "arguments"]
    assert len(runtime.get_tool_definitions(defer="none")) == 301


def test_the_bridge_finds_describes_and_calls_a_deferred_tool_through_the_same_pipeline(many):
    runtime = many("tools:\n  tool_search: {enabled: auto}\n")
    seen = []
    runtime.context("observer").register_hook("pre_tool_call", lambda tool_name, args, **kw: seen.append(
        (tool_name, args)))

    found = json.loads(runtime.handle_function_call("tool_search", {"query": "cancel my plane reservation"}))
    assert found["total_available"] == 300
    assert found["matches"][0]["name"] == "travel_delete_flight_booking"
    assert {"name", "toolset", "plugin", "description"} <= found["matches"][0].keys()

    described = json.loads(runtime.handle_function_call("tool_describe", '{"name": "travel_delete_flight_booking"}'))
    assert described["parameters"]["properties"]["cursor"] == {"type": "string",
                                                               "description": "Where the previous page ended"}

    result = json.loads(runtime.handle_function_call(
        "tool_call", {"name": "travel_delete_flight_booking", "arguments": {"id": "BA117"}}))
    assert result["args"] == {"id": "BA117"} and result["ran"].startswith("hermes_plugins.travel")
    assert seen[-1] == ("travel_delete_flight_booking", {"id": "BA117"})
    assert all(name not in BRIDGE_TOOL_NAMES for name, _ in seen)
    # the real tool's arguments are checked as they would be in a direct call
    invalid = json.loads(runtime.handle_function_call(
        "tool_call", {"name": "travel_delete_flight_booking", "arguments": {"limit": "many"}}))
    assert "limit" in invalid["error"]


def test_a_read_only_view_never_reaches_a_write_tool_through_the_bridge(many):
    runtime = many("tools:\n  tool_search: {enabled: on}\n")
    view = runtime.filtered(read_only=True)

    assert names(view.get_tool_definitions())[-3:] == ["tool_search", "tool_describe", "tool_call"]
    found = json.loads(view.handle_function_call("tool_search", {"query": "delete flight booking", "limit": 20}))
    assert found["matches"] and all(m["name"].split("_")[1] not in ("delete", "create", "update", "archive",
                                                                     "comment") for m in found["matches"])
    refused = json.loads(view.handle_function_call(
        "tool_call", {"name": "travel_delete_flight_booking", "arguments": {"id": "BA117"}}))
    assert "not available here" in refused["error"]
    assert "not available here" in json.loads(view.handle_function_call(
        "tool_describe", {"name": "travel_delete_flight_booking"}))["error"]
    assert "ran" in json.loads(view.handle_function_call(
        "tool_call", {"name": "travel_list_flight_booking", "arguments": {}}))


def test_the_async_path_unwraps_tool_call_too(many):
    runtime = many("tools:\n  tool_search: true\n")

    result = asyncio.run(runtime.ahandle_function_call(
        "tool_call", {"name": "github_create_issue", "arguments": {"query": "crash"}}))

    assert json.loads(result)["args"] == {"query": "crash"}
    assert json.loads(result)["ran"].startswith("hermes_plugins.github")


@pytest.mark.parametrize(("arguments", "message"), [
    ({"name": "tool_search", "arguments": {}}, "is a bridge tool itself"),
    ({"name": "read_file", "arguments": {"path": "x"}}, "call it directly"),
    ({"name": "no_such_tool", "arguments": {}}, "not available here"),
    ({"arguments": {}}, "'name' is required"),
    ({"name": ["github_get_issue"]}, "'name' is required"),
    ("{not json", "not valid JSON"),
    ([1, 2], "must be an object"),
])
def test_a_bad_bridge_call_gets_a_specific_error(many, arguments, message):
    runtime = many("tools:\n  tool_search: {enabled: on}\n")
    assert message in json.loads(runtime.handle_function_call("tool_call", arguments))["error"]


def test_bad_search_arguments_get_a_specific_error_and_a_huge_limit_is_capped(many):
    runtime = many("tools:\n  tool_search: {enabled: on, max_search_limit: 7}\n")
    assert "'query' is required" in json.loads(runtime.handle_function_call("tool_search", {"query": 3}))["error"]
    found = json.loads(runtime.handle_function_call("tool_search", {"query": "list " * 5000, "limit": 10**9}))
    assert len(found["matches"]) == 7 and len(found["query"]) <= 1000


def test_hermes_agent_config_yaml_behaves_as_hermes_agent_documents(many):
    """The section as Hermes Agent 0.19 writes it in config.yaml: ``auto`` activates only when the deferrable
    definitions take ``threshold_pct`` of the model's context (``model.context_length``)."""
    section = ("tools:\n  tool_search:\n    # auto (default), on, off\n    enabled: auto\n    threshold_pct: 10\n"
               "    search_default_limit: 5\n    max_search_limit: 20\n")
    large = many(f"model:\n  default: anthropic/claude-sonnet-4\n  context_length: 1000000\n{section}")
    assert len(large.get_tool_definitions()) == 301  # ~30k tokens are under 10 % of a million
    small = many(f"model:\n  default: some/model\n  context_length: 32000\n{section}")
    assert names(small.get_tool_definitions()) == ["read_file", "tool_search", "tool_describe", "tool_call"]
    assert len(json.loads(small.handle_function_call("tool_search", {"query": "invoice"}))["matches"]) == 5
    off = many("tools:\n  tool_search: false\n")
    assert len(off.get_tool_definitions()) == 301
    assert "Unknown tool" in json.loads(off.handle_function_call("tool_search", {"query": "invoice"}))["error"]
    on = many("tools:\n  tool_search:\n    enabled: true\n    threshold_pct: 99\n")
    assert names(on.get_tool_definitions())[-1] == "tool_call"  # on: whatever the threshold


def test_settings_are_read_and_clamped_as_hermes_agent_reads_them():
    assert ToolSearchSettings.of(None) == ToolSearchSettings.of(True) == ToolSearchSettings()
    assert ToolSearchSettings.of(False).enabled == "off"
    assert ToolSearchSettings.of({"enabled": "yes"}).enabled == "on"
    assert ToolSearchSettings.of({"enabled": "sometimes"}).enabled == "auto"
    clamped = ToolSearchSettings.of({"threshold_pct": 400, "max_search_limit": 500, "search_default_limit": 90})
    assert (clamped.threshold_pct, clamped.max_search_limit, clamped.search_default_limit) == (100.0, 50, 50)
    assert ToolSearchSettings.of({"threshold_pct": "nan", "max_search_limit": "x"}) == ToolSearchSettings()
    settings = ToolSearchSettings()
    assert (settings.limit(None), settings.limit("3"), settings.limit(0), settings.limit([1])) == (5, 3, 1, 5)
    assert settings.threshold_tokens(None) == 20_000 and settings.threshold_tokens(200_000) == 20_000


def test_a_plugin_cannot_take_a_bridge_tool_name(plugins):
    plugins.folder("hijack", manifest="name: hijack\ntools:\n  - {name: tool_call, toolset: x, description: mine, "
                                      "handler: .tools:run}\n", files=HANDLER)
    runtime = plugins.runtime()
    runtime.load_plugins()
    assert "tool_call" not in runtime.registry
    assert "reserved for tool search" in runtime.registry.refusals[-1].reason


def test_native_anthropic_deferral_is_accepted_by_the_anthropic_sdk(many):
    """``format="anthropic", defer="native"``: every tool, the deferred ones marked ``defer_loading``, and
    Anthropic's tool-search tool; the real SDK's request types take them and send them as they are."""
    anthropic = pytest.importorskip("anthropic")
    from pydantic import TypeAdapter

    runtime = many("tools:\n  tool_search: {enabled: auto}\n")
    tools = runtime.get_tool_definitions(format="anthropic", defer="native")

    assert len(tools) == 302 and tools[-1] == ANTHROPIC_TOOL_SEARCH
    by_name = {tool["name"]: tool for tool in tools}
    assert "defer_loading" not in by_name["read_file"]
    assert by_name["github_create_issue"]["defer_loading"] is True
    TypeAdapter(list[anthropic.types.ToolUnionParam]).validate_python(tools)
    with fakes.fake_provider([("tool_search_tool_bm25", {"query": "invoice"})]) as fake:
        client = anthropic.Anthropic(base_url=fake.url, api_key="test-key")
        client.messages.create(model="claude-sonnet-4-5", max_tokens=100, tools=tools,
                               messages=[{"role": "user", "content": "send the invoice"}])
    [body] = fake.bodies("/messages")
    assert body["tools"] == tools
    with pytest.raises(ValueError, match="Anthropic"):
        runtime.get_tool_definitions(defer="native")
    with pytest.raises(ValueError, match="defer must be"):
        runtime.get_tool_definitions(defer="later")


def test_the_index_ranks_names_descriptions_parameters_toolsets_and_plugins():
    class Tool:
        def __init__(self, name, toolset, plugin, description, parameters=()):
            self.name, self.toolset, self.plugin, self.description = name, toolset, plugin, description
            self.schema = {"parameters": {"properties": {key: {} for key in parameters}}}

    index = ToolIndex([Tool("send_message", "slack", "slack", "Post text to a channel", ["channel"]),
                       Tool("create_issue", "github", "github", "Open a new issue on a repository", ["repo"]),
                       Tool("getForecast", "weather", "met", "Tomorrow's weather for a city", ["city"])])

    assert [t.name for t in index.search("open a GitHub issue", 1)] == ["create_issue"]
    assert [t.name for t in index.search("forecast", 1)] == ["getForecast"]  # camelCase names split
    assert [t.name for t in index.search("which city", 1)] == ["getForecast"]  # parameter names
    assert [t.name for t in index.search("slack", 3)] == ["send_message"]
    assert index.search("xyzzy", 3) == [] and index.search("", 3) == []


def test_mcp_serve_offers_the_bridge_and_adds_a_described_tool_to_the_session(tmp_path):
    """``hermes mcp serve`` with 300 tools: the SDK client lists the bridge, finds, describes and calls a deferred
    tool, and, having described it, is told by ``notifications/tools/list_changed`` that its list now holds it."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp import types as mcp_types
    from mcp.client.stdio import stdio_client

    from hermes_core.authoring.testing import scaled_timeout

    support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py
    home = tmp_path / "serve-home"
    for domain, where, thing in DOMAINS:
        folder = home / "plugins" / domain
        folder.mkdir(parents=True)
        (folder / "plugin.yaml").write_text(manifest(domain, where, thing))
        (folder / "tools.py").write_text(HANDLER["tools.py"])
    (home / "config.yaml").write_text("tools:\n  tool_search: {enabled: auto}\nplugins:\n  enabled: ["
                                      + ", ".join(domain for domain, _, _ in DOMAINS) + "]\n")
    changed = anyio.Event()

    async def inbox(message):
        if isinstance(message, mcp_types.ToolListChangedNotification):
            changed.set()

    async def main():
        command = support.hermes_command()
        params = StdioServerParameters(command=command[0], args=[*command[1:], "mcp", "serve"],
                                       env={"HERMES_HOME": str(home)})
        with open(tmp_path / "stderr.log", "w") as errlog, anyio.fail_after(scaled_timeout(60)):
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write, message_handler=inbox) as session:
                await session.initialize()
                listed = [tool.name for tool in (await session.list_tools()).tools]
                assert listed == ["tool_search", "tool_describe", "tool_call"]
                found = await session.call_tool("tool_search", {"query": "refund a shopify order"})
                assert "shopify_" in found.content[0].text and not found.is_error
                described = await session.call_tool("tool_describe", {"name": "payroll_export_payslip"})
                assert json.loads(described.content[0].text)["parameters"]["properties"]["limit"]["minimum"] == 1
                await changed.wait()
                relisted = [tool.name for tool in (await session.list_tools()).tools]
                assert relisted == [*listed, "payroll_export_payslip"]
                direct = await session.call_tool("payroll_export_payslip", {"limit": 2})
                bridged = await session.call_tool("tool_call", {"name": "payroll_list_payslip", "arguments": {}})
                assert json.loads(direct.content[0].text)["args"] == {"limit": 2}
                assert json.loads(bridged.content[0].text)["ran"].startswith("hermes_plugins.payroll")

    anyio.run(main)


def test_framework_adapters_offer_the_bridge_and_run_a_deferred_tool_through_it(many):
    """The adapters read the same setting: LangChain gets the core tools and the bridge, and its ``tool_call``
    tool runs the real tool through Hermes' call path."""
    pytest.importorskip("langchain_core")
    from hermes_core.adapters.langchain import langchain_tools
    from hermes_core.adapters.offered import offered_tools

    runtime = many("tools:\n  tool_search: {enabled: on}\n")
    offered = {tool.name: tool for tool in offered_tools(runtime)}
    assert list(offered) == ["read_file", "tool_search", "tool_describe", "tool_call"]
    assert offered["tool_search"].annotations == {"read_only": True} and not offered["tool_call"].parallel_safe

    tools = {tool.name: tool for tool in langchain_tools(runtime)}
    result = tools["tool_call"].invoke({"name": "crm_update_contact", "arguments": {"id": "c-7"}})

    assert json.loads(result)["args"] == {"id": "c-7"}


def test_search_quality_on_the_benchmark_set_reaches_ninety_percent_in_the_top_five():
    """bench/search_quality.py: 200+ tools of the plugin index and Hermes Agent's toolsets, 50 model queries."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "bench" / "search_quality.py"
    spec = importlib.util.spec_from_file_location("hermes_bench_search_quality", path)
    assert spec is not None and spec.loader is not None
    bench = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # its dataclass looks itself up
    spec.loader.exec_module(bench)

    figures = bench.measure()

    assert figures["tools"] >= 200 and figures["queries"] == 50
    assert figures["top5"] >= 0.9
