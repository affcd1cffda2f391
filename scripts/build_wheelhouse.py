"""Make a wheelhouse: the wheels of ``dist/`` (``make dist``) plus a wheel of every dependency they have, the
``mcp`` and ``scaffold`` extras' included, so that ``pip install --no-index --find-links wheelhouse
hermes-tools hermes-tools-file`` works on a machine without a package index. The build backends of the
repository's projects and of the plugin template (with its ``test`` extra) are there too, so that installs from
the clone's folders (``pip install ./hermes/hermes_plugins/web``, ``hermes plugins install web`` from a checkout)
and of a plugin made by ``hermes plugins new`` (``pip install -e ".[test]"``) work offline as well.

``make wheelhouse`` runs this script; the test suite runs it on its own ``dist`` to install from the result.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = "mcp,scaffold"
TEMPLATE_PROJECT = ROOT / "cookiecutter-template" / "{{cookiecutter.project_slug}}" / "pyproject.toml"


def build_requirements(root: Path = ROOT) -> list[str]:
    """The ``build-system.requires`` of the repository's projects and of the plugin template, and the template's
    ``test`` extra: what pip fetches to build or install them besides their dependencies."""
    projects = [root / "pyproject.toml", *sorted(root.glob("hermes_plugins/*/pyproject.toml"))]
    found = {line for path in projects for line in tomllib.loads(path.read_text())["build-system"]["requires"]}
    template = (root / TEMPLATE_PROJECT.relative_to(ROOT)).read_text()  # Jinja, not TOML: its lines as they stand
    for key in ("requires", "test"):  # build-system.requires, and the `test` extra
        listed = re.search(rf"^{key} = \[(.*?)\]", template, re.M)
        found |= set(re.findall(r'"([^"]+)"', listed.group(1))) if listed else set()
    return sorted(found)


def build(dist: Path, wheelhouse: Path) -> list[Path]:
    """Copy the wheels of ``dist`` into ``wheelhouse`` and add their dependencies' wheels (from the configured
    index); returns the wheels there, sorted."""
    wheels = sorted(dist.glob("*.whl"))
    if not wheels:
        raise FileNotFoundError(f"{dist} holds no wheels: run `make dist` first")
    wheelhouse.mkdir(parents=True, exist_ok=True)
    for wheel in wheels:
        shutil.copy2(wheel, wheelhouse / wheel.name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--wheel-dir",
                    str(wheelhouse), "--find-links", str(dist), f"hermes-tools[{EXTRAS}]", *map(str, wheels),
                    *build_requirements()], check=True)
    return sorted(wheelhouse.glob("*.whl"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dist", type=Path, nargs="?", default=ROOT / "dist", help="the wheels to start from")
    parser.add_argument("wheelhouse", type=Path, nargs="?", default=ROOT / "wheelhouse", help="where to write")
    args = parser.parse_args(argv)
    try:
        wheels = build(args.dist, args.wheelhouse)
    except (FileNotFoundError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{len(wheels)} wheels in {args.wheelhouse}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
