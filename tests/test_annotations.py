"""Tool annotations — ``read_only``, ``destructive``, ``idempotent``, ``open_world`` — from each source (a
manifest, ``register_tool``, ``@tool``, an MCP server, the first-party packs) reach the MCP definitions,
``hermes tools list|show --json``, and an MCP client of ``hermes mcp serve``."""

from __future__ import annotations

import json
import sys
import textwrap
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from click.testing import CliRunner
from hermes_repository_packs import packs  # scripts/packs.py, loaded by the repository's conftest.py

from hermes_core import Runtime
from hermes_core.authoring.compile import compile_manifest
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.cli import cli
from hermes_core.errors import ManifestError
from hermes_core.plugin import ToolAnnotations, tool
from hermes_core.plugins.manifest import load_manifest, parse_manifest

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py
ROOT = Path(__file__).resolve().parent.parent
ANNOTATED_SERVER = Path(__file__).resolve().parent / "fixtures" / "mcp" / "annotated_server.py"
WAIT = scaled_timeout(30.0)

#: A declared plugin: its tools and what they may do, from plugin.yaml alone.
NOTES_MANIFEST = """\
name: notes
version: "1.0"
tools:
  - name: notes_read
    toolset: notes
    description: Read a note
    parameters: {type: object, properties: {title: {type: string}}, required: [title]}
    handler: .tools:read
    annotations: {read_only: true, open_world: false}
  - name: notes_delete
    toolset: notes
    description: Delete a note
    parameters: {type: object, properties: {title: {type: string}}, required: [title]}
    handler: .tools:delete
    annotations: {read_only: false, destructive: true, idempotent: true}
  - name: notes_mystery
    toolset: notes
    description: Says nothing about itself
    parameters: {type: object, properties: {}}
    handler: .tools:read
"""
NOTES_TOOLS = "def read(args, **kw):\n    return 'read'\n\ndef delete(args, **kw):\n    return 'deleted'\n"

#: A plugin whose register(ctx) gives annotations, by Hermes' names and by MCP's.
CODED_PLUGIN = """
SCHEMA = {"description": "Count the words", "parameters": {"type": "object", "properties": {}}}

def register(ctx):
    ctx.register_tool("count_words", "coded", SCHEMA, lambda args, **kw: "3",
                      annotations={"read_only": True, "open_world": False})
    ctx.register_tool("send_mail", "coded", {**SCHEMA, "description": "Send a mail"}, lambda args, **kw: "sent",
                      annotations={"readOnlyHint": False, "destructiveHint": False, "openWorldHint": True})
"""

NOTES_MCP = {"notes_read": {"readOnlyHint": True, "openWorldHint": False},
             "notes_delete": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}}
CODED_MCP = {"count_words": {"readOnlyHint": True, "openWorldHint": False},
             "send_mail": {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": True}}
SERVER_MCP = {"lookup": {"readOnlyHint": True, "openWorldHint": False},
              "store": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True},
              "contradictory": {"readOnlyHint": True}}


def mcp_hints(definitions: list[dict[str, Any]]) -> dict[str, dict[str, bool] | None]:
    return {d["name"]: d.get("annotations") for d in definitions}


def annotated_server() -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(ANNOTATED_SERVER)]}


@pytest.fixture
def notes_and_coded(plugins: Any) -> None:
    plugins.folder("notes", NOTES_MANIFEST, files={"tools.py": NOTES_TOOLS})
    plugins.folder("coded", "name: coded\nversion: '1.0'\n", CODED_PLUGIN)


# -- the model of annotations -----------------------------------------------------------------------------


def test_annotations_read_hermes_and_mcp_names_and_keep_what_is_unsaid_unknown():
    annotations = ToolAnnotations.of({"read_only": False, "destructiveHint": True})
    assert annotations.as_dict() == {"read_only": False, "destructive": True}
    assert annotations.mcp() == {"readOnlyHint": False, "destructiveHint": True}
    assert (annotations.idempotent, annotations.open_world) == (None, None)
    assert ToolAnnotations.of(None) == ToolAnnotations() and ToolAnnotations().as_dict() == {}


@pytest.mark.parametrize(("given", "problem"), [
    ({"readonly": True}, "unknown annotation 'readonly'; the annotations are read_only, destructive"),
    ({"read_only": "yes"}, "annotation 'read_only' must be true, false or absent, not 'yes'"),
    ({"read_only": 1}, "annotation 'read_only' must be true, false or absent, not 1"),
    ({"read_only": True, "destructive": True}, "contradict each other"),
    (["read_only"], "annotations must be a mapping"),
])
def test_invalid_annotations_are_refused_naming_the_problem(given, problem):
    ToolAnnotations.of({"read_only": True})  # read before (and remembered): 1 == True must not find it
    with pytest.raises(ValueError, match=problem.replace("(", r"\(")):
        ToolAnnotations.of(given)


def test_mcp_hints_that_are_not_booleans_are_dropped_and_a_read_only_tool_destroys_nothing():
    assert ToolAnnotations.from_mcp({"readOnlyHint": "yes", "openWorldHint": True}).as_dict() == {"open_world": True}
    assert ToolAnnotations.from_mcp({"readOnlyHint": True, "destructiveHint": True}).as_dict() == {"read_only": True}
    assert ToolAnnotations.from_mcp(None) == ToolAnnotations()


def test_invalid_manifest_annotations_name_the_tool_and_the_field():
    manifest = NOTES_MANIFEST.replace("annotations: {read_only: true, open_world: false}",
                                      "annotations: {read_only: true, writes: false}")
    with pytest.raises(ManifestError, match=r"tools\.0\.annotations\.writes"):
        parse_manifest(manifest)
    contradiction = NOTES_MANIFEST.replace("read_only: false, destructive: true", "read_only: true, destructive: true")
    with pytest.raises(ManifestError, match="contradict each other"):
        parse_manifest(contradiction)


def test_register_tool_refuses_invalid_annotations_naming_the_tool(hermes_runtime: Runtime):
    with pytest.raises(ValueError, match="tool 'bad': unknown annotation 'safe'"):
        hermes_runtime.register_tool("bad", "t", {"description": "x"}, lambda args, **kw: "", annotations={"safe": 1})
    assert "bad" not in hermes_runtime.registry


# -- parallel_safe follows read_only ----------------------------------------------------------------------


def test_parallel_safe_defaults_to_read_only_and_an_explicit_value_wins(hermes_runtime: Runtime):
    def register(name: str, **options: Any) -> Any:
        hermes_runtime.register_tool(name, "t", {"description": name}, lambda args, **kw: "", **options)
        return hermes_runtime.registry.get(name)

    assert register("looks", annotations={"read_only": True}).parallel_safe is True
    assert register("writes", annotations={"read_only": False}).parallel_safe is False
    assert register("unsaid").parallel_safe is False
    assert register("looks_but_serial", annotations={"read_only": True}, parallel_safe=False).parallel_safe is False
    assert register("writes_in_parallel", parallel_safe=True).parallel_safe is True


def test_a_declared_read_only_tool_is_parallel_safe_without_saying_so(plugins: Any, notes_and_coded: None):
    runtime = plugins.runtime()
    runtime.load_plugins()
    assert runtime.registry.get("notes_read").parallel_safe is True
    assert runtime.registry.get("notes_delete").parallel_safe is False
    assert not plugins.imported("notes")  # annotations come from plugin.yaml: nothing was imported


# -- the sources reach the MCP definitions and the CLI ----------------------------------------------------


def test_manifest_and_register_tool_annotations_reach_the_mcp_definitions(plugins: Any, notes_and_coded: None):
    runtime = plugins.runtime()
    runtime.load_plugins()
    hints = mcp_hints(runtime.get_tool_definitions(format="mcp"))
    assert hints == {**NOTES_MCP, "notes_mystery": None, **CODED_MCP}
    # the other formats have no place for them: the model's definitions are unchanged
    openai = runtime.get_tool_definitions()
    assert all(set(d) == {"type", "function"} and "annotations" not in d["function"] for d in openai)


def test_tool_decorator_annotations_reach_the_registry_and_plugin_yaml(hermes_runtime: Runtime, plugins: Any):
    @tool(toolset="words", annotations={"read_only": True})
    def shout(text: str) -> str:
        """Shout the text"""
        return text.upper()

    hermes_runtime.context("words").register_tool(shout)
    entry = hermes_runtime.registry.get("shout")
    assert entry.annotations.as_dict() == {"read_only": True} and entry.parallel_safe is True
    assert mcp_hints(hermes_runtime.get_tool_definitions(format="mcp")) == {"shout": {"readOnlyHint": True}}

    folder = plugins.folder("words", None, "", files={"tools.py": textwrap.dedent('''\
        from hermes_core.plugin import tool


        @tool(toolset="words", annotations={"read_only": False, "destructive": True})
        def erase(text: str) -> str:
            """Erase the text"""
            return ""
        ''')})
    compile_manifest(folder)
    declared = load_manifest(folder / "plugin.yaml").tools[0]
    assert declared.annotations.model_dump(exclude_none=True) == {"read_only": False, "destructive": True}
    assert "parallel_safe" not in (folder / "plugin.yaml").read_text()  # its default says it
    assert compile_manifest(folder).unchanged == ["erase"]


def test_tools_show_json_and_tools_list_show_the_annotations(plugins: Any, notes_and_coded: None):
    runner = CliRunner()
    shown = json.loads(runner.invoke(cli, ["tools", "show", "notes_delete", "--json"]).output)
    assert shown["annotations"] == {"read_only": False, "destructive": True, "idempotent": True}
    assert shown["parallel_safe"] is False and shown["available"] is True
    assert shown["definition"]["function"]["name"] == "notes_delete"
    coded = json.loads(runner.invoke(cli, ["tools", "show", "send_mail", "--json"]).output)
    assert coded["annotations"] == {"read_only": False, "destructive": False, "open_world": True}
    # without --json: the definition exactly as the model sees it, as before
    plain = json.loads(runner.invoke(cli, ["tools", "show", "notes_read"]).output)
    assert plain == {"type": "function", "function": {"name": "notes_read", "description": "Read a note",
                                                      "parameters": {"type": "object", "properties": {
                                                          "title": {"type": "string"}}, "required": ["title"]}}}

    listed = {row["name"]: row["annotations"] for row in
              json.loads(runner.invoke(cli, ["tools", "list", "--json"]).output)}
    assert listed["notes_read"] == {"read_only": True, "open_world": False} and listed["notes_mystery"] == {}
    header, *lines = runner.invoke(cli, ["tools", "list"]).output.splitlines()
    assert header.split()[:3] == ["NAME", "TOOLSET", "DOES"]
    table = {line.split()[0]: line.split()[2] for line in lines}
    assert table == {"notes_read": "read-only", "notes_delete": "destructive", "notes_mystery": "-",
                     "count_words": "read-only", "send_mail": "writes"}


def test_tools_show_json_describes_an_unavailable_tool_too(plugins: Any):
    plugins.folder("gated", NOTES_MANIFEST.replace("name: notes\n", "name: gated\n").replace(
        "    annotations: {read_only: true, open_world: false}",
        "    annotations: {read_only: true, open_world: false}\n    check: {env: [NOTES_TOKEN]}"),
        files={"tools.py": NOTES_TOOLS})
    result = CliRunner().invoke(cli, ["tools", "show", "notes_read", "--json"])
    shown = json.loads(result.output)
    assert shown["available"] is False and "NOTES_TOKEN" in shown["reason"] and shown["definition"] is None
    assert shown["annotations"] == {"read_only": True, "open_world": False}
    failed = CliRunner().invoke(cli, ["tools", "show", "notes_read"])
    assert failed.exit_code == 1 and "unavailable" in failed.output


def test_validate_warns_about_each_declared_tool_that_does_not_say_whether_it_is_read_only(plugins: Any):
    folder = plugins.folder("notes", NOTES_MANIFEST.replace(
        "    annotations: {read_only: false, destructive: true, idempotent: true}",
        "    annotations: {destructive: true}"), files={"tools.py": NOTES_TOOLS})
    result = CliRunner().invoke(cli, ["plugins", "validate", str(folder)])
    assert result.exit_code == 0, result.output
    warned = [line for line in result.output.splitlines() if "counts as one that may change things" in line]
    assert [line.split(":")[1].strip() for line in warned] == ["tool notes_delete", "tool notes_mystery"]
    assert "do not say whether it is read-only" in warned[0] and "declares no annotations" in warned[1]
    assert all(line.startswith("warning: ") for line in warned) and "valid (3 declared tools" in result.output
    annotated = plugins.folder("annotated", NOTES_MANIFEST.replace("name: notes\n", "name: annotated\n").replace(
        "    handler: .tools:read\n", "    handler: .tools:read\n    annotations: {read_only: true}\n", 2)
        .replace("    annotations: {read_only: true}\n    annotations:", "    annotations:"),
        files={"tools.py": NOTES_TOOLS})
    clean = CliRunner().invoke(cli, ["plugins", "validate", str(annotated)])
    assert clean.exit_code == 0 and "warning" not in clean.output, clean.output


# -- an MCP server's annotations ----------------------------------------------------------------------------


@pytest.fixture
def mcp_runtime(isolated_home: Path) -> Any:
    made: list[Runtime] = []

    def start(**server: Any) -> Runtime:
        config = {"mcp_servers": {"ann": {**annotated_server(), **server}}}
        (isolated_home / "config.yaml").write_text(yaml.safe_dump(config))
        runtime = Runtime(home=isolated_home, entry_points=())
        made.append(runtime)
        runtime.load_plugins()
        runtime.start_mcp()  # loading lists from the cache; connect now
        assert runtime.mcp.wait_for(lambda: support.server_status(runtime, "ann").state == "ready", WAIT), \
            support.server_status(runtime, "ann")
        return runtime

    yield start
    for runtime in made:
        runtime.close()


def test_an_mcp_servers_annotations_reach_the_registry_definitions_and_tools_show(mcp_runtime: Any):
    runtime = mcp_runtime()
    hints = mcp_hints(runtime.get_tool_definitions(format="mcp"))
    assert hints == {f"mcp__ann__{name}": value for name, value in {**SERVER_MCP, "plain": None}.items()}
    assert runtime.registry.get("mcp__ann__lookup").parallel_safe is True
    assert runtime.registry.get("mcp__ann__store").parallel_safe is False
    shown = json.loads(CliRunner().invoke(cli, ["tools", "show", "mcp__ann__store", "--json"]).output)
    assert shown["annotations"] == {"read_only": False, "destructive": True, "idempotent": True}
    assert shown["plugin"] == "mcp:ann"


def test_a_server_whose_annotations_are_not_trusted_has_tools_that_count_as_writing(mcp_runtime: Any):
    runtime = mcp_runtime(trust_annotations=False)
    assert set(mcp_hints(runtime.get_tool_definitions(format="mcp")).values()) == {None}
    assert not runtime.registry.get("mcp__ann__lookup").read_only
    assert runtime.filtered(read_only=True).select_tools()[0] == []


# -- hermes mcp serve sends them ------------------------------------------------------------------------------


async def served_tools(command: list[str], home: Path, cwd: Path | None = None) -> dict[str, Any]:
    """The tools an SDK client lists from ``command`` (a ``hermes mcp serve``) over stdio."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async with AsyncExitStack() as stack:
        params = StdioServerParameters(command=command[0], args=command[1:], env={"HERMES_HOME": str(home)},
                                       cwd=cwd)
        errlog = stack.enter_context(open(home / "serve-stderr.log", "a"))  # noqa: SIM115
        read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        session = await stack.enter_async_context(ClientSession(read, write))
        with anyio.fail_after(WAIT):
            await session.initialize()
            return {tool.name: tool for tool in (await session.list_tools()).tools}


def sdk_hints(tools: dict[str, Any]) -> dict[str, dict[str, bool] | None]:
    return {name: tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else None
            for name, tool in tools.items()}


def test_an_sdk_client_of_hermes_mcp_serve_gets_the_annotations_of_every_source(tmp_path: Path):
    home = tmp_path / "served-home"
    (home / "plugins" / "notes").mkdir(parents=True)
    (home / "plugins" / "notes" / "plugin.yaml").write_text(NOTES_MANIFEST)
    (home / "plugins" / "notes" / "tools.py").write_text(NOTES_TOOLS)
    (home / "plugins" / "coded").mkdir()
    (home / "plugins" / "coded" / "plugin.yaml").write_text("name: coded\nversion: '1.0'\n")
    (home / "plugins" / "coded" / "__init__.py").write_text(CODED_PLUGIN)
    (home / "config.yaml").write_text(yaml.safe_dump({"plugins": {"enabled": ["notes", "coded"]},
                                                      "mcp_servers": {"ann": annotated_server()}}))
    command = [*support.hermes_command(), "mcp", "serve"]
    hints = sdk_hints(anyio.run(served_tools, command, home))
    # tools of a server Hermes is a client of are re-served as <server>__<tool>
    assert hints == {**NOTES_MCP, "notes_mystery": None, **CODED_MCP,
                     **{f"ann__{name}": value for name, value in {**SERVER_MCP, "plain": None}.items()}}


# -- the first-party packs ------------------------------------------------------------------------------------

#: Every first-party pack that declares tools (scripts/packs.py lists the packs).
PACKS = [pack.name for pack in packs() if load_manifest(pack.manifest).tools]
#: What the issue names, and what the packs must keep saying.
FIRST_PARTY = {
    "read_file": {"read_only": True}, "search_files": {"read_only": True},
    "web_search": {"read_only": True, "open_world": True}, "web_extract": {"read_only": True, "open_world": True},
    "write_file": {"read_only": False, "destructive": True}, "patch": {"read_only": False, "destructive": True},
    "terminal": {"read_only": False, "destructive": True, "open_world": True},
    "execute_code": {"read_only": False, "destructive": True, "open_world": True},
    "vision_analyze": {"read_only": True, "open_world": True}, "video_analyze": {"read_only": True, "open_world": True},
    "image_generate": {"read_only": False, "destructive": False, "open_world": True},
    "text_to_speech": {"read_only": False, "destructive": False},
    "cronjob": {"read_only": False, "destructive": True, "open_world": True},
}


def pack_manifest(pack: str) -> Any:
    return load_manifest(ROOT / "hermes_plugins" / pack / f"hermes_plugin_{pack}" / "plugin.yaml")


@pytest.mark.parametrize("pack", PACKS)
def test_every_first_party_tool_says_whether_it_is_read_only(pack: str):
    manifest = pack_manifest(pack)
    assert manifest.tools and all(declared.annotations and declared.annotations.read_only is not None
                                  for declared in manifest.tools)


def test_the_first_party_tools_say_what_they_may_do():
    declared = {tool.name: tool.annotations.model_dump(exclude_none=True)
                for pack in PACKS for tool in pack_manifest(pack).tools or ()}
    for name, expected in FIRST_PARTY.items():
        assert declared[name].items() >= expected.items(), name


def test_the_first_party_packs_annotations_reach_the_mcp_definitions(pack_runtime: Any):
    runtime = pack_runtime({}, ("hermes_plugin_file", "file"), ("hermes_plugin_web", "web"),
                           ("hermes_plugin_terminal", "terminal"))
    hints = mcp_hints(runtime.get_tool_definitions(format="mcp"))
    assert hints["read_file"] == {"readOnlyHint": True, "openWorldHint": False}
    assert hints["write_file"]["readOnlyHint"] is False and hints["patch"]["destructiveHint"] is True
    assert hints["terminal"] == {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
                                 "openWorldHint": True}
    assert hints["web_extract"] == {"readOnlyHint": True, "openWorldHint": True}


def test_installed_packs_show_their_annotations_in_the_cli_and_over_mcp_serve(make_venv: Any, tmp_path: Path):
    env = make_venv("annotated-packs")
    env.install("hermes-tools-file", "hermes-tools-web", "hermes-tools-terminal", extra=("--no-deps",))
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "served-workspace"
    work.mkdir()
    shown = env.hermes_cli("tools", "show", "write_file", "--json", env={"HERMES_HOME": str(home)})
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["annotations"] == {"read_only": False, "destructive": True, "idempotent": True,
                                                       "open_world": False}
    listed = env.hermes_cli("tools", "list", env={"HERMES_HOME": str(home)}).stdout
    assert {line.split()[0]: line.split()[2] for line in listed.splitlines()}.items() >= {
        "read_file": "read-only", "terminal": "destructive", "web_extract": "read-only"}.items()

    hints = sdk_hints(anyio.run(served_tools, [env.hermes, "mcp", "serve"], home, work))
    assert hints["read_file"] == {"readOnlyHint": True, "openWorldHint": False}
    assert hints["terminal"]["destructiveHint"] is True and hints["terminal"]["openWorldHint"] is True
    assert hints["web_extract"] == {"readOnlyHint": True, "openWorldHint": True}
