"""Build the sdists and wheels of Hermes and its first-party packs into one folder, and check them with twine.

``make dist``, the release workflow and the test suite's ``dist`` fixture all run this script, so what the
tests install is what gets published. Each wheel is built from its sdist (pypa/build's default), which
proves the sdist is complete.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Final

from packs import packs  # scripts/packs.py, beside this script

ROOT: Final = Path(__file__).resolve().parent.parent
#: The distributions, in build order: the core, then the packs.
PROJECTS: Final = (ROOT, *(pack.folder for pack in packs(ROOT)))


def core_version() -> str:
    """The core's version, read from ``hermes_core/_version.py`` without importing it."""
    namespace: dict[str, str] = {}
    exec((ROOT / "hermes_core" / "_version.py").read_text(encoding="utf-8"), namespace)
    return namespace["__version__"]


def versions() -> dict[str, str]:
    """Distribution name to version, for every project."""
    found = {}
    for project in PROJECTS:
        meta = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        found[meta["name"]] = meta.get("version") or core_version()
    return found


def version_problems(expected: str | None) -> list[str]:
    """Why these may not be released together: they must share one version (``expected``, when given)."""
    found = versions()
    wanted = expected or found[next(iter(found))]
    return [f"{name} is {version}, not {wanted}" for name, version in found.items() if version != wanted]


def build(outdir: Path, *, isolation: bool = True) -> list[Path]:
    """Build every sdist and wheel into ``outdir``; returns the files written, sorted."""
    outdir.mkdir(parents=True, exist_ok=True)
    for project in PROJECTS:
        command = [sys.executable, "-m", "build", "--outdir", str(outdir), str(project)]
        subprocess.run([*command, *([] if isolation else ["--no-isolation"])], check=True)
    return sorted(p for p in outdir.iterdir() if p.suffix == ".whl" or p.name.endswith(".tar.gz"))


def check(files: list[Path]) -> None:
    """``twine check --strict``: metadata and README render as PyPI will show them; raises on any warning."""
    subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, files)], check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path, nargs="?", default=ROOT / "dist", help="where to write (default: dist/)")
    parser.add_argument("--no-isolation", action="store_true",
                        help="build with the installed build backend (hatchling) instead of a fresh one")
    parser.add_argument("--expect-version", metavar="VERSION",
                        help="fail unless all are this version (the release workflow passes the tag)")
    args = parser.parse_args(argv)
    problems = version_problems(args.expect_version)
    if problems:
        print("error: the distributions do not share one version: " + "; ".join(problems), file=sys.stderr)
        return 1
    try:
        check(build(args.outdir, isolation=not args.no_isolation))
    except subprocess.CalledProcessError as exc:
        print(f"error: {' '.join(exc.cmd)} failed (exit {exc.returncode})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
