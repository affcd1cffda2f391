"""Hermes as an MCP client: servers' tools in the registry, faults isolated, third-party servers work."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
from typing import Any

import pytest
import yaml

from hermes_core import Runtime
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.mcp.naming import MAX_TOOL_NAME, ToolNames, tool_name

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py
WAIT = scaled_timeout(30.0)  # the longest a test waits for a state change before it fails


@pytest.fixture(scope="session")
def external(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return support.external_servers(tmp_path_factory)


def call(runtime: Runtime, tool: str, /, **args: Any) -> str:
    return runtime.handle_function_call(tool, args)


def error_of(result: str) -> str:
    value = json.loads(result)
    assert isinstance(value, dict) and "error" in value, result
    return value["error"]


def status(runtime: Runtime, server: str) -> Any:
    return support.server_status(runtime, server)


# -- naming ----------------------------------------------------------------------------------


def test_tool_names_are_sanitised_and_bounded():
    assert tool_name("files", "read_file") == "mcp__files__read_file"
    assert tool_name("my server", "get.thing/now") == "mcp__my_server__get_thing_now"
    long = tool_name("server", "x" * 100)
    assert len(long) == MAX_TOOL_NAME and long.startswith("mcp__server__xxx")
    assert tool_name("server", "x" * 100) == long  # stable
    assert tool_name("server", "x" * 100 + "y") != long


def test_sanitising_collisions_get_distinct_names_that_map_back():
    names = ToolNames("s")
    dotted, underscored = names.registered("a.b"), names.registered("a_b")
    assert dotted == "mcp__s__a_b" and underscored != dotted and len(underscored) <= MAX_TOOL_NAME
    assert (names.original(dotted), names.original(underscored)) == ("a.b", "a_b")
    assert names.registered("a.b") == dotted


# -- the fault-injection server ----------------------------------------------------------------


def test_tools_register_in_their_toolset_with_the_server_name_as_alias(hermes):
    runtime = hermes({"fault": support.fault_server()})
    entry = runtime.registry.get("mcp__fault__echo")
    assert entry is not None and entry.toolset == "mcp-fault" and entry.plugin == "mcp:fault"
    assert entry.schema["parameters"]["required"] == ["text"]
    assert set(runtime.resolve_toolset("fault")) == set(runtime.resolve_toolset("mcp-fault"))
    assert "mcp__fault__hang" in runtime.resolve_toolset("fault")
    definitions = runtime.get_tool_definitions(enabled_toolsets=["fault"])
    assert {d["function"]["name"] for d in definitions} == set(runtime.resolve_toolset("fault"))
    assert support.registered_names(runtime, "fault")["mcp__fault__add_tool"] == "add_tool"


def test_calls_return_the_servers_text_and_validate_arguments_first(hermes):
    runtime = hermes({"fault": support.fault_server()})
    assert call(runtime, "mcp__fault__echo", text="hello") == "hello"
    assert "missing required argument 'text'" in error_of(call(runtime, "mcp__fault__echo"))


def test_calls_from_many_threads_share_one_session(hermes):
    runtime = hermes({"fault": support.fault_server()})
    results: dict[int, str] = {}

    def worker(index: int) -> None:
        results[index] = call(runtime, "mcp__fault__echo", text=f"call {index}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {i: f"call {i}" for i in range(16)}


def test_tool_error_result_becomes_a_hermes_error(hermes):
    runtime = hermes({"fault": support.fault_server()})
    message = error_of(call(runtime, "mcp__fault__fail"))
    assert "the fault server failed on purpose" in message and "mcp__fault__fail" in message


def test_call_that_never_answers_times_out_and_the_server_stays_usable(hermes):
    runtime = hermes({"fault": {**support.fault_server(), "timeout": 1}})
    assert "did not answer within 1 s" in error_of(call(runtime, "mcp__fault__hang"))
    assert call(runtime, "mcp__fault__echo", text="still here") == "still here"


def test_handshake_that_never_answers_leaves_the_server_unavailable(hermes):
    runtime = hermes({"slow": {**support.fault_server("--hang-handshake"), "connect_timeout": 0.5}})
    state = status(runtime, "slow")
    assert state.state in ("unavailable", "connecting") and state.tools == []
    assert runtime.mcp.wait_for(lambda: "no answer to the MCP handshake within 0.5 s"
                                in (status(runtime, "slow").last_error or ""), WAIT)


def test_garbage_on_stdout_is_ignored_and_logged(hermes, isolated_home, caplog):
    runtime = hermes({"fault": support.fault_server()})
    with caplog.at_level(logging.ERROR, logger="mcp"):
        assert call(runtime, "mcp__fault__garbage") == "answered after garbage"
    assert not [r for r in caplog.records if "Failed to parse" in r.getMessage()]
    assert call(runtime, "mcp__fault__echo", text="after") == "after"
    log_text = (isolated_home / "logs" / "mcp-fault.log").read_text()
    assert "ignored output that is not MCP: 'this line is not JSON-RPC'" in log_text


def test_server_writing_only_garbage_fails_to_connect_with_the_reason(hermes):
    runtime = hermes({"junk": {**support.fault_server("--garbage-only"), "connect_timeout": 1}})
    errors: list[str] = []

    def failed_on_garbage() -> bool:
        errors.append(status(runtime, "junk").last_error or "")
        return "not MCP messages" in errors[-1]

    assert runtime.mcp.wait_for(failed_on_garbage, WAIT), errors
    assert "no answer to the MCP handshake within 1 s" in errors[-1]
    assert "garbage instead of JSON-RPC" in errors[-1]


def test_server_dying_mid_call_is_unavailable_with_the_reason_then_reconnected(hermes, tmp_path):
    required = tmp_path / "may-start"
    required.touch()
    runtime = hermes({"fault": support.fault_server("--require", str(required))})
    first_pid = int(call(runtime, "mcp__fault__pid"))
    required.unlink()  # the restarts fail until the file is back
    message = error_of(call(runtime, "mcp__fault__die"))
    assert "went away during the call" in message and "dying on purpose" in message
    availability = runtime.registry.check("mcp__fault__echo")
    assert not availability.available and "MCP server 'fault' is unavailable" in availability.reason
    assert "unavailable" in error_of(call(runtime, "mcp__fault__echo", text="x"))
    assert "mcp__fault__echo" not in {d["function"]["name"] for d in runtime.get_tool_definitions()}
    assert runtime.mcp.wait_for(lambda: "required file is missing" in (status(runtime, "fault").last_error or ""),
                                WAIT)
    required.touch()
    assert runtime.mcp.wait_for(lambda: status(runtime, "fault").state == "ready", WAIT)
    assert call(runtime, "mcp__fault__echo", text="back") == "back"
    assert int(call(runtime, "mcp__fault__pid")) != first_pid
    assert status(runtime, "fault").attempts >= 3


def test_list_changed_registers_new_tools_and_deregisters_vanished_ones(hermes):
    runtime = hermes({"fault": support.fault_server()})
    generation = runtime.registry.generation
    assert call(runtime, "mcp__fault__add_tool", name="fresh") == "added"
    assert runtime.mcp.wait_for(lambda: "mcp__fault__fresh" in runtime.registry, WAIT)
    assert runtime.registry.generation > generation
    assert call(runtime, "mcp__fault__fresh") == "fresh ran"
    assert "mcp__fault__fresh" in runtime.resolve_toolset("fault")
    assert call(runtime, "mcp__fault__remove_tool", name="fresh") == "removed"
    assert runtime.mcp.wait_for(lambda: "mcp__fault__fresh" not in runtime.registry, WAIT)
    assert status(runtime, "fault").list_changes == 2 and status(runtime, "fault").relists >= 2


def test_long_tool_names_fit_in_64_characters_and_map_back(hermes):
    runtime = hermes({"fault": support.fault_server()})
    original = "a_tool_whose_name_is_much_too_long_for_a_function_name_" + "x" * 30
    call(runtime, "mcp__fault__add_tool", name=original)
    assert runtime.mcp.wait_for(lambda: len(status(runtime, "fault").tools) == 10, WAIT)
    [registered] = [n for n, name in support.registered_names(runtime, "fault").items() if name == original]
    assert len(registered) == MAX_TOOL_NAME
    assert call(runtime, registered) == f"{original} ran"


def test_collision_with_a_non_mcp_tool_skips_the_mcp_tool_with_a_warning(hermes, caplog):
    def host_tool(runtime: Runtime) -> None:
        runtime.register_tool("mcp__fault__echo", "mine", {"description": "mine"}, lambda args, **kw: "mine")

    with caplog.at_level(logging.WARNING, logger="hermes_core.mcp"):
        runtime = hermes({"fault": support.fault_server()}, before=host_tool)
    assert call(runtime, "mcp__fault__echo", text="x") == "mine"
    assert "mcp__fault__echo" not in status(runtime, "fault").tools
    assert "already exists (toolset 'mine')" in status(runtime, "fault").skipped["echo"]
    assert any("'echo' skipped" in r.getMessage() for r in caplog.records)
    assert call(runtime, "mcp__fault__pid").isdigit()


def test_include_and_exclude_select_tools(hermes):
    runtime = hermes({
        "only": {**support.fault_server(), "tools": {"include": ["echo", "p*"]}},
        "most": {**support.fault_server(), "tools": {"exclude": ["die", "hang", "*_tool"]}},
    })
    assert sorted(status(runtime, "only").tools) == ["mcp__only__echo", "mcp__only__pid"]
    most = status(runtime, "most").tools
    assert "mcp__most__echo" in most and not {"mcp__most__die", "mcp__most__hang", "mcp__most__add_tool"} & set(most)


def test_disabled_misconfigured_and_missing_servers_are_reported_not_raised(hermes):
    runtime = hermes({
        "off": {**support.fault_server(), "enabled": False},
        "neither": {"args": ["x"]},
        "missing": {"command": "hermes-no-such-command-anywhere"},
        "ok": support.fault_server(),
    })
    states = {s.name: s for s in runtime.mcp.status()}
    assert states["off"].state == "disabled" and states["off"].attempts == 0
    assert "either 'command'" in states["neither"].last_error
    assert "command not found" in states["missing"].last_error
    assert states["ok"].state == "ready"
    assert not any(name.startswith(("mcp__off__", "mcp__missing__")) for name in runtime.registry.names())


def test_environment_references_are_expanded_for_the_server(hermes, monkeypatch):
    monkeypatch.setenv("HERMES_TEST_SECRET", "s3cret")
    runtime = hermes({"fault": {**support.fault_server(), "env": {"TOKEN": "Bearer ${HERMES_TEST_SECRET}"}}})
    assert call(runtime, "mcp__fault__env", name="TOKEN") == "Bearer s3cret"
    assert call(runtime, "mcp__fault__env", name="HERMES_MCP_DEPTH") == "1"


def test_stderr_goes_to_the_servers_log_file(hermes, isolated_home):
    runtime = hermes({"fault": support.fault_server()})
    pid = call(runtime, "mcp__fault__pid")
    log_text = (isolated_home / "logs" / "mcp-fault.log").read_text()
    assert f"fault server {pid} starting" in log_text
    assert status(runtime, "fault").log_file == str(isolated_home / "logs" / "mcp-fault.log")


def test_close_leaves_no_child_process_and_removes_the_tools(hermes):
    runtime = hermes({"a": support.fault_server(), "b": support.fault_server()})
    pids = [int(call(runtime, "mcp__a__pid")), int(call(runtime, "mcp__b__pid"))]
    error_of(call(runtime, "mcp__a__die"))
    assert runtime.mcp.wait_for(lambda: status(runtime, "a").state == "ready", WAIT)
    pids.append(int(call(runtime, "mcp__a__pid")))
    assert all(support.alive(pid) for pid in pids[1:])
    runtime.close()
    assert not any(support.alive(pid) for pid in pids)
    assert not [name for name in runtime.registry.names() if name.startswith("mcp__")]
    assert "a" not in runtime.toolsets.aliases()


def test_mcp_is_imported_only_when_a_server_is_connected(isolated_home):
    code = ("import sys, json; from hermes_core import Runtime; r = Runtime(); r.load_plugins(); "
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types'))))")
    (isolated_home / "config.yaml").write_text("mcp_servers: {}\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(result.stdout) == []
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"f": support.fault_server()}}))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            timeout=scaled_timeout(60))
    assert json.loads(result.stdout) == []  # loading lists from the cache and connects nothing
    connected = code.replace("r.load_plugins();", "r.load_plugins(); r.get_tool_definitions();") + "; r.close()"
    result = subprocess.run([sys.executable, "-c", connected], capture_output=True, text=True, check=True,
                            timeout=scaled_timeout(60))
    assert "mcp" in json.loads(result.stdout)


# -- the listing cache: listing never waits for a server -------------------------------------------

LISTING = """
import json, sys
from hermes_core import Runtime
runtime = Runtime()
runtime.load_plugins()
print(json.dumps({"tools": sorted(n for n in runtime.registry.names() if n.startswith("mcp__")),
                  "states": {s.name: s.state for s in runtime.mcp.status()},
                  "available": runtime.registry.check("mcp__fault__echo").available
                  if "mcp__fault__echo" in runtime.registry else None,
                  "mcp_imported": "mcp" in sys.modules}))
"""


def listing_in_a_new_process() -> dict:
    result = subprocess.run([sys.executable, "-c", LISTING], capture_output=True, text=True, check=True,
                            timeout=scaled_timeout(60))
    return json.loads(result.stdout)


def fault_tools(runtime: Runtime) -> list[str]:
    return sorted(n for n in runtime.registry.names() if n.startswith("mcp__fault__"))


def test_a_new_process_lists_the_last_listing_without_connecting(hermes, isolated_home):
    runtime = hermes({"fault": support.fault_server()})
    listed = fault_tools(runtime)
    runtime.close()
    log_file = isolated_home / "logs" / "mcp-fault.log"
    starts = log_file.read_text().count("starting with")
    seen = listing_in_a_new_process()
    assert seen == {"tools": listed, "states": {"fault": "cached"}, "available": True, "mcp_imported": False}
    assert log_file.read_text().count("starting with") == starts  # no server process was started


def test_the_first_call_of_a_cached_tool_connects_the_server(hermes, isolated_home):
    hermes({"fault": support.fault_server()}).close()
    runtime = Runtime(home=isolated_home)
    try:
        runtime.load_plugins()
        assert status(runtime, "fault").state == "cached"
        assert call(runtime, "mcp__fault__echo", text="from the cache") == "from the cache"
        assert status(runtime, "fault").state == "ready"
    finally:
        runtime.close()


def test_changing_a_servers_config_makes_its_listing_stale(hermes, isolated_home):
    hermes({"fault": support.fault_server()}).close()
    config = yaml.safe_load((isolated_home / "config.yaml").read_text())
    config["mcp_servers"]["fault"]["tools"] = {"include": ["echo"]}
    (isolated_home / "config.yaml").write_text(yaml.safe_dump(config))
    assert listing_in_a_new_process()["tools"] == [] and listing_in_a_new_process()["states"] == {"fault": "connecting"}


def test_a_cache_file_of_another_shape_counts_as_no_listing(hermes, isolated_home):
    hermes({"fault": support.fault_server()}).close()
    for content in ("{}", "[]", '{"format": 1, "server": "fault", "config": "x", "tools": [1]}', "\xff not json"):
        (isolated_home / "cache" / "mcp-fault.json").write_text(content, encoding="latin-1")
        assert listing_in_a_new_process()["states"] == {"fault": "connecting"}


def test_a_dead_server_listed_before_costs_a_listing_nothing(hermes, isolated_home, tmp_path):
    required = tmp_path / "may-start"
    required.touch()
    hermes({"fault": support.fault_server("--require", str(required))}).close()
    required.unlink()  # from now on the server exits at once
    starts = (isolated_home / "logs" / "mcp-fault.log").read_text().count("starting with")
    listed = subprocess.run([*support.hermes_command(), "tools", "list", "--json"], capture_output=True, text=True,
                            timeout=scaled_timeout(60))
    assert listed.returncode == 0, listed.stderr
    assert "mcp__fault__echo" in {row["name"] for row in json.loads(listed.stdout)}
    assert (isolated_home / "logs" / "mcp-fault.log").read_text().count("starting with") == starts
    runtime = Runtime(home=isolated_home)
    try:
        runtime.load_plugins()
        assert "required file is missing" in error_of(call(runtime, "mcp__fault__echo", text="x"))
        assert not runtime.registry.check("mcp__fault__echo").available  # after the failed call: unavailable
    finally:
        runtime.close()


def test_get_tool_definitions_connects_a_server_never_listed_once(isolated_home):
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"fault": support.fault_server()}}))
    runtime = Runtime(home=isolated_home)
    try:
        runtime.load_plugins()
        assert status(runtime, "fault").state == "connecting" and fault_tools(runtime) == []
        names = {d["function"]["name"] for d in runtime.get_tool_definitions()}
        assert "mcp__fault__echo" in names and status(runtime, "fault").state == "ready"
        assert (isolated_home / "cache" / "mcp-fault.json").is_file()
    finally:
        runtime.close()


def test_get_tool_definitions_waits_for_a_server_never_listed_at_most_its_connect_timeout(isolated_home):
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {
        "slow": {**support.fault_server("--hang-handshake"), "connect_timeout": 0.5}}}))
    runtime = Runtime(home=isolated_home)
    try:
        runtime.load_plugins()
        assert runtime.get_tool_definitions() == []
        assert "no answer to the MCP handshake within 0.5 s" in status(runtime, "slow").last_error
    finally:
        runtime.close()


NEVER_ANSWERS = {"command": sys.executable, "args": ["-c", "import time; time.sleep(3600)"],
                 "connect_timeout": 3600}


@pytest.mark.parametrize("command", [["--help"], ["plugins", "list"], ["toolsets", "list"]])
def test_commands_with_a_server_that_never_answers_return_without_waiting_for_it(isolated_home, command):
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"silent": NEVER_ANSWERS}}))
    result = subprocess.run([*support.hermes_command(), *command], capture_output=True, text=True,
                            timeout=scaled_timeout(60))
    assert result.returncode == 0, result.stderr


def test_tools_list_waits_for_a_server_never_listed_at_most_its_connect_timeout(isolated_home):
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {
        "silent": {**NEVER_ANSWERS, "connect_timeout": 1}}}))
    result = subprocess.run([*support.hermes_command(), "tools", "list"], capture_output=True, text=True,
                            timeout=scaled_timeout(60))
    assert result.returncode == 0, result.stderr
    assert "silent" not in result.stdout


def test_hermes_mcp_list_shows_state_tool_count_and_last_error(isolated_home):
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {
        "fault": support.fault_server(),
        "slow": {**support.fault_server("--hang-handshake"), "connect_timeout": 0.5},
        "off": {**support.fault_server(), "enabled": False},
    }, "mcp": {"list_timeout": scaled_timeout(60)}}))  # a new server's first start, however loaded the machine
    hermes = support.hermes_command()
    listed = subprocess.run([*hermes, "mcp", "list", "--json"], capture_output=True, text=True,
                            timeout=scaled_timeout(120))
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["fault"]["state"] == "ready" and len(rows["fault"]["tools"]) == 9
    assert rows["slow"]["state"] == "unavailable" and "no answer to the MCP handshake" in rows["slow"]["last_error"]
    assert rows["off"]["state"] == "disabled"
    table = subprocess.run([*hermes, "mcp", "list"], capture_output=True, text=True, timeout=scaled_timeout(120))
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split()[:4] == ["NAME", "STATE", "TOOLS", "TRANSPORT"]
    assert any(line.split()[:3] == ["fault", "ready", "9"] for line in lines)
    assert any(line.startswith("slow") and "no answer" in line for line in lines)


def test_hermes_mcp_list_without_servers_says_how_to_add_them(isolated_home):
    result = subprocess.run([*support.hermes_command(), "mcp", "list"], capture_output=True, text=True,
                            timeout=scaled_timeout(60))
    assert result.returncode == 0 and "mcp_servers:" in result.stdout


# -- servers this project did not write ------------------------------------------------------


@pytest.mark.network
def test_mcp_server_time_from_pypi_over_stdio(hermes, external):
    runtime = hermes({"time": external.time_server()})
    assert set(status(runtime, "time").tools) == {"mcp__time__get_current_time", "mcp__time__convert_time"}
    now = json.loads(call(runtime, "mcp__time__get_current_time", timezone="Europe/Paris"))
    assert now["timezone"] == "Europe/Paris" and "datetime" in now
    converted = json.loads(call(runtime, "mcp__time__convert_time", source_timezone="UTC", time="12:00",
                                target_timezone="Asia/Tokyo"))
    assert converted["target"]["datetime"].startswith(converted["source"]["datetime"][:10]) \
        or "T21:00" in converted["target"]["datetime"]
    assert "Invalid timezone" in error_of(call(runtime, "mcp__time__get_current_time", timezone="Mars/Base"))


EVERYTHING_TOOLS = {"echo", "get-sum", "get-tiny-image", "get-structured-content", "get-env", "simulate-research-query"}


def _check_everything(runtime: Runtime, server: str) -> None:
    names = set(support.registered_names(runtime, server).values())
    assert names >= EVERYTHING_TOOLS
    assert call(runtime, f"mcp__{server}__echo", message="hi") == "Echo: hi"
    assert call(runtime, f"mcp__{server}__get-sum", a=2, b=40) == "The sum of 2 and 40 is 42."
    image = call(runtime, f"mcp__{server}__get-tiny-image")
    assert "[image: " in image and "(image/png, " in image  # saved in the results folder, its path in the text
    weather = call(runtime, f"mcp__{server}__get-structured-content", location="Chicago")
    assert set(json.loads(weather)) == {"temperature", "conditions", "humidity"}


@pytest.mark.network
def test_server_everything_over_stdio_including_its_tool_list_change(hermes, external, monkeypatch):
    monkeypatch.setenv("HERMES_TEST_VALUE", "from-the-environment")
    runtime = hermes({"everything": {**external.everything_stdio(),
                                     "env": {"HERMES_SEEN": "${HERMES_TEST_VALUE}"}}})
    # The server adds tools once the client is initialized and announces it with list_changed.
    assert runtime.mcp.wait_for(lambda: status(runtime, "everything").relists >= 1, WAIT)
    assert status(runtime, "everything").list_changes >= 1
    assert "mcp__everything__simulate-research-query" in runtime.registry
    _check_everything(runtime, "everything")
    assert json.loads(call(runtime, "mcp__everything__get-env"))["HERMES_SEEN"] == "from-the-environment"


@pytest.mark.network
def test_server_everything_over_streamable_http_and_its_restart(hermes, external):
    port = support.free_port()
    command = [external.node, external.everything, "streamableHttp"]
    with support.spawn_until(command, r"listening on port", env={"PORT": str(port)}) as (server, _):
        runtime = hermes({"web": {"url": f"http://127.0.0.1:{port}/mcp", "headers": {"X-Test": "1"}}})
        assert status(runtime, "web").state == "ready" and status(runtime, "web").transport == "http"
        _check_everything(runtime, "web")
        server.kill()
        server.wait()
        message = error_of(call(runtime, "mcp__web__get-sum", a=1, b=1))
        assert "went away" in message or "could not be reached" in message
        assert not runtime.registry.check("mcp__web__get-sum").available
    with support.spawn_until(command, r"listening on port", env={"PORT": str(port)}):
        assert runtime.mcp.wait_for(lambda: status(runtime, "web").state == "ready", WAIT)
        assert call(runtime, "mcp__web__get-sum", a=1, b=1) == "The sum of 1 and 1 is 2."
