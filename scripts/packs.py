"""The first-party packs: each folder of ``hermes_plugins/`` that holds a ``pyproject.toml``.

This is the one list of them. The Makefile reads it (``python scripts/packs.py`` prints the names),
scripts/build_dist.py and the tests import it, and the repository's conftest.py puts each pack's folder on
``sys.path`` from it; mypy finds the packs' packages with a glob (pyproject.toml). A pack is added by adding
its folder, nothing else.
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Pack:
    """One first-party pack: its folder under ``hermes_plugins/`` (named as its plugin id) and what it ships."""

    name: str
    folder: Path

    @property
    def distribution(self) -> str:
        return f"hermes-tools-{self.name}"

    @property
    def package(self) -> str:
        return f"hermes_plugin_{self.name}"

    @property
    def manifest(self) -> Path:
        return self.folder / self.package / "plugin.yaml"


def packs(root: Path = ROOT) -> list[Pack]:
    """The packs of the repository at ``root``, by name; a folder whose distribution is misnamed is an error."""
    found = []
    for pyproject in sorted((root / "hermes_plugins").glob("*/pyproject.toml")):
        pack = Pack(pyproject.parent.name, pyproject.parent)
        name = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("name")
        if name != pack.distribution:
            raise ValueError(f"{pyproject.relative_to(root)}: the distribution is named {name!r}; a pack in "
                             f"hermes_plugins/{pack.name}/ is {pack.distribution!r}")
        found.append(pack)
    return found


if __name__ == "__main__":
    try:
        print(" ".join(pack.name for pack in packs()))
    except ValueError as exc:
        sys.exit(f"error: {exc}")
