"""Make a wheelhouse: the wheels of ``dist/`` (``make dist``) plus a wheel of every dependency they have, the
``mcp`` and ``scaffold`` extras' included, so that ``pip install --no-index --find-links wheelhouse
hermes-tools hermes-tools-file`` works on a machine without a package index.

``make wheelhouse`` runs this script; the test suite runs it on its own ``dist`` to install from the result.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = "mcp,scaffold"


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
                    str(wheelhouse), "--find-links", str(dist), f"hermes-tools[{EXTRAS}]", *map(str, wheels)],
                   check=True)
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
