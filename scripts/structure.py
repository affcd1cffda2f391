"""The core's structure in numbers, read from the source: parts, floors, import arrows between parts, the largest
file and the functions over 50 lines.

    python scripts/structure.py              # the working tree
    python scripts/structure.py ca27164 HEAD # each git ref, side by side (read with ``git archive``)

A part is a subpackage of ``hermes_core`` or a module at its top (as in tests/test_architecture.py); an arrow is
one part importing another anywhere (inside functions and under ``TYPE_CHECKING`` too); the floors are the
longest chain of arrows, counted in parts.
"""

from __future__ import annotations

import ast
import functools
import io
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LONG_FUNCTION = 50


@dataclass(frozen=True)
class Structure:
    parts: int
    floors: int
    arrows: int
    largest_file: tuple[str, int]
    long_functions: int
    lines: int


def module_name(package: Path, path: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports_of(package: Path, path: Path, tree: ast.Module) -> set[str]:
    """Every ``hermes_core`` module or name ``path`` imports, wherever the statement stands."""
    name = module_name(package, path)
    here = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("hermes_core")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.startswith("hermes_core"):
                found.add(target)
                found |= {f"{target}.{alias.name}" for alias in node.names}
    return found


def measure(package: Path) -> Structure:
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(package.rglob("*.py"))}
    modules = {module_name(package, path) for path in trees}
    arrows: set[tuple[str, str]] = set()
    for path, tree in trees.items():
        source = part(module_name(package, path))
        arrows |= {(source, part(target)) for target in imports_of(package, path, tree)
                   if target in modules and part(target) != source}
    below: dict[str, set[str]] = {}
    for source, target in arrows:
        below.setdefault(source, set()).add(target)

    @functools.cache
    def floor(name: str) -> int:
        return 1 + max((floor(target) for target in below.get(name, ())), default=0)

    sizes = {str(path.relative_to(package.parent)): len(path.read_text(encoding="utf-8").splitlines())
             for path in trees}
    long_functions = sum(1 for tree in trees.values() for node in ast.walk(tree)
                         if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                         and (node.end_lineno or node.lineno) - node.lineno + 1 > LONG_FUNCTION)
    largest = max(sizes.items(), key=lambda item: item[1])
    parts = {part(name) for name in modules}
    return Structure(parts=len(parts), floors=max(map(floor, parts)), arrows=len(arrows), largest_file=largest,
                     long_functions=long_functions, lines=sum(sizes.values()))


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
    main(sys.argv[1:])
