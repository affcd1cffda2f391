"""The shape of the core: the import graph of ``hermes_core`` has no cycle (``TYPE_CHECKING`` imports and
imports inside functions counted), and data flows one way: discovery → selection → loading → contributions →
definitions / dispatch → hooks."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "hermes_core"

#: What each stage must not know, directly or through another module: what comes after it in the flow,
#: and, for the stages that run tool calls, where plugins come from.
MUST_NOT_REACH = {
    "discovery": {"selection", "loader", "records", "contributions", "context", "dispatch", "hooks", "runtime"},
    "selection": {"loader", "records", "contributions", "context", "dispatch", "hooks", "runtime"},
    "loader": {"selection", "records", "dispatch", "runtime"},
    "contributions": {"discovery", "selection", "loader", "records", "dispatch", "runtime"},
    "registry": {"discovery", "selection", "loader", "contributions", "dispatch", "hooks", "runtime"},
    "dispatch": {"discovery", "selection", "loader", "records", "context", "runtime"},
    "hooks": {"discovery", "selection", "loader", "registry", "contributions", "dispatch", "runtime"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every ``hermes_core`` module ``path`` imports, wherever the import statement stands."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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


@pytest.mark.parametrize("stage", sorted(MUST_NOT_REACH))
def test_data_flows_one_way(graph, stage):
    known = {name.removeprefix("hermes_core.") for name in reachable(graph, f"hermes_core.{stage}")}
    assert known & MUST_NOT_REACH[stage] == set()


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
            if needle in text and not (path.name == "config.py" and needle == "load_config("):
                offenders.append(f"{path.relative_to(PACKAGE)}: {needle}")
    assert offenders == []
