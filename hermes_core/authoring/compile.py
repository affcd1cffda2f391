"""``plugin.yaml`` from the code: ``hermes plugins compile`` writes the ``tools:`` entries of a plugin's ``@tool``
functions, and ``hermes plugins validate`` reports where the manifest and their signatures disagree.

The manifest stays the contract: it is what Hermes reads without importing the plugin. Finding the decorated
functions reads the package's source (``ast``); ``compile`` then imports the modules that hold them (never
``register()``) to derive each schema exactly; ``validate`` compares without importing anything, and with
``--imports`` against the derived schemas.
"""

from __future__ import annotations

import ast
import importlib
import io
import os
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config.yamlmodel import round_trip_node
from ..errors import CompileError
from ..plugins.discovery import GROUPS, PluginCandidate, candidate_for_validation, candidate_from_folder
from ..plugins.loader import importable_package
from ..plugins.manifest import ManifestError, ToolDeclaration, parse_manifest
from ..plugins.tool import ToolSpec, manifest_limit, tool_spec

__all__ = ["CompileError", "CompileResult", "compile_manifest", "manifest_drift"]

#: Folders under a package that hold no plugin code.
SKIPPED_FOLDERS = frozenset({"tests", "test", "__pycache__"})
#: A parameter as both sides describe it: its JSON types (None: not known statically) and whether it is required.
Signature = dict[str, tuple[frozenset[str] | None, bool]]


# -- finding decorated functions in the source --------------------------------------------------


@dataclass(frozen=True)
class FoundTool:
    """A function decorated with ``@tool``, as its module's source shows it (nothing imported)."""

    #: The module, dotted, relative to the plugin's package (``.tools``; ``""`` for the package itself).
    module: str
    function: str
    #: The tool's name: the decorator's ``name=`` when it is a literal, else the function's name.
    name: str
    #: The decorator's ``toolset=`` when it is a literal.
    toolset: str | None
    parameters: Signature
    path: Path
    line: int


_JSON_TYPES = {
    "str": "string", "int": "integer", "float": "number", "bool": "boolean", "None": "null", "NoneType": "null",
    "list": "array", "List": "array", "tuple": "array", "Tuple": "array", "set": "array", "Set": "array",
    "frozenset": "array", "FrozenSet": "array", "Sequence": "array", "Iterable": "array",
    "dict": "object", "Dict": "object", "Mapping": "object",
}


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _annotation_types(node: ast.expr | None) -> frozenset[str] | None:
    """The JSON types an annotation admits, when the source alone says (builtins, ``Optional``, ``Literal``...)."""
    if node is None:
        return None
    if isinstance(node, ast.Constant):
        if node.value is None:
            return frozenset({"null"})
        if isinstance(node.value, str):  # a quoted annotation
            try:
                return _annotation_types(ast.parse(node.value, mode="eval").body)
            except SyntaxError:
                return None
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([node.left, node.right])
    if isinstance(node, ast.Subscript):
        base = _dotted(node.value).rpartition(".")[2]
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base == "Annotated":
            return _annotation_types(items[0])
        if base == "Optional":
            found = _annotation_types(items[0])
            return found | {"null"} if found is not None else None
        if base == "Union":
            return _union(items)
        if base == "Literal":
            kinds = {_literal_type(item) for item in items}
            return None if None in kinds else frozenset(kind for kind in kinds if kind)
        node = node.value
    kind = _JSON_TYPES.get(_dotted(node).rpartition(".")[2])
    return frozenset({kind}) if kind else None


def _union(nodes: Iterable[ast.expr]) -> frozenset[str] | None:
    found: set[str] = set()
    for node in nodes:
        kinds = _annotation_types(node)
        if kinds is None:
            return None
        found |= kinds
    return frozenset(found)


def _literal_type(node: ast.expr) -> str | None:
    if not isinstance(node, ast.Constant):
        return None
    return {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}.get(type(node.value))


#: Where plugin code imports ``tool`` from: its public place, and its places in 0.2.
_TOOL_MODULES = ("hermes_core.plugin", "hermes_core", "hermes_core.authoring")


def _decorator_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Names ``tool`` is bound to in a module, and names ``hermes_core.plugin`` (or the 0.2 paths of ``tool``,
    ``hermes_core`` and ``hermes_core.authoring``) is bound to."""
    functions, modules = set(), set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module in _TOOL_MODULES:
            functions |= {alias.asname or alias.name for alias in node.names if alias.name == "tool"}
        elif isinstance(node, ast.Import):
            modules |= {alias.asname or alias.name for alias in node.names
                        if alias.name in _TOOL_MODULES}
    return functions, modules


def _tool_decorator(function: ast.FunctionDef | ast.AsyncFunctionDef, functions: set[str],
                    modules: set[str]) -> ast.expr | None:
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = _dotted(target)
        if name in functions or (name.endswith(".tool") and name.removesuffix(".tool") in modules):
            return decorator
    return None


def _literal_keyword(decorator: ast.expr, keyword: str) -> str | None:
    if isinstance(decorator, ast.Call):
        for item in decorator.keywords:
            if item.arg == keyword and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str):
                return item.value.value
    return None


def _source_signature(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Signature:
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    pairs = [*zip(positional, defaults, strict=True), *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)]
    return {arg.arg: (_annotation_types(arg.annotation), default is None) for arg, default in pairs}


def _modules(package_dir: Path) -> Iterator[tuple[str, Path]]:
    """``(relative module name, file)`` of every module of the package, tests and caches left out."""
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir).with_suffix("").parts
        if any(part in SKIPPED_FOLDERS or part.startswith(".") for part in parts[:-1]):
            continue
        names = parts[:-1] if parts[-1] == "__init__" else parts
        yield "".join(f".{name}" for name in names), path


def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, SyntaxError):
        return None  # importing it (compile, --imports) reports the problem in full


def find_tools(package_dir: Path) -> list[FoundTool]:
    """Every function decorated with ``@tool`` at the top level of a module of the package, in source order."""
    found = []
    for module, path in _modules(package_dir):
        tree = _parse(path)
        if tree is None:
            continue
        functions, modules = _decorator_names(tree)
        if not functions and not modules:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                decorator = _tool_decorator(node, functions, modules)
                if decorator is not None:
                    found.append(FoundTool(module, node.name, _literal_keyword(decorator, "name") or node.name,
                                           _literal_keyword(decorator, "toolset"), _source_signature(node), path,
                                           node.lineno))
    return found


def _top_level_names(path: Path) -> set[str] | None:
    """Names a module binds at its top level (functions, classes, imports, assignments); None: unreadable."""
    tree = _parse(path)
    if tree is None:
        return None
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {target.id for target in targets if isinstance(target, ast.Name)}
    return names


# -- where a plugin's manifest and code are --------------------------------------------------------


@dataclass(frozen=True)
class PluginSource:
    """A plugin's package folder, its manifest (which may not exist yet) and how its handlers are named."""

    candidate: PluginCandidate
    package_dir: Path
    manifest_path: Path

    @property
    def package(self) -> str:
        """The name references in the manifest start with (directory plugins name theirs relative: ``.x``)."""
        return self.candidate.module if self.candidate.source == "pip" else ""

    def reference(self, module: str, function: str) -> str:
        return f"{self.package}{module}:{function}" if self.package else f"{module or '.'}:{function}"

    def module_of(self, reference: str) -> tuple[str, str] | None:
        """``(relative module, function)`` of a handler reference into this package, else None."""
        module, _, function = reference.partition(":")
        if module.startswith("."):
            relative = "" if module == "." else module
        elif self.package and (module == self.package or module.startswith(self.package + ".")):
            relative = module.removeprefix(self.package)
        else:
            return None
        return relative, function

    def module_file(self, relative: str) -> Path | None:
        base = self.package_dir.joinpath(*relative.split(".")[1:])
        for path in (base / "__init__.py", base.with_suffix(".py")):
            if path.is_file():
                return path
        return None


def locate(path: Path) -> PluginSource:
    """The plugin at ``path``: a project folder, a package or plugin folder, or a ``plugin.yaml``."""
    if not path.exists():
        raise CompileError(f"{path}: no such file or folder")
    candidate = candidate_for_validation(path)
    if candidate is not None and candidate.manifest_path and candidate.path:
        return PluginSource(candidate, Path(candidate.path), Path(candidate.manifest_path))
    folder = path.parent if path.is_file() else path
    package_dir = _entry_point_package(folder) or folder
    if not (package_dir / "__init__.py").is_file():
        raise CompileError(f"{path}: neither a plugin.yaml, a plugin folder (with __init__.py) nor a project whose "
                           "pyproject.toml names its package in a hermes_agent.plugins entry point")
    manifest = package_dir / "plugin.yaml"
    pyproject = next((p / "pyproject.toml" for p in (package_dir.parent, package_dir.parent.parent)
                      if (p / "pyproject.toml").is_file()), None)
    if pyproject is None:
        folder_candidate = candidate_from_folder(package_dir)
        assert folder_candidate is not None  # it has an __init__.py
        return PluginSource(folder_candidate, package_dir, manifest)
    plugin_id = _entry_points(pyproject).get(package_dir.name) or package_dir.name.replace("_", "-")
    return PluginSource(PluginCandidate(id=plugin_id, source="pip", module=package_dir.name, path=str(package_dir)),
                        package_dir, manifest)


def _entry_points(pyproject: Path) -> dict[str, str]:
    """Package to plugin id, from the project's Hermes entry points."""
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise CompileError(f"{pyproject}: cannot be read: {exc}") from None
    groups = project.get("entry-points", {})
    return {str(value).partition(":")[0].strip(): str(plugin_id)
            for group in GROUPS for plugin_id, value in groups.get(group, {}).items()}


def _entry_point_package(folder: Path) -> Path | None:
    pyproject = folder / "pyproject.toml"
    if not pyproject.is_file():
        return None
    for package in _entry_points(pyproject):
        for base in (folder, folder / "src"):
            candidate = base.joinpath(*package.split("."))
            if (candidate / "__init__.py").is_file():
                return candidate
    return None


# -- the manifest entries the code makes ----------------------------------------------------------


def _import_specs(source: PluginSource, found: list[FoundTool]) -> list[ToolSpec]:
    """Import the modules that hold decorated functions (plugin code runs; ``register()`` does not)."""
    package = importable_package(source.candidate)
    specs = []
    for item in found:
        module_name = f"{package}{item.module}"
        try:
            module = importlib.import_module(module_name)
        except BaseException as exc:  # plugin code may raise anything on import
            where = f" ({exc.filename}:{exc.lineno})" if isinstance(exc, SyntaxError) else ""
            raise CompileError(f"importing {module_name} failed: {type(exc).__name__}: {exc}{where}") from None
        spec = tool_spec(getattr(module, item.function, None))
        if spec is None:
            raise CompileError(f"{item.path}:{item.line}: {item.function} is not a @tool function once imported")
        try:
            _ = spec.parameters
        except TypeError as exc:
            raise CompileError(str(exc)) from None
        specs.append(spec)
    return specs


def _entry_for(spec: ToolSpec, item: FoundTool, source: PluginSource, toolset: str) -> dict[str, Any]:
    """The fields of a manifest entry that come from the code, in the order the manifest reference gives."""
    entry: dict[str, Any] = {"name": spec.name, "toolset": toolset, "description": spec.description,
                             "parameters": spec.parameters, "handler": source.reference(item.module, item.function)}
    if spec.is_async:
        entry["is_async"] = True
    if spec.emoji:
        entry["emoji"] = spec.emoji
    if spec.parallel_safe is not None and spec.parallel_safe != spec.annotations.parallel_by_default:
        entry["parallel_safe"] = spec.parallel_safe
    if spec.path_args:
        entry["path_args"] = list(spec.path_args)
    if spec.max_result_size_chars is not None:
        entry["max_result_size_chars"] = manifest_limit(spec.max_result_size_chars)
    if spec.annotations.as_dict():
        entry["annotations"] = spec.annotations.as_dict()
    return entry


@dataclass
class CompileResult:
    """What ``compile`` did to one manifest."""

    manifest_path: Path
    created: bool = False
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    #: Entries whose handler names a function their module does not have.
    stale: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.created or bool(self.added or self.updated)


def compile_manifest(path: Path) -> CompileResult:
    """Write (or update in place, keeping comments, order and every field the code does not give) the
    ``tools:`` entries of the plugin at ``path`` from its ``@tool`` functions."""
    source = locate(path)
    found = find_tools(source.package_dir)
    if not found:
        raise CompileError(f"{source.package_dir}: no function decorated with @hermes_core.plugin.tool (or @tool "
                           "imported from hermes_core.plugin) at the top level of any module")
    specs = _import_specs(source, found)
    names = [spec.name for spec in specs]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise CompileError(f"several @tool functions are named {', '.join(duplicates)}; give one of them name=")
    yaml = _round_trip()
    manifest_path = source.manifest_path
    exists = manifest_path.is_file()
    try:
        text = manifest_path.read_text(encoding="utf-8") if exists else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise CompileError(f"{manifest_path}: cannot read: {exc}") from None
    if exists:
        try:
            parse_manifest(text, manifest_path)
        except ManifestError as exc:
            raise CompileError(f"fix the manifest first: {exc}") from None
    document = _load(yaml, text, manifest_path) if exists else _new_manifest(source.candidate.id)
    result = CompileResult(manifest_path, created=not exists)
    tools = document.get("tools")
    if tools is None:
        document["tools"] = tools = _node([])
    default_toolset = str(document.get("name") or source.candidate.id)
    for spec, item in zip(specs, found, strict=True):
        reference = source.reference(item.module, item.function)
        existing = next((e for e in tools if e.get("name") == spec.name), None) or \
            next((e for e in tools if _same_reference(source, e.get("handler"), reference)), None)
        toolset = spec.toolset or (existing or {}).get("toolset") or default_toolset
        wanted = _entry_for(spec, item, source, toolset)
        if existing is None:
            if not tools:  # `tools: []` (or none): the list it becomes is written in block style, one tool a line
                tools.fa.set_block_style()
            tools.append(_node(wanted))
            result.added.append(spec.name)
            continue
        if _same_reference(source, existing.get("handler"), reference):
            wanted["handler"] = existing["handler"]  # the author's spelling of the same function
        (result.updated if _update_entry(existing, wanted) else result.unchanged).append(spec.name)
    result.stale = [str(entry.get("name")) for entry in tools if _is_stale(source, entry.get("handler"))]
    if result.changed:
        _write(yaml, document, manifest_path, text)
    return result


def _same_reference(source: PluginSource, given: Any, reference: str) -> bool:
    return isinstance(given, str) and source.module_of(given) == source.module_of(reference)


def _is_stale(source: PluginSource, handler: Any) -> bool:
    located = source.module_of(handler) if isinstance(handler, str) else None
    if located is None:
        return False
    file = source.module_file(located[0])
    if file is None:  # a module that is not there at all: `validate --imports` says why it cannot be imported
        return False
    names = _top_level_names(file)
    return names is not None and located[1].split(".")[0] not in names


def _update_entry(entry: Any, wanted: dict[str, Any]) -> bool:
    """Bring one existing entry to ``wanted`` in place; True if anything changed."""
    changed = False
    if entry.get("name") != wanted["name"]:
        entry["name"] = wanted["name"]
        changed = True
    if entry.get("is_async") and "is_async" not in wanted:
        del entry["is_async"]
        changed = True
    for key, value in wanted.items():
        if key == "name":
            continue
        if key not in entry:
            entry.insert(_position(entry, key), key, _node(value))
            changed = True
        elif isinstance(value, dict) and isinstance(entry[key], dict):
            changed = _sync(entry[key], value) or changed
        elif _plain(entry[key]) != value:
            entry[key] = _node(value)
            changed = True
    return changed


_ORDER = ("name", "toolset", "description", "parameters", "handler", "check", "check_fn", "is_async", "emoji",
          "max_result_size_chars", "parallel_safe", "path_args", "annotations")


def _position(entry: Any, key: str) -> int:
    """Where ``key`` goes among the entry's keys: after the last one that comes before it in the reference."""
    rank = _ORDER.index(key)
    keys = list(entry)
    before = [i for i, existing in enumerate(keys) if existing in _ORDER and _ORDER.index(existing) < rank]
    return before[-1] + 1 if before else len(keys)


def _sync(node: Any, wanted: dict[str, Any]) -> bool:
    """Make the mapping ``node`` equal ``wanted``, keeping the nodes (and their comments) that already are."""
    changed = False
    for key in [key for key in node if key not in wanted]:
        del node[key]
        changed = True
    for key, value in wanted.items():
        if key in node and isinstance(value, dict) and isinstance(node[key], dict):
            changed = _sync(node[key], value) or changed
        elif key not in node or _plain(node[key]) != value:
            node[key] = _node(value)
            changed = True
    return changed


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _node(value: Any) -> Any:
    return round_trip_node(value)


def _new_manifest(plugin_id: str) -> Any:
    from ruamel.yaml.comments import CommentedMap

    document = CommentedMap()
    document["manifest_version"] = 1
    document["name"] = plugin_id
    document.yaml_set_start_comment("What Hermes knows about this plugin without importing it; `hermes plugins "
                                    "compile` writes\nthe tools: entries from the @tool functions.")
    return document


def _round_trip() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096  # never fold a line the user wrote as one
    return yaml


def _load(yaml: Any, text: str, path: Path) -> Any:
    from ruamel.yaml.util import load_yaml_guess_indent

    try:
        _, indent, sequence_offset = load_yaml_guess_indent(text)
        document = yaml.load(text)
    except Exception as exc:  # ruamel's errors have no common base that is worth naming
        raise CompileError(f"{path}: cannot be parsed as YAML: {exc}") from None
    if document is None:
        return _new_manifest(path.parent.name)
    if not isinstance(document, dict):
        raise CompileError(f"{path}: a manifest must be a mapping of keys")
    # keep the file's own indentation of lists (`- name:` under `tools:` or indented beneath it)
    yaml.indent(mapping=2, sequence=indent or 4, offset=sequence_offset if sequence_offset is not None else 2)
    if not isinstance(document.get("tools", []), list):
        raise CompileError(f"{path}: tools: must be a list")
    return document


def _write(yaml: Any, document: Any, path: Path, original: str) -> None:
    buffer = io.StringIO()
    yaml.dump(document, buffer)
    text = buffer.getvalue()
    try:
        parse_manifest(text, path)
    except ManifestError as exc:  # a hand-written field the code's entry does not fit: say so, change nothing
        raise CompileError(f"the updated manifest would be invalid, so {path} was not changed: {exc}") from None
    if text == original:
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise CompileError(f"{path}: cannot write: {exc.strerror}") from None


# -- drift between the manifest and the code ---------------------------------------------------------


def _schema_signature(schema: dict[str, Any]) -> Signature:
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    definitions = schema.get("$defs") or schema.get("definitions") or {}
    return {name: (_schema_types(prop, definitions), name in required) for name, prop in properties.items()}


def _schema_types(prop: Any, definitions: dict[str, Any], depth: int = 0) -> frozenset[str] | None:
    if not isinstance(prop, dict) or depth > 8:
        return None
    ref = prop.get("$ref")
    if isinstance(ref, str):
        return _schema_types(definitions.get(ref.rpartition("/")[2]), definitions, depth + 1)
    for combinator in ("anyOf", "oneOf"):
        if isinstance(prop.get(combinator), list):
            found: set[str] = set()
            for part in prop[combinator]:
                kinds = _schema_types(part, definitions, depth + 1)
                if kinds is None:
                    return None
                found |= kinds
            return frozenset(found)
    kind = prop.get("type")
    if isinstance(kind, str):
        return frozenset({kind})
    if isinstance(kind, list):
        return frozenset(str(item) for item in kind)
    if "enum" in prop or "const" in prop:
        values = prop.get("enum") or [prop.get("const")]
        literal_kinds = {_literal_type(ast.Constant(value)) for value in values}
        return None if None in literal_kinds else frozenset(k for k in literal_kinds if k)
    if "properties" in prop:
        return frozenset({"object"})
    return None


def _types_text(kinds: frozenset[str]) -> str:
    return " or ".join(sorted(kinds))


def _compare(tool: str, code: Signature, declared: Signature) -> list[str]:
    problems = []
    for name in code.keys() - declared.keys():
        problems.append(f"tool {tool}: parameter {name!r} is in the handler's signature but not in plugin.yaml")
    for name in declared.keys() - code.keys():
        problems.append(f"tool {tool}: parameter {name!r} is in plugin.yaml but not in the handler's signature")
    for name in sorted(code.keys() & declared.keys()):
        (code_types, code_required), (declared_types, declared_required) = code[name], declared[name]
        if code_types is not None and declared_types is not None and code_types != declared_types:
            problems.append(f"tool {tool}: parameter {name!r} is {_types_text(code_types)} in the handler's "
                            f"signature but {_types_text(declared_types)} in plugin.yaml")
        if code_required != declared_required:
            problems.append(f"tool {tool}: parameter {name!r} is {'required' if code_required else 'optional'} "
                            f"in the handler's signature but {'required' if declared_required else 'optional'} "
                            "in plugin.yaml")
    return sorted(problems)


def manifest_drift(candidate: PluginCandidate, imports: bool = False) -> tuple[list[str], list[str]]:
    """``(problems, warnings)``: where ``plugin.yaml`` and the plugin's ``@tool`` functions disagree.

    Without ``imports`` nothing is imported: signatures are read from the source, and a type is compared
    where the annotation alone says it. With ``imports`` the modules holding decorated functions are
    imported and each derived schema is compared, descriptions and toolsets included (as warnings).
    """
    manifest = candidate.manifest
    if manifest is None or not candidate.path:
        return [], []
    source = PluginSource(candidate, Path(candidate.path), Path(candidate.manifest_path or candidate.path))
    found = find_tools(source.package_dir)
    by_place = {(item.module, item.function): item for item in found}
    specs: dict[tuple[str, str], ToolSpec] = {}
    if imports and found:
        try:
            specs = {(item.module, item.function): spec
                     for item, spec in zip(found, _import_specs(source, found), strict=True)}
        except CompileError as exc:
            return [str(exc)], []
    problems: list[str] = []
    warnings: list[str] = []
    declared_places = set()
    for tool in manifest.tools or []:
        place = source.module_of(tool.handler)
        if place is None:
            continue
        declared_places.add(place)
        item = by_place.get(place)
        if item is None:
            if _is_stale(source, tool.handler):
                problems.append(f"tool {tool.name}: its handler {tool.handler} does not exist in the plugin's code")
            continue
        spec = specs.get(place)
        code = _schema_signature(spec.parameters) if spec else item.parameters
        problems += _compare(tool.name, code, _schema_signature(tool.parameters))
        if spec is not None:
            warnings += _entry_warnings(tool, spec, str(manifest.name or candidate.id))
    for item in found:
        if (item.module, item.function) not in declared_places:
            problems.append(f"tool {item.name}: {source.reference(item.module, item.function)} is decorated with "
                            "@tool but plugin.yaml does not declare it")
    return problems, warnings


def _entry_warnings(tool: ToolDeclaration, spec: ToolSpec, default_toolset: str) -> list[str]:
    warnings = []
    if tool.name != spec.name:
        warnings.append(f"tool {tool.name}: the handler's @tool names it {spec.name!r}")
    if tool.description != spec.description:
        warnings.append(f"tool {tool.name}: the description in plugin.yaml is not the handler's docstring")
    if spec.toolset and tool.toolset != spec.toolset:
        warnings.append(f"tool {tool.name}: toolset {tool.toolset!r} in plugin.yaml, {spec.toolset!r} in @tool")
    if tool.is_async != spec.is_async:
        warnings.append(f"tool {tool.name}: is_async is {str(tool.is_async).lower()} in plugin.yaml but the "
                        f"handler is {'async def' if spec.is_async else 'def'}")
    return warnings
