"""Write the generated parts of the documentation from the code, so the reference cannot drift from it.

    python scripts/gen_docs.py           rewrite every generated block under docs/
    python scripts/gen_docs.py --check   rewrite nothing; exit 1 listing the pages that are out of date

A page keeps its hand-written prose; only the text between

    <!-- BEGIN GENERATED name -->
    <!-- END GENERATED name -->

is replaced, by the output of the block called ``name`` in ``BLOCKS`` (the idea of cog, as llm's docs use
it). Every block must appear in exactly one page, and the output depends on nothing but the code: no
dates, no terminal width, no installed plugins.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import inspect
import json
import os
import re
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PUBLISHED_SCHEMA = ROOT / "hermes_core" / "schemas" / "plugin-manifest.schema.json"

#: Width of the ``--help`` texts, fixed so the terminal that runs the generator changes nothing.
HELP_WIDTH = 88

BLOCK = re.compile(r"(<!-- BEGIN GENERATED (?P<name>[\w.-]+)[^\n]*?-->\n)(?P<body>.*?)"
                   r"(<!-- END GENERATED (?P=name) -->)", re.S)
MARKER = re.compile(r"<!-- (?:BEGIN|END) GENERATED ([\w.-]+)")


class GenerationError(RuntimeError):
    """The docs cannot be generated: the message says what is missing and where."""


# -- helpers -------------------------------------------------------------------------------------


def markdown_doc(text: str | None) -> str:
    """A docstring as Markdown: reST's double backticks and roles become plain code spans."""
    text = inspect.cleandoc(text or "")
    text = re.sub(r":(?:class|meth|func|mod|data|attr|exc):`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`")


def cell(text: str) -> str:
    """Text that fits in one Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)


def code(value: str) -> str:
    return f"`{value}`"


def literal(value: Any) -> str:
    """A default value as the reader would write it in YAML or JSON."""
    return json.dumps(value, ensure_ascii=False)


def python_literal(value: Any) -> str:
    """A default value as it appears in Python source (double-quoted strings, as the codebase writes them)."""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)


def format_signature(name: str, function: Callable[..., Any], skip_self: bool = True) -> str:
    """``name(a: int, b: str = "x") -> bool`` from the source annotations, one parameter per line when long."""
    signature = inspect.signature(function)
    parts = []
    for parameter in signature.parameters.values():
        if skip_self and parameter.name == "self":
            continue
        text = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}.get(
            parameter.kind, "") + parameter.name
        if parameter.annotation is not inspect.Parameter.empty:
            text += f": {_annotation(parameter.annotation)}"
        if parameter.default is not inspect.Parameter.empty:
            text += f" = {python_literal(parameter.default)}"
        parts.append(text)
    returns = signature.return_annotation
    tail = f" -> {_annotation(returns)}" if returns is not inspect.Signature.empty else ""
    one_line = f"{name}({', '.join(parts)}){tail}"
    if len(one_line) <= HELP_WIDTH:
        return one_line
    return f"{name}(\n" + "".join(f"    {part},\n" for part in parts) + f"){tail}"


def _annotation(annotation: Any) -> str:
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)


@contextlib.contextmanager
def isolated_environment() -> Iterator[None]:
    """No plugins and an empty HERMES_HOME while generating: what is installed must not change a byte."""
    from hermes_core import reset_default_runtime

    saved = {name: os.environ.get(name) for name in ("HERMES_HOME", "HERMES_SAFE_MODE", "HERMES_LOAD_PLUGINS",
                                                     "HERMES_ENABLE_PROJECT_PLUGINS")}
    with tempfile.TemporaryDirectory(prefix="hermes-docs-") as home:
        os.environ.update(HERMES_HOME=home, HERMES_SAFE_MODE="1")
        os.environ.pop("HERMES_LOAD_PLUGINS", None)
        os.environ.pop("HERMES_ENABLE_PROJECT_PLUGINS", None)
        reset_default_runtime()
        try:
            yield
        finally:
            reset_default_runtime()
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


# -- the manifest ----------------------------------------------------------------------------------


def _link(name: str) -> str:
    return f"[{name}](#{name.lower()})"


def _schema_type(prop: dict[str, Any], link: Callable[[str], str] = _link) -> str:
    """The type of a JSON Schema property in words; ``link`` names the models it refers to."""
    if "$ref" in prop:
        return link(prop["$ref"].rsplit("/", 1)[-1])
    if "anyOf" in prop:
        options = [option for option in prop["anyOf"] if option != {"type": "null"}]
        text = " or ".join(_schema_type(option, link) for option in options)
        return text + (" or null" if len(options) < len(prop["anyOf"]) else "")
    if "enum" in prop:
        return " or ".join(code(str(value)) for value in prop["enum"])
    kind = prop.get("type")
    if kind == "array":
        if not prop.get("items"):
            return "list"
        items = _schema_type(prop["items"], link)
        return f"list of {items}s" if items in ("string", "integer", "number", "boolean") else f"list of {items}"
    if kind == "object":
        values = prop.get("additionalProperties")
        return f"mapping of string to {_schema_type(values, link)}" if isinstance(values, dict) and values \
            else "mapping"
    if kind is None:
        return "any"
    bounds = [f"{sign} {prop[key]}" for key, sign in (("minimum", "≥"), ("exclusiveMinimum", ">"),
                                                       ("maximum", "≤"), ("exclusiveMaximum", "<")) if key in prop]
    return kind + (f" ({', '.join(bounds)})" if bounds else "")


def _model_order(schema: dict[str, Any]) -> list[str]:
    """Model names in reading order: the root, then each definition where a field first refers to it."""
    order: list[str] = []

    def visit(name: str, properties: dict[str, Any]) -> None:
        order.append(name)
        for prop in properties.values():
            for ref in re.findall(r'"\$ref": "#/\$defs/([^"]+)"', json.dumps(prop)):
                if ref not in order:
                    visit(ref, schema["$defs"][ref].get("properties", {}))

    visit(schema["title"], schema.get("properties", {}))
    return order


def block_manifest_models() -> str:
    """One section per model of ``plugin.yaml``: every field's type, default and description."""
    manifest = importlib.import_module("hermes_core.plugins.manifest")
    root_model = manifest.PluginManifest
    schema = manifest.manifest_json_schema()
    schema["title"] = root_model.__name__
    sections = []
    for name in _model_order(schema):
        model = root_model if name == root_model.__name__ else getattr(manifest, name, None)
        if model is None:
            raise GenerationError(f"the manifest schema refers to {name}, which hermes_core.plugins.manifest does not "
                                  "export")
        properties = schema["properties"] if model is root_model else schema["$defs"][name]["properties"]
        rows = []
        for field_name, field in model.model_fields.items():
            key = field.alias or field_name
            if not field.description:
                raise GenerationError(f"{name}.{field_name} has no Field(description=...): the manifest reference "
                                      "is written from the descriptions")
            default = "required" if field.is_required() else \
                code(literal(field.get_default(call_default_factory=True)))
            rows.append([code(key), _schema_type(properties[key]), default, field.description])
        extra = model.model_config.get("extra")
        note = "Unknown fields are an error." if extra == "forbid" else ""
        sections.append(f"### {name}\n\n{markdown_doc(model.__doc__)}" + (f" {note}" if note else "")
                        + "\n\n" + table(["field", "type", "default", "description"], rows))
    return "\n\n".join(sections)


def block_manifest_schema() -> str:
    """The published JSON Schema, as shipped in hermes-tools."""
    text = PUBLISHED_SCHEMA.read_text(encoding="utf-8").rstrip("\n")
    return '??? example "plugin-manifest.schema.json"\n\n    ```json\n' + textwrap.indent(text, "    ") + "\n    ```"


# -- the plugin index ------------------------------------------------------------------------------

#: Keys ``hermes plugins search --json`` adds to an index entry (``entry_record`` in hermes_core/cli/index.py).
SEARCH_KEYS = [
    ["`installed`", "string or null", "The installed version of its distribution, else `null`."],
    ["`score`", "number", "How well it matches the query; higher is better (search only)."],
]


def block_index_entry() -> str:
    """The fields of an index entry in ``plugins search --json``, from the model's descriptions."""
    index = importlib.import_module("hermes_core.index.catalog")
    model = index.IndexEntry
    schema = model.model_json_schema()

    def shape(name: str) -> str:  # a nested model, as the keys of its objects
        return "`{" + ", ".join(schema["$defs"][name]["properties"]) + "}`"

    rows = [[code(field.alias or name), _schema_type(schema["properties"][field.alias or name], shape),
             field.description or ""] for name, field in model.model_fields.items()]
    return table(["key", "type", "meaning"], rows + SEARCH_KEYS)


# -- hooks --------------------------------------------------------------------------------------------

#: What each hook argument means. A new argument without an entry here stops the generator.
HOOK_ARGUMENTS: dict[str, str] = {
    "tool_name": "The name of the tool being called.",
    "args": "The call's arguments, parsed, coerced and validated against the tool's schema.",
    "task_id": "The agent's task the call belongs to, as the caller passed it (else `None`).",
    "session_id": "The conversation the call belongs to, as the caller passed it (else `None`).",
    "tool_call_id": "The model's id for this tool call (`id` of the OpenAI tool call), else `None`.",
    "turn_id": "The agent loop's turn, when the loop passes it (Hermes itself passes `None`).",
    "api_request_id": "The model API request that produced the call, when the loop passes it (else `None`).",
    "middleware_trace": "`plugin:stage` entries of the middleware and hooks that changed the arguments so far.",
    "result": "The tool's result: the handler's string, or the `{\"error\": ...}` JSON that replaced it.",
    "duration_ms": "How long the call took, hooks included, in milliseconds.",
    "status": "`ok`, `error` (the handler raised) or `blocked` (a `pre_tool_call` hook refused it).",
    "error_type": "The exception's type name when `status` is `error`, `Blocked` when blocked, else `None`.",
    "error_message": "The exception's message, or the reason the call was blocked, else `None`.",
    "command": "The shell command the `terminal` tool ran.",
    "output": "Its output (stdout and stderr interleaved), already capped; a replacement is capped again.",
    "returncode": "Its exit code (negative: the shell was killed by that signal).",
    "env_type": "The execution backend it ran on: `local`, `sandbox`, `ssh` or a plugin's backend name.",
}


def _hookspecs() -> list[tuple[str, Callable[..., Any], dict[str, Any]]]:
    """``(name, function, options)`` of every hookspec, in the order the class (and its bases) define them."""
    specs_class = importlib.import_module("hermes_core.calls.hooks").HermesHookSpecs
    found: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {}
    for klass in reversed(specs_class.__mro__):
        for name, value in vars(klass).items():
            options = getattr(value, "hermes_spec", None)
            if options is not None:
                found[name] = (value, options)
    return [(name, function, options) for name, (function, options) in found.items()]


def block_hooks() -> str:
    """Each hookspec: its signature, docstring, arguments and how its results are combined."""
    sections = []
    for name, function, options in _hookspecs():
        parameters = [p for p in inspect.signature(function).parameters.values() if p.name != "self"]
        rows = []
        for parameter in parameters:
            meaning = HOOK_ARGUMENTS.get(parameter.name)
            if meaning is None:
                raise GenerationError(f"hook {name}: argument {parameter.name!r} has no entry in HOOK_ARGUMENTS "
                                      "of scripts/gen_docs.py; say what it means there")
            rows.append([code(parameter.name), code(_annotation(parameter.annotation)), meaning])
        if options.get("firstresult"):
            calling = "Implementations are called in order until one returns something other than `None`."
        else:
            calling = "Every implementation is called, in registration order."
        sections.append(f"### `{name}`\n\n```python skip\n{format_signature(name, function)}\n```\n\n"
                        f"{markdown_doc(function.__doc__)}\n\n{calling}\n\n"
                        + table(["argument", "type", "meaning"], rows))
    return "\n\n".join(sections)


def block_hooks_known() -> str:
    """The hook names Hermes accepts besides its own hookspecs (Hermes Agent's, for the agent loop)."""
    hooks = importlib.import_module("hermes_core.calls.hooks")
    own = {name for name, _, _ in _hookspecs()}
    others = sorted(set(hooks.KNOWN_HOOKS) - own)
    return "\n".join(f"- `{name}`" for name in others)


# -- PluginContext -------------------------------------------------------------------------------------

#: Attributes whose assignment in ``__init__`` carries no ``#:`` comment.
ATTRIBUTE_FALLBACK = {
    "plugin_id": "The plugin's id: its entry-point name, or its folder's name for a directory plugin.",
}


def _init_attributes(cls: type) -> list[tuple[str, str]]:
    """Public ``self.x = ...`` attributes of ``cls.__init__`` with the ``#:`` comment above each."""
    source = textwrap.dedent(inspect.getsource(cls.__init__))
    lines = source.splitlines()
    attributes = []
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                    and target.value.id == "self" and not target.attr.startswith("_"):
                comment = []
                row = node.lineno - 2
                while row >= 0 and lines[row].strip().startswith("#:"):
                    comment.insert(0, lines[row].strip()[2:].strip())
                    row -= 1
                text = " ".join(comment) or ATTRIBUTE_FALLBACK.get(target.attr, "")
                attributes.append((node.lineno, target.attr, text))
    return [(name, text) for _, name, text in sorted(attributes)]


def block_context() -> str:
    """``PluginContext``: its attributes, then every public method with its signature and docstring."""
    context = importlib.import_module("hermes_core.plugins.context")
    cls = context.PluginContext
    attributes = _init_attributes(cls)
    rows = [[code(name), markdown_doc(text) or "—"] for name, text in attributes]
    parts = ["### Attributes\n\n" + table(["attribute", "what it holds"], rows)]
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, property):
            parts.append(f"### `{name}`\n\n{markdown_doc(member.__doc__) or '—'}")
        elif callable(member):
            doc = markdown_doc(member.__doc__) or "_No docstring._"
            parts.append(f"### `{name}`\n\n```python skip\nctx.{format_signature(name, member)}\n```\n\n{doc}")
    kinds = ", ".join(code(kind) for kind in sorted(context.MIDDLEWARE_KINDS))
    parts.append(f"### Middleware kinds\n\n`register_middleware` accepts: {kinds}.")
    return "\n\n".join(parts)


# -- the command line --------------------------------------------------------------------------------


def _help(command: Any, path: list[str], parent: Any) -> tuple[str, Any]:
    """The ``--help`` text of ``command`` and its context (which its subcommands' contexts inherit from)."""
    ctx = command.make_context(path[-1], [], parent=parent, resilient_parsing=True, terminal_width=HELP_WIDTH,
                               max_content_width=HELP_WIDTH)
    return command.get_help(ctx), ctx


def _walk(group: Any, path: list[str], parent: Any, depth: int) -> list[str]:
    import click

    sections = []
    for name in group.list_commands(parent):
        command = group.get_command(parent, name)
        if command is None or command.hidden:
            continue
        text, ctx = _help(command, [*path, name], parent)
        title = " ".join([*path, name])
        sections.append(f"{'#' * depth} `{title}`\n\n```text\n{text}\n```")
        if isinstance(command, click.Group):
            sections += _walk(command, [*path, name], ctx, depth + 1)
    return sections


def block_cli() -> str:
    """``--help`` of ``hermes`` and of every command below it, lazily loaded groups included."""
    import click

    cli_module = importlib.import_module("hermes_core.cli")
    root = cli_module.cli
    for name, (module, _) in cli_module._GROUPS.items():
        try:
            importlib.import_module(module)
        except Exception as exc:
            raise GenerationError(f"cannot document `hermes {name}`: importing {module} failed: "
                                  f"{type(exc).__name__}: {exc}") from exc
    with isolated_environment():
        text, ctx = _help(root, ["hermes"], None)
        sections = [f"## `hermes`\n\n```text\n{text}\n```"]
        for name in cli_module._GROUPS:
            group = root.get_command(ctx, name)
            if not isinstance(group, click.Group):
                raise GenerationError(f"hermes_core.cli._GROUPS names {name!r}, but its module has no click group "
                                      f"called {name}")
            group_text, group_ctx = _help(group, ["hermes", name], ctx)
            sections.append(f"## `hermes {name}`\n\n```text\n{group_text}\n```")
            sections += _walk(group, ["hermes", name], group_ctx, 3)
    return "\n\n".join(sections)


# -- toolsets -----------------------------------------------------------------------------------------


def _packs() -> list[tuple[str, Any]]:
    """``(distribution, manifest)`` of every first-party pack in the repository, by pack folder."""
    from hermes_core.plugins.manifest import load_manifest

    try:
        from packs import packs  # scripts/packs.py: this folder is on sys.path when the script runs
    except ImportError:
        from hermes_repository_packs import packs  # the same module, loaded by the repository's conftest.py

    found = []
    for pack in packs(ROOT):
        if not pack.manifest.is_file():
            raise GenerationError(f"{pack.folder.relative_to(ROOT)}: expected {pack.package}/plugin.yaml")
        found.append((pack.distribution, load_manifest(pack.manifest)))
    return found


def _providers() -> dict[str, str]:
    """Tool name -> the first-party distribution that declares it."""
    return {tool.name: distribution for distribution, manifest in _packs() for tool in manifest.tools or []}


def block_toolsets_packs() -> str:
    """What each first-party pack provides, read from its plugin.yaml."""
    rows = []
    for distribution, manifest in _packs():
        tools = manifest.tools or []
        toolsets = sorted({tool.toolset for tool in tools} | {t.name for t in manifest.toolsets})
        rows.append([code(distribution), ", ".join(map(code, toolsets)), ", ".join(code(t.name) for t in tools),
                     manifest.description])
    return table(["distribution", "toolsets", "tools", "description"], rows)


def block_toolsets_presets() -> str:
    """The core presets: their tools, written against the first preset when they share most of them."""
    toolsets = importlib.import_module("hermes_core.tools.toolsets")
    presets = toolsets.PRESETS
    reference = next(iter(presets.values()))
    rows = []
    for name, preset in presets.items():
        if preset.tools == reference.tools and name != reference.name:
            tools = f"the tools of `{reference.name}`"
        elif name != reference.name and preset.tools and set(preset.tools) < set(reference.tools):
            missing = [t for t in reference.tools if t not in preset.tools]
            tools = f"`{reference.name}` without " + ", ".join(map(code, missing))
        else:
            tools = ", ".join(map(code, preset.tools)) or "—"
        includes = ", ".join(map(code, preset.includes)) or "—"
        rows.append([code(name), preset.description, tools, includes])
    providers = _providers()
    covered = [tool for tool in reference.tools if tool in providers]
    uncovered = [tool for tool in reference.tools if tool not in providers]
    return (table(["preset", "description", "tools", "includes"], rows)
            + f"\n\nOf the {len(reference.tools)} tools of `{reference.name}`, the first-party packs provide "
            + ", ".join(f"`{t}` ({providers[t]})" for t in covered)
            + ". The others come from plugins you install (or from the agent loop): "
            + ", ".join(map(code, uncovered)) + ".")


def block_toolsets_hermes_agent() -> str:
    """Hermes Agent's general and scenario toolsets, as this project resolves them."""
    toolsets = importlib.import_module("hermes_core.tools.toolsets")
    rows = [[code(name), toolset.description, ", ".join(map(code, toolset.tools)) or "—",
             ", ".join(map(code, toolset.includes)) or "—"]
            for name, toolset in toolsets.HERMES_AGENT_TOOLSETS.items()]
    return table(["name", "description", "tools", "includes"], rows)


def block_toolsets_not_shipped() -> str:
    """The tools of Hermes Agent's toolsets that no first-party pack ships, grouped by why."""
    toolsets = importlib.import_module("hermes_core.tools.toolsets")
    grouped: dict[str, list[str]] = {}
    for tool, reason in toolsets.NOT_SHIPPED.items():
        grouped.setdefault(reason, []).append(tool)
    return table(["tools", "why"], [[", ".join(map(code, tools)), reason] for reason, tools in grouped.items()])


def block_toolsets_legacy() -> str:
    """Hermes Agent's legacy ``*_tools`` names and the tools they stand for."""
    toolsets = importlib.import_module("hermes_core.tools.toolsets")
    providers = _providers()
    rows = []
    for name, tools in toolsets.LEGACY_TOOLSETS.items():
        packs = sorted({providers[t] for t in tools if t in providers})
        rows.append([code(name), ", ".join(map(code, tools)), ", ".join(map(code, packs)) or "—"])
    return table(["legacy name", "tools", "first-party pack"], rows)


# -- security -----------------------------------------------------------------------------------------


def block_terminal_rules() -> str:
    """The terminal pack's danger rules: key, level and what the command does."""
    pack = str(ROOT / "hermes_plugins" / "terminal")  # the repository's pack, not whichever version may be installed
    if pack not in sys.path:
        sys.path.insert(0, pack)
    danger = importlib.import_module("hermes_plugin_terminal.danger")
    rows = [[code(rule.key), str(rule.level), f"the command {rule.reason}"] for rule in danger.RULES]
    return table(["rule key", "level", "matches when"], rows)


#: The example backend plugin of docs/backends.md: the files of the distribution the tests install.
BACKEND_EXAMPLE = ROOT / "tests" / "fixtures" / "dists" / "ulimit-backend"
BACKEND_EXAMPLE_FILES = ("pyproject.toml", "hermes_backend_ulimit/plugin.yaml", "hermes_backend_ulimit/__init__.py",
                         "hermes_backend_ulimit/backend.py")


def block_backend_example() -> str:
    """Every file of the example backend plugin, as the tests build and install it."""
    fences = []
    for name in BACKEND_EXAMPLE_FILES:
        language = {".toml": "toml", ".yaml": "yaml", ".py": "python"}[Path(name).suffix]
        text = (BACKEND_EXAMPLE / name).read_text(encoding="utf-8").rstrip("\n")
        fences.append(f'```{language} title="{name}"\n{text}\n```')
    return "\n\n".join(fences)


BLOCKS: dict[str, Callable[[], str]] = {
    "manifest-models": block_manifest_models,
    "manifest-schema": block_manifest_schema,
    "hooks": block_hooks,
    "hooks-known": block_hooks_known,
    "context": block_context,
    "index-entry": block_index_entry,
    "cli": block_cli,
    "toolsets-packs": block_toolsets_packs,
    "toolsets-presets": block_toolsets_presets,
    "toolsets-legacy": block_toolsets_legacy,
    "toolsets-hermes-agent": block_toolsets_hermes_agent,
    "toolsets-not-shipped": block_toolsets_not_shipped,
    "terminal-rules": block_terminal_rules,
    "backend-example": block_backend_example,
}


# -- pages --------------------------------------------------------------------------------------------


def render_block(name: str) -> str:
    if name not in BLOCKS:
        raise GenerationError(f"unknown generated block {name!r}; known: {', '.join(BLOCKS)}")
    return BLOCKS[name]().rstrip("\n") + "\n"


def render_page(text: str, where: str = "page") -> str:
    """``text`` with every generated block rewritten."""
    names = MARKER.findall(text)
    for name in set(names):
        if names.count(name) != 2:
            raise GenerationError(f"{where}: generated block {name!r} needs one BEGIN and one END marker")
    return BLOCK.sub(lambda m: m.group(1) + render_block(m.group("name")) + m.group(4), text)


def generated_pages(docs: Path = DOCS) -> dict[Path, str]:
    """Every page that holds generated blocks, with its up-to-date text."""
    pages: dict[Path, str] = {}
    placed: dict[str, Path] = {}
    for page in sorted(docs.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        names = BLOCK.findall(text)
        if not names:
            continue
        for _, name, _, _ in names:
            if name in placed:
                raise GenerationError(f"generated block {name!r} appears in {placed[name].name} and {page.name}")
            placed[name] = page
        pages[page] = render_page(text, page.name)
    missing = [name for name in BLOCKS if name not in placed]
    if missing:
        raise GenerationError(f"no page under {docs.name}/ holds the generated block(s) {', '.join(missing)}")
    return pages


def stale_pages(docs: Path = DOCS) -> list[Path]:
    """Pages whose generated blocks differ from what the code generates now."""
    return [page for page, text in generated_pages(docs).items() if page.read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page is out of date")
    parser.add_argument("--docs", type=Path, default=DOCS, help="the docs folder (default: docs/)")
    options = parser.parse_args(argv)
    try:
        pages = generated_pages(options.docs)
    except GenerationError as exc:
        print(f"gen_docs: {exc}", file=sys.stderr)
        return 2
    stale = [page for page, text in pages.items() if page.read_text(encoding="utf-8") != text]
    if options.check:
        for page in stale:
            print(f"out of date: {_shown(page)}")
        if stale:
            print("run `python scripts/gen_docs.py` and commit the result", file=sys.stderr)
        return 1 if stale else 0
    for page in stale:
        page.write_text(pages[page], encoding="utf-8")
        print(f"wrote {_shown(page)}")
    return 0


def _shown(page: Path) -> str:
    try:
        return page.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(page)


if __name__ == "__main__":
    sys.exit(main())
