"""What ``pip install hermes-tools`` puts into a fresh virtual environment: the distributions it adds (not pip,
nor the setuptools some Pythons seed a venv with) and their size on disk, against the targets of a slim core
(at most 18 distributions, at most 30 MB).

Run: python bench/install_size.py [REQUIREMENT ...] [--find-links DIR] [--no-index] [--json]
     (default requirement: this checkout; prints the list and the totals; asserts nothing)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_DISTRIBUTIONS = 18
TARGET_MB = 30.0
LISTING = """
import json, sys
from importlib.metadata import distributions
from pathlib import Path
site = Path(sys.argv[1])
rows = []
for dist in distributions(path=[str(site)]):
    size = sum((site / f).stat().st_size for f in dist.files or () if (site / f).is_file())
    rows.append({"name": dist.metadata["Name"], "version": dist.version, "bytes": size})
print(json.dumps(sorted(rows, key=lambda row: row["name"].lower())))
"""


def _listing(python: str, site: Path) -> list[dict[str, object]]:
    """Name, version and bytes on disk (its RECORD's files) of each distribution in ``site``."""
    listed = subprocess.run([python, "-c", LISTING, str(site)], check=True, capture_output=True, text=True)
    rows: list[dict[str, object]] = json.loads(listed.stdout)
    return rows


def measure(requirements: list[str], pip_options: list[str]) -> dict[str, object]:
    """Install ``requirements`` into a fresh venv (with pip's own options) and describe what it holds."""
    with tempfile.TemporaryDirectory(prefix="hermes-install-size-") as folder:
        path = Path(folder) / "venv"
        venv.EnvBuilder(with_pip=True).create(path)
        python = str(path / "bin" / "python")
        site = next((path / "lib").glob("python3*/site-packages"))
        seeded = {row["name"].lower() for row in _listing(python, site)}
        subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *pip_options,
                        *requirements], check=True)
        added = [row for row in _listing(python, site) if row["name"].lower() not in seeded]
    return {"requirements": requirements, "distributions": added, "count": len(added),
            "megabytes": round(sum(row["bytes"] for row in added) / 1e6, 1),
            "targets": {"distributions": TARGET_DISTRIBUTIONS, "megabytes": TARGET_MB}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("requirements", nargs="*", default=[str(ROOT)])
    parser.add_argument("--find-links", action="append", default=[], metavar="DIR")
    parser.add_argument("--no-index", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    options = [*(["--no-index"] if args.no_index else []), *(f"--find-links={d}" for d in args.find_links)]
    result = measure(args.requirements, options)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for row in result["distributions"]:  # type: ignore[attr-defined]
        print(f"  {row['name']:<32} {row['version']:<12} {row['bytes'] / 1e6:6.2f} MB")
    print(f"{result['count']} distributions besides what a fresh venv holds (target <= {TARGET_DISTRIBUTIONS}), "
          f"{result['megabytes']} MB (target <= {TARGET_MB} MB) for pip install {' '.join(args.requirements)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
