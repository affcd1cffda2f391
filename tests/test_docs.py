"""The documentation site: it builds strictly, its reference pages match the code, its examples run,
and a new user who follows getting started ends up calling a tool."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path
from types import ModuleType
from typing import Any

import click
import pydantic
import pytest
import yaml
from click.testing import CliRunner

import hermes_core.calls.hooks
import hermes_core.cli
import hermes_core.plugins.manifest
import hermes_core.tools.toolsets
from hermes_core import Runtime
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.cli import cli
from hermes_core.cli.tools import tools
from hermes_core.mcp.client import ServerStatus
from hermes_core.plugins.manifest import parse_manifest
from hermes_core.state.pending import PendingWrites
from hermes_core.state.store import SessionStore

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MKDOCS_YML = ROOT / "mkdocs.yml"
#: Pages whose examples run somewhere else than in this process, and where.
RUN_ELSEWHERE = {"getting-started.md": "test_getting_started_runs_as_written (in a fresh venv)",
                 "agent-loops.md": "tests/test_agent_loop_examples.py (against a fake provider endpoint)",
                 "frameworks.md": "tests/test_frameworks_docs.py (each framework's offline model, in a venv)"}
FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```$", re.S | re.M)


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = load_generator()


def fences(page: Path) -> list[tuple[str, str]]:
    """``(info string, body)`` of every fenced block of a page, in order."""
    return [(m.group("info").strip(), m.group("body")) for m in FENCE.finditer(page.read_text(encoding="utf-8"))]


def blocks(page: Path, info: str) -> list[str]:
    return [body for kind, body in fences(page) if kind == info]


def nav_pages(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    return []


# -- generated pages -----------------------------------------------------------------------------


def test_generated_reference_pages_match_the_code() -> None:
    stale = [page.name for page in gen.stale_pages()]

    assert stale == [], f"out-of-date docs {stale}: run `python scripts/gen_docs.py` and commit the result"


def test_check_mode_lists_stale_pages_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    docs = shutil.copytree(DOCS, tmp_path / "docs")
    assert gen.main(["--check", "--docs", str(docs)]) == 0
    page = docs / "hooks.md"
    page.write_text(page.read_text().replace("### `post_tool_call`", "### `post_tool_call_old`"))
    capsys.readouterr()

    assert gen.main(["--check", "--docs", str(docs)]) == 1
    assert capsys.readouterr().out.strip().splitlines() == [f"out of date: {page}"]
    assert gen.main(["--docs", str(docs)]) == 0  # regenerating repairs it
    assert page.read_text() == (DOCS / "hooks.md").read_text()


def test_a_new_manifest_field_changes_the_manifest_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    extended = pydantic.create_model(
        "PluginManifest", __base__=hermes_core.plugins.manifest.PluginManifest,
        sandbox_profile=(str | None, pydantic.Field(None, description="Which sandbox profile the plugin needs.")))
    monkeypatch.setattr(hermes_core.plugins.manifest, "PluginManifest", extended)

    assert "| `sandbox_profile` | string or null | `null` | Which sandbox profile the plugin needs. |" in \
        gen.render_block("manifest-models")
    assert [page.name for page in gen.stale_pages()] == ["manifest.md"]


def test_a_manifest_field_without_a_description_stops_the_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    extended = pydantic.create_model("PluginManifest", __base__=hermes_core.plugins.manifest.PluginManifest,
                                     sandbox_profile=(str | None, None))
    monkeypatch.setattr(hermes_core.plugins.manifest, "PluginManifest", extended)

    with pytest.raises(gen.GenerationError, match=r"PluginManifest\.sandbox_profile has no Field\(description"):
        gen.render_block("manifest-models")


def test_a_new_hook_changes_the_hook_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    class Extended(hermes_core.calls.hooks.HermesHookSpecs):
        @hermes_core.calls.hooks.hookspec
        def on_tool_registered(self, tool_name: str) -> None:
            """A tool joined the registry."""

    monkeypatch.setattr(hermes_core.calls.hooks, "HermesHookSpecs", Extended)

    text = gen.render_block("hooks")
    assert "### `on_tool_registered`" in text and "A tool joined the registry." in text
    assert text.index("### `transform_tool_result`") < text.index("### `on_tool_registered`")
    assert [page.name for page in gen.stale_pages()] == ["hooks.md"]


def test_a_hook_argument_nobody_explained_stops_the_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    class Extended(hermes_core.calls.hooks.HermesHookSpecs):
        @hermes_core.calls.hooks.hookspec
        def on_budget(self, tokens_left: int) -> None:
            """The turn's budget changed."""

    monkeypatch.setattr(hermes_core.calls.hooks, "HermesHookSpecs", Extended)

    with pytest.raises(gen.GenerationError, match="'tokens_left' has no entry in HOOK_ARGUMENTS"):
        gen.render_block("hooks")


def test_a_new_cli_command_changes_the_cli_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    @click.command("export")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    def export(as_json: bool) -> None:
        """Export every tool definition."""

    monkeypatch.setitem(tools.commands, "export", export)

    text = gen.render_block("cli")
    assert "### `hermes tools export`" in text and "Export every tool definition." in text
    assert [page.name for page in gen.stale_pages()] == ["cli.md"]


def test_a_new_legacy_name_changes_the_toolsets_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(hermes_core.tools.toolsets.LEGACY_TOOLSETS, "shell_tools", ("terminal", "process"))

    assert "| `shell_tools` | `terminal`, `process` | `hermes-tools-terminal` |" in gen.render_block("toolsets-legacy")
    assert [page.name for page in gen.stale_pages()] == ["toolsets.md"]


def test_a_command_group_that_cannot_be_imported_stops_the_generator(monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture) -> None:
    groups = {**hermes_core.cli._GROUPS, "cron": ("hermes_core.cli.cron_unfinished", "Schedule tool calls.")}
    monkeypatch.setattr(hermes_core.cli, "_GROUPS", groups)

    with pytest.raises(gen.GenerationError, match=r"`hermes cron`: importing hermes_core\.cli\.cron_unfinished "
                                                  r"failed: ModuleNotFoundError"):
        gen.render_block("cli")
    assert gen.main(["--check"]) == 2
    assert "cron_unfinished" in capsys.readouterr().err


def test_generation_depends_on_nothing_but_the_code(monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> None:
    first = {page: text for page, text in gen.generated_pages().items()}
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "extra")
    plugin = isolated_home / "plugins" / "extra"  # a plugin that adds a CLI command must not show up
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(
        "def register(ctx):\n    ctx.register_cli_command('extra', 'An extra command', lambda parser: None)\n")

    assert gen.generated_pages() == first
    assert os.environ["HERMES_HOME"] == str(isolated_home)  # the generator's isolation was undone


def test_every_generated_block_sits_in_exactly_one_page(tmp_path: Path) -> None:
    docs = shutil.copytree(DOCS, tmp_path / "docs")
    page = docs / "security.md"
    page.write_text(re.sub(r"<!-- BEGIN GENERATED terminal-rules.*?END GENERATED terminal-rules -->", "",
                           page.read_text(), flags=re.S))

    with pytest.raises(gen.GenerationError, match="terminal-rules"):
        gen.generated_pages(docs)


# -- the site ---------------------------------------------------------------------------------------


def test_every_page_is_in_the_nav() -> None:
    nav = nav_pages(yaml.safe_load(MKDOCS_YML.read_text())["nav"])

    assert sorted(nav) == sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert len(nav) == len(set(nav))


def test_mkdocs_yml_names_each_key_once() -> None:
    """YAML keeps the last of two equal keys: a second ``plugins:`` silently dropped the offline plugin once."""
    keys = [node.value for node, _ in yaml.compose(MKDOCS_YML.read_text()).value]

    assert len(keys) == len(set(keys)), sorted(key for key in keys if keys.count(key) > 1)
    assert {"search", "offline"} <= {next(iter(p)) if isinstance(p, dict) else p
                                     for p in yaml.safe_load(MKDOCS_YML.read_text())["plugins"]}


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        pytest.skip("mkdocs and mkdocs-material are not installed (pip install -e '.[dev]')")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
                          timeout=scaled_timeout(300))


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    result = mkdocs_build(MKDOCS_YML, tmp_path / "site")

    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "cli.html").is_file()  # pages that work opened from disk (tests/test_docs_site.py)


def test_a_broken_link_or_a_page_outside_the_nav_fails_the_build(tmp_path: Path) -> None:
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(MKDOCS_YML, tmp_path / "mkdocs.yml")
    shutil.copytree(MKDOCS_YML.parent / "scripts", tmp_path / "scripts")  # the hooks mkdocs.yml names
    (tmp_path / "docs" / "orphan.md").write_text("# Orphan\n\nSee [the hooks](hooks.md#no-such-heading) and "
                                                 "[a page that is gone](gone.md).\n")

    result = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")

    assert result.returncode != 0
    for problem in ("orphan.md", "gone.md", "no-such-heading"):
        assert problem in result.stderr, result.stderr


# -- examples ------------------------------------------------------------------------------------------


EXAMPLE_PAGES = sorted(p for p in [*DOCS.rglob("*.md"), ROOT / "README.md"]
                       if p.name not in RUN_ELSEWHERE and blocks(p, "python"))
MANIFEST_PAGES = sorted(p for p in DOCS.rglob("*.md")
                        if any(body.startswith("# plugin.yaml") for body in blocks(p, "yaml")))


@pytest.mark.parametrize("page", EXAMPLE_PAGES, ids=lambda p: p.name)
def test_python_examples_run(page: Path, isolated_home: Path) -> None:
    """Every ```python block runs, a page's blocks in order in one namespace, in an isolated HERMES_HOME and an
    empty working directory; a ```text block right after one shows what it prints. The blocks run as the
    project's modules do, with postponed annotations, so file excerpts need not import their type hints."""
    parts = fences(page)
    code = [(index, body) for index, (kind, body) in enumerate(parts) if kind == "python"]
    namespace: dict[str, Any] = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for index, body in code:
            source = "from __future__ import annotations\n" + body
            try:
                exec(compile(source, f"{page.name}[block {index}]", "exec"), namespace)
            except Exception as exc:
                pytest.fail(f"{page.name}, python block {index}, raised {type(exc).__name__}: {exc}\n{body}")
    for index, _ in code:
        if index + 1 < len(parts) and parts[index + 1][0] == "text":
            assert parts[index + 1][1].strip() in printed.getvalue(), \
                f"{page.name} shows {parts[index + 1][1]!r} after block {index}; it printed {printed.getvalue()!r}"


@pytest.mark.parametrize("page", MANIFEST_PAGES, ids=lambda p: p.name)
def test_manifest_examples_validate(page: Path) -> None:
    for body in (body for body in blocks(page, "yaml") if body.startswith("# plugin.yaml")):
        manifest = parse_manifest(body, page.name)
        assert manifest.unknown_fields == [], page.name


def test_getting_started_runs_as_written(make_venv, wheelhouse: Path, tmp_path: Path) -> None:
    """The page's shell commands, then its Python, in a fresh venv; each ```text block is what they print.
    `pip install hermes-tools hermes-tools-file` installs from the session's wheelhouse instead of PyPI."""
    page = DOCS / "getting-started.md"
    commands = blocks(page, "sh")
    assert any(c.startswith("pip install hermes-tools hermes-tools-file") for c in commands), commands
    venv = make_venv("getting-started")
    bin_dir = venv.path / "bin"
    shim = bin_dir / "pip"  # the venv shares pip with the test interpreter; give it the command
    shim.write_text(f'#!/bin/sh\nexec "{venv.python}" -m pip "$@"\n')
    shim.chmod(0o755)
    work = tmp_path / "getting-started"
    work.mkdir()
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(venv.path),
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
           "COLUMNS": "100"}  # tables as a terminal of 100 columns shows them

    shell = venv.run("bash", "-c", "set -eux\n" + "\n".join(commands), env=env, cwd=work, timeout=600)
    assert shell.returncode == 0, shell.stdout + shell.stderr
    python = venv.run(venv.python, "-c", "\n".join(blocks(page, "python")), env=env, cwd=work)
    assert python.returncode == 0, python.stdout + python.stderr

    printed = shell.stdout + python.stdout
    for shown in blocks(page, "text"):
        assert shown.strip() in printed, f"getting-started.md shows {shown!r}; the commands printed {printed!r}"


# -- the JSON shapes of cli.md -------------------------------------------------------------------------

#: The command each "### `hermes ... --json`" section of cli.md documents, as run against a demo plugin.
JSON_COMMANDS = {
    "hermes plugins list --json": ["plugins", "list", "--json"],
    "hermes plugins info ID --json": ["plugins", "info", "demo", "--json"],
    "hermes plugins doctor --json": ["plugins", "doctor", "--json"],
    "hermes plugins freeze --json": ["plugins", "freeze", "--json"],
    "hermes plugins validate TARGET --json": ["plugins", "validate", "demo", "--json"],
    "hermes tools list --json": ["tools", "list", "--all", "--json"],
    "hermes tools show NAME --json": ["tools", "show", "demo_echo", "--json"],
    "hermes toolsets list --json": ["toolsets", "list", "--json"],
    "hermes toolsets show NAME --json": ["toolsets", "show", "demo-all", "--json"],
    "hermes plugins search --json": ["plugins", "search", "web", "--json", "--limit", "1"],
    "hermes mcp list --json": None,  # needs a live server: compared with ServerStatus instead
    "hermes skills list --json": ["skills", "list", "--json"],
    "hermes checkpoints list --json": ["checkpoints", "list", "--json"],
    "hermes cron list --json": ["cron", "list", "--json"],
    "hermes cron tick --json": ["cron", "run", "{job}", "--json"],  # a run now: a tick's report of a due run
    "hermes sessions list --json": ["sessions", "list", "--json"],
    "hermes sessions show ID --json": ["sessions", "show", "recorded", "--json"],
    "hermes sessions search --json": ["sessions", "search", "invoices", "--json"],
    "hermes sessions prune --json": ["sessions", "prune", "--older-than", "0", "--source", "nothing", "--json"],
    "hermes memory show --json": ["memory", "show", "--json"],
    "hermes memory pending --json": ["memory", "pending", "--json"],
    "hermes config show --json": ["config", "show", "--json"],
}
#: Listings whose shape another section gives.
JSON_ELSEWHERE = {"hermes index show": "hermes plugins search --json",
                  "hermes cron show": "hermes cron list --json", "hermes cron add": "hermes cron list --json",
                  "hermes cron run": "hermes cron tick --json",
                  "hermes skills show": "hermes skills list --json",
                  "hermes skills validate": "hermes skills list --json",
                  "hermes checkpoints diff": "hermes checkpoints list --json",
                  "hermes checkpoints restore": "hermes checkpoints list --json",
                  "hermes checkpoints prune": "hermes checkpoints list --json",
                  "hermes config get": "hermes config show --json"}

DEMO_MANIFEST = """\
name: demo
version: 1.0.0
requires_env: [{name: DEMO_KEY, description: an API key, secret: true}]
tools:
  - name: demo_echo
    toolset: demo
    description: Echo the text
    parameters: {type: object, properties: {text: {type: string}}, required: [text]}
    handler: .tools:echo
    check: {env: [DEMO_KEY]}
toolsets:
  - {name: demo-all, description: Everything of demo, includes: [demo]}
"""


def json_sections() -> dict[str, tuple[str, Any]]:
    """Heading -> (section text, its first ```json example) of the JSON output part of cli.md."""
    text = (DOCS / "cli.md").read_text().split("\n## JSON output\n", 1)[1]
    sections = {}
    for chunk in text.split("\n### ")[1:]:
        heading, _, body = chunk.partition("\n")
        example = re.search(r"^```json\n(.*?)^```$", body, re.S | re.M)
        sections[heading.strip("`")] = (body, json.loads(example.group(1)) if example else None)
    return sections


def shape_differences(documented: Any, actual: Any, where: str = "") -> list[str]:
    """Keys that differ between two JSON values, descending into lists of objects (not into data-keyed maps)."""
    if isinstance(documented, list) and isinstance(actual, list):
        return shape_differences(documented[0], actual[0], where + "[]") if documented and actual else []
    if not (isinstance(documented, dict) and isinstance(actual, dict)):
        return []
    problems = [f"{where}: documented but not printed: {sorted(set(documented) - set(actual))}"] \
        if set(documented) - set(actual) else []
    problems += [f"{where}: printed but not documented: {sorted(set(actual) - set(documented))}"] \
        if set(actual) - set(documented) else []
    for key in set(documented) & set(actual):
        if isinstance(actual[key], list) and actual[key] and isinstance(actual[key][0], dict):
            problems += shape_differences(documented[key], actual[key], f"{where}.{key}")
    return problems


def test_every_listing_with_json_output_is_documented() -> None:
    listed = []

    def walk(command: click.Command, path: list[str]) -> None:
        if isinstance(command, click.Group):  # lazy subcommands too: ask the group, not its table
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name), [*path, name])
        elif any("--json" in param.opts for param in command.params):
            listed.append(" ".join(path))

    for name, (module, _) in hermes_core.cli._GROUPS.items():
        walk(getattr(importlib.import_module(module), name), ["hermes", name])
    documented = {re.sub(r" (ID|NAME|TARGET)$", "", heading.split(" --json")[0]) for heading in json_sections()}

    assert set(JSON_COMMANDS) == set(json_sections())
    assert sorted(set(listed) - set(JSON_ELSEWHERE)) == sorted(documented)


def test_json_examples_have_the_keys_the_commands_print(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = isolated_home / "plugins" / "demo"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text(DEMO_MANIFEST)
    (folder / "tools.py").write_text("def echo(args, **kwargs):\n    return args['text']\n")
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "demo,cron")
    monkeypatch.setenv("DEMO_KEY", "set")  # `tools show` shows an available tool
    cron_pack = EntryPoint(name="cron", value="hermes_plugin_cron", group="hermes_agent.plugins")
    monkeypatch.setattr("hermes_core.runtime.installed_entry_points", lambda: [cron_pack])
    skill = isolated_home / "skills" / "devops" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Deploy the service\n---\n# Deploy\n")
    (Path.cwd() / "notes.txt").write_text("notes\n")  # a checkpoint of the working folder, for checkpoints list
    Runtime(home=isolated_home, workspace=Path.cwd(), entry_points=()).checkpoints.take("before write_file")
    store = SessionStore(isolated_home / "state.db")
    store.record("recorded", "user", "Which database did we pick for invoices?", source="cli")
    store.close()
    PendingWrites(isolated_home).stage({"action": "add", "target": "user", "content": "Name: Ada", "old_text": None},
                                       "add to user profile: Name: Ada")
    part = (DOCS / "cli.md").read_text().split("\n## JSON output\n", 1)[1]
    in_tables = {key for cell in re.findall(r"^\| ([^|]*) \|", part, re.M) for key in re.findall(r"`([^`]+)`", cell)}
    problems = []
    added = CliRunner().invoke(cli, ["cron", "add", "0 6 * * *", "--tool", "demo_echo", "--arguments",
                                     '{"text": "changes"}', "--json"])
    job = json.loads(added.output)["id"]
    assert CliRunner().invoke(cli, ["cron", "run", job]).exit_code == 0  # a job that ran: every key is there
    for heading, (_, example) in json_sections().items():
        args = [job if arg == "{job}" else arg for arg in JSON_COMMANDS[heading] or ()] or None
        if args is None:
            actual: Any = [dataclasses.asdict(ServerStatus(name="time", transport="stdio", state="ready"))]
        else:
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 0, f"{heading}: {result.output}"
            actual = json.loads(result.output)
        problems += [f"{heading}{problem}" for problem in shape_differences(example, actual)]
        record = actual[0] if isinstance(actual, list) else actual
        problems += [f"{heading}: key {key!r} is in no table" for key in record if key not in in_tables]

    assert problems == [], "\n".join(problems)


def _extras() -> dict[str, dict[str, list[str]]]:
    """The optional dependencies of hermes-tools and of each pack, by distribution name."""
    import tomllib

    projects = [tomllib.loads(path.read_text())["project"]
                for path in [ROOT / "pyproject.toml", *sorted(ROOT.glob("hermes_plugins/*/pyproject.toml"))]]
    return {project["name"]: project.get("optional-dependencies", {}) for project in projects}


def test_every_extra_an_install_line_names_exists():
    """`pip install 'hermes-tools[x]'` in any page, README or pack README names an extra of that distribution."""
    extras = _extras()
    pages = [*DOCS.glob("*.md"), ROOT / "README.md", *ROOT.glob("hermes_plugins/*/README.md")]
    named = [(page.name, distribution, extra) for page in pages
             for distribution, listed in re.findall(r"(hermes-tools(?:-[a-z]+)?)\[([\w,-]+)\]", page.read_text())
             for extra in listed.split(",")]
    assert ("frameworks.md", "hermes-tools", "langgraph") in named
    missing = [item for item in named if item[2] not in extras.get(item[1], {})]
    assert missing == [], "install lines name extras that do not exist"


def test_every_install_from_a_clone_names_a_project_of_the_repository_and_its_extras():
    """`pip install ./hermes/...` (a clone named hermes), the docs' way while the packs are not on the package
    index, names a folder of this repository holding a project, with extras that project has."""
    import tomllib

    named = [(page.name, folder.strip("/"), extras)
             for page in [ROOT / "README.md", DOCS / "getting-started.md", DOCS / "writing-plugins.md"]
             for folder, extras in re.findall(r"\./hermes((?:/[\w.-]+)*)(?:\[([\w,-]+)\])?", page.read_text())]
    assert ("writing-plugins.md", "", "scaffold") in named
    assert ("getting-started.md", "hermes_plugins/file", "") in named
    problems = []
    for page, folder, extras in named:
        pyproject = ROOT / folder / "pyproject.toml"
        if not pyproject.is_file():
            problems.append(f"{page}: ./hermes/{folder} holds no project")
            continue
        offered = tomllib.loads(pyproject.read_text())["project"].get("optional-dependencies", {})
        problems += [f"{page}: ./hermes/{folder} has no extra {extra!r}" for extra in extras.split(",") if extra
                     and extra not in offered]
    assert problems == []


def test_the_langgraph_extra_brings_what_the_frameworks_example_imports():
    requirements = {re.split(r"[<>=\[; ]", requirement)[0] for requirement in _extras()["hermes-tools"]["langgraph"]}
    imported = set(re.findall(r"^from (langgraph|langchain_core)\b", (DOCS / "frameworks.md").read_text(), re.M))
    assert {"langgraph"} <= imported and {name.replace("_", "-") for name in imported} <= requirements
