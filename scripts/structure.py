"""The core's structure in numbers, read from the source: parts, floors, import arrows between parts, the largest
file and the functions over 50 lines.

    python scripts/structure.py              # the working tree
    python scripts/structure.py ca27164 HEAD # each git ref, side by side (read with ``git archive``)

A part is a subpackage of ``hermes_core`` or a module at its top, and an arrow one part importing another anywhere
(inside functions, under ``TYPE_CHECKING``, or by name in ``sys.modules``), as tests/test_architecture.py reads them
(its functions count here too); the floors are the longest chain of arrows, counted in parts (parts in a cycle
count as one floor, and the cycle is named).
"""

from __future__ import annotations

import argparse
import ast
import functools
import io
import runpy
import subprocess
import tarfile
import tempfile
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LONG_FUNCTION = 50


@dataclass(frozen=True)
class Structure:
    parts: int
    floors: int
    cycles: tuple[str, ...]
    arrows: int
    largest_file: tuple[str, int]
    long_functions: int
    lines: int


def _architecture() -> Any:
    """tests/test_architecture.py: how the layering test reads a module's imports and names its parts."""
    return types.SimpleNamespace(**runpy.run_path(str(ROOT / "tests" / "test_architecture.py")))


def measure(package: Path) -> Structure:
    architecture = _architecture()
    part = architecture.part
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(package.rglob("*.py"))}
    modules = {architecture.module_name(path, package) for path in trees}
    arrows: set[tuple[str, str]] = set()
    for path in trees:
        source = part(architecture.module_name(path, package))
        arrows |= {(source, part(target)) for target in architecture.imports_of(path, package=package)
                   if target in modules and part(target) != source}
    below: dict[str, set[str]] = {}
    for source, target in arrows:
        below.setdefault(source, set()).add(target)
    reach = {name: architecture.reachable(below, name) for name in below}
    # parts that reach each other are one floor (a cycle: the layers do not hold there)
    together = {name: frozenset({name} | {other for other in reach.get(name, ()) if name in reach.get(other, ())})
                for name in {part(module) for module in modules}}
    cycles = sorted({" <-> ".join(sorted(group)) for group in together.values() if len(group) > 1})

    @functools.cache
    def floor(group: frozenset[str]) -> int:
        return 1 + max((floor(together[target]) for name in group for target in below.get(name, ())
                        if together[target] != group), default=0)

    sizes = {str(path.relative_to(package.parent)): len(path.read_text(encoding="utf-8").splitlines())
             for path in trees}
    long_functions = sum(1 for tree in trees.values() for node in ast.walk(tree)
                         if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                         and (node.end_lineno or node.lineno) - node.lineno + 1 > LONG_FUNCTION)
    largest = max(sizes.items(), key=lambda item: item[1])
    parts = {part(name) for name in modules}
    return Structure(parts=len(parts), floors=max(floor(together[name]) for name in parts), cycles=tuple(cycles),
                     arrows=len(arrows), largest_file=largest, long_functions=long_functions,
                     lines=sum(sizes.values()))


def at_ref(ref: str) -> Structure:
    """The structure of ``hermes_core`` at git ``ref``."""
    archive = subprocess.run(["git", "archive", ref, "hermes_core"], cwd=ROOT, capture_output=True, check=True).stdout
    with tempfile.TemporaryDirectory() as folder:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        return measure(Path(folder) / "hermes_core")


def main(refs: list[str]) -> None:
    columns = {ref: at_ref(ref) for ref in refs} or {"working tree": measure(ROOT / "hermes_core")}
    rows = {
        "parts": lambda s: str(s.parts),
        "floors": lambda s: str(s.floors),
        "cycles between parts": lambda s: ", ".join(s.cycles) or "none",
        "import arrows between parts": lambda s: str(s.arrows),
        "largest file": lambda s: f"{s.largest_file[0]} ({s.largest_file[1]} lines)",
        f"functions over {LONG_FUNCTION} lines": lambda s: str(s.long_functions),
        "lines": lambda s: str(s.lines),
    }
    width = max(map(len, rows))
    print(" " * width + "  " + "  ".join(f"{ref:<40}" for ref in columns))
    for label, cell in rows.items():
        print(f"{label:<{width}}  " + "  ".join(f"{cell(s):<40}" for s in columns.values()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("refs", nargs="*", metavar="REF", help="git refs to compare (default: the working tree)")
    main(parser.parse_args().refs)
