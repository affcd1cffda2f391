"""The shape of the core: the import graph of ``hermes_core`` has no cycle (``TYPE_CHECKING`` imports, imports
inside functions, and modules looked up by name in ``sys.modules`` or with ``import_module`` counted), and its
subpackages are layered: each may import only the parts below it (docs/contributing.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from hermes_core._public import MOVED_MODULES, MOVED_NAMES

PACKAGE = Path(__file__).resolve().parent.parent / "hermes_core"

#: What each part of the core (a subpackage, or a module at the top) may import, besides itself.
LAYERS: dict[str, set[str]] = {
    "_version": set(),
    "_public": set(),
    "errors": set(),
    "checks": set(),
    "addresses": set(),
    "origin": set(),
    "media": {"errors"},
    "config": {"errors", "_version"},
    "skills": {"config", "errors"},
    "state": {"config", "errors"},
    "checkpoints": {"config", "checks", "errors"},
    "backends": {"config", "checks", "errors", "_public"},
    "workers": {"errors"},
    "tools": {"workers", "checks", "media", "errors"},
    "calls": {"state", "tools", "workers", "skills", "backends", "config", "checks", "media", "errors", "_version"},
    "host": {"state", "calls", "tools", "errors"},
    "plugins": {"state", "skills", "calls", "tools", "workers", "backends", "config", "checks", "media", "errors",
                "_version", "origin"},
    "index": {"skills", "plugins", "config", "errors", "_version", "origin"},
    "mcp": {"state", "skills", "host", "calls", "tools", "config", "media", "errors", "_version"},
    "missing": {"index", "plugins", "mcp", "config", "errors"},
    "cron": {"plugins", "errors"},
    "runtime": {"cron", "missing", "mcp", "state", "skills", "plugins", "host", "calls", "tools", "workers",
                "backends", "checkpoints", "config", "checks", "media", "errors", "_version"},
    "authoring": {"runtime", "plugins", "calls", "config", "media", "errors", "_version", "_public", "origin"},
    "cli": {"authoring", "index", "origin", "runtime", "cron", "missing", "mcp", "state", "skills", "plugins", "host",
            "calls", "tools", "workers", "backends", "checkpoints", "config", "checks", "media", "errors", "_version"},
    "adapters": {"runtime", "host", "calls", "tools", "workers", "state", "errors"},
    # the public faces: what they name is listed in their stubs and imported on first use
    "__init__": {"_public"},
    "plugin": {"_public"},
}


def part(module: str) -> str:
    """The part of the core ``module`` belongs to: its subpackage, or itself at the top."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """The dotted name of the module at ``path`` in ``package`` (a copy of ``hermes_core`` elsewhere, too)."""
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, source: str | None = None, package: Path = PACKAGE) -> set[str]:
    """Every ``hermes_core`` module ``path`` imports, wherever the import statement stands, or looks up by name
    (:func:`looked_up`); ``source`` instead of the file's text. (scripts/structure.py counts with it too.)"""
    name = module_name(path, package)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source)
    found = looked_up(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("hermes_core")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.startswith("hermes_core"):
                found.add(target)
                found |= {f"{target}.{alias.name}" for alias in node.names}
    return found


def looked_up(tree: ast.Module) -> set[str]:
    """The ``hermes_core`` modules a module reaches by name rather than by an import statement: ``sys.modules[name]``,
    ``sys.modules.get(name)``, ``name in sys.modules`` and ``import_module(name)``, the name a string or a
    module-level constant holding one. (A peek at a module above is an import the layers would not allow.)"""
    constants = {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                 for target in node.targets if isinstance(target, ast.Name)}

    def is_sys_modules(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "modules" and isinstance(node.value, ast.Name) \
            and node.value.id == "sys"

    found = set()
    for node in ast.walk(tree):
        named: ast.AST | None = None
        if isinstance(node, ast.Subscript) and is_sys_modules(node.value):
            named = node.slice
        elif isinstance(node, ast.Call) and node.args:
            function = node.func
            if (isinstance(function, ast.Attribute) and (is_sys_modules(function.value)
                                                        or function.attr == "import_module")) \
                    or (isinstance(function, ast.Name) and function.id in ("import_module", "__import__")):
                named = node.args[0]
        elif isinstance(node, ast.Compare) and any(is_sys_modules(side) for side in node.comparators):
            named = node.left
        value = named.value if isinstance(named, ast.Constant) else \
            constants.get(named.id) if isinstance(named, ast.Name) else None
        if isinstance(value, str) and value.startswith("hermes_core."):
            found.add(value)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: {target for target in imports_of(path) if target in modules and target != name}
            for name, path in modules.items()}


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    stack = [start]
    while stack:
        for target in graph.get(stack.pop(), ()):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def test_the_import_graph_has_no_cycle(graph):
    # a package's __init__ re-exports its modules; importing the package from inside it is the only
    # edge back up that is allowed, and none of the core's modules does it
    cycles = sorted(name for name in graph if name in reachable(graph, name))
    assert cycles == []


def test_every_part_of_the_core_has_a_place_in_the_layers(graph):
    assert {part(name) for name in graph} - LAYERS.keys() == set()


def upward(graph: dict[str, set[str]], layer: str) -> set[str]:
    """The imports of ``layer``'s modules that reach a part it may not import."""
    return {f"{name} -> {target}" for name, targets in graph.items() if part(name) == layer
            for target in targets if part(target) not in LAYERS[layer] | {layer}}


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_each_part_imports_only_the_parts_below_it(graph, layer):
    assert upward(graph, layer) == set()


@pytest.mark.parametrize("peek", [
    'compat = sys.modules.get("hermes_core.plugins.compat")',
    'compat = sys.modules["hermes_core.plugins.compat"]',
    'loaded = "hermes_core.plugins.compat" in sys.modules',
    'COMPAT = "hermes_core.plugins.compat"\ncompat = sys.modules.get(COMPAT)',
    'compat = importlib.import_module("hermes_core.plugins.compat")',
])
def test_a_module_looked_up_by_name_counts_as_an_import(graph, peek):
    """A part that peeks at a module above it in ``sys.modules`` breaks the layers as an import would."""
    planted = PACKAGE / "calls" / "dispatch.py"
    source = planted.read_text(encoding="utf-8") + f"\n\ndef _peek():\n    {peek.replace(chr(10), chr(10) + '    ')}\n"
    if peek.startswith("COMPAT"):  # a module-level constant
        source = planted.read_text(encoding="utf-8") + f"\n\n{peek}\n"
    peeked = {**graph, "hermes_core.calls.dispatch": graph["hermes_core.calls.dispatch"] | {
        target for target in imports_of(planted, source) if target in graph}}

    assert upward(peeked, "calls") == {"hermes_core.calls.dispatch -> hermes_core.plugins.compat"}


def test_the_layers_have_no_cycle():
    below = {layer: reachable({k: set(v) for k, v in LAYERS.items()}, layer) for layer in LAYERS}
    assert [layer for layer, parts in below.items() if layer in parts] == []


def test_nothing_below_the_runtime_reads_hermes_home_or_loads_the_config_itself():
    allowed = {"home.py", "runtime.py", "__init__.py", "testing.py",  # where runtimes are made
               # shims of Hermes Agent's functions of these names: they read the home of the plugin's runtime
               "hermes_cli_config.py", "hermes_constants.py"}
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path.name in allowed or path.parent.name == "cli":
            continue
        for needle in ('"HERMES_HOME"', "hermes_home()", "load_config(", "from_env()"):
            if needle in text and not (path.name == "model.py" and needle == "load_config("):
                offenders.append(f"{path.relative_to(PACKAGE)}: {needle}")
    assert offenders == []


# -- the public faces -------------------------------------------------------------------------------------------

#: Each public face and the stub that lists its names.
FACES = {
    "hermes_core": PACKAGE / "__init__.pyi",
    "hermes_core.plugin": PACKAGE / "plugin.pyi",
    "hermes_core.backends": PACKAGE / "backends" / "__init__.pyi",
}


def stub_names(stub: Path) -> list[str]:
    """Every name the stub re-exports (``from .x import name as name``), as often as it is written."""
    return [alias.asname or alias.name for node in ast.parse(stub.read_text(encoding="utf-8")).body
            if isinstance(node, ast.ImportFrom) for alias in node.names]


@pytest.mark.parametrize("face", sorted(FACES))
def test_a_face_lists_each_name_once_and_all_of_them_import(face):
    import importlib

    module = importlib.import_module(face)
    names = stub_names(FACES[face])
    assert len(names) == len(set(names)), "a name is listed twice"
    assert sorted(module.__all__) == sorted(names) == sorted(dir(module))
    missing = [name for name in names if getattr(module, name, None) is None]
    assert missing == []


def test_no_name_is_on_two_faces():
    names = [name for stub in FACES.values() for name in stub_names(stub) if name != "__version__"]
    assert sorted({name for name in names if names.count(name) > 1}) == []


def test_every_public_error_lives_in_errors_py_and_is_a_hermes_error():
    import hermes_core.errors as errors

    defined_elsewhere = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "errors.py" or path.parent.name == "cli":  # the CLI's own UserError is click's, not ours
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_") and any(
                    (base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")).endswith(
                        ("Error", "Exception", "Exceeded")) for base in node.bases):
                defined_elsewhere.append(f"{path.relative_to(PACKAGE)}: {node.name}")
    assert defined_elsewhere == []
    public = [getattr(errors, name) for name in errors.__all__]
    assert [error.__name__ for error in public if not issubclass(error, errors.HermesError)] == []


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_every_moved_module_still_imports_as_its_new_self_with_a_deprecation_warning(old):
    import importlib
    import sys

    sys.modules.pop(f"hermes_core.{old}", None)  # (only the old name's entry: imported before, it would not warn)
    with pytest.warns(DeprecationWarning, match=rf"hermes_core\.{old} moved to hermes_core\."):
        module = importlib.import_module(f"hermes_core.{old}")
    assert module is importlib.import_module(f"hermes_core.{MOVED_MODULES[old]}")


@pytest.mark.parametrize(("face", "name", "new"), [
    *(("hermes_core", name, new) for name, new in sorted(MOVED_NAMES.items())),
    *(("hermes_core.authoring", name, "hermes_core.plugin") for name in ("ToolError", "ToolSpec", "tool", "tool_spec")),
])
def test_every_moved_name_still_works_with_a_deprecation_warning(face, name, new):
    import importlib

    with pytest.warns(DeprecationWarning, match=rf"{face}\.{name} moved to {new}\.{name}"):
        value = getattr(importlib.import_module(face), name)
    assert value is getattr(importlib.import_module(new), name)
