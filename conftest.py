"""The repository's pytest set-up: each first-party pack's folder on ``sys.path``, so its tests import its
package from the source tree (scripts/packs.py lists the packs; a new pack's folder needs no edit here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location("hermes_repository_packs", Path(__file__).parent / "scripts/packs.py")
assert _spec and _spec.loader
_packs = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _packs  # tests import it by this name (and a dataclass's module must be there as it runs)
_spec.loader.exec_module(_packs)

for _pack in reversed(_packs.packs()):
    if str(_pack.folder) not in sys.path:
        sys.path.insert(0, str(_pack.folder))
