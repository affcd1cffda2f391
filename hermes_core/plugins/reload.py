"""What a plugin's code and manifest look like on disk, to tell on a reload which plugins changed."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from types import ModuleType

from .discovery import PluginCandidate

__all__ = ["fingerprint", "forget_modules", "same_declarations"]

_MAX_FILES = 2000  # a plugin folder larger than this is compared by its first files only


def fingerprint(candidate: PluginCandidate) -> tuple[object, ...]:
    """Its source, version and module, and the size and modification time of each ``.py`` and ``.yaml`` file in
    its folder: equal fingerprints mean nothing to reload."""
    files: list[tuple[str, int, int]] = []
    if candidate.path and os.path.isdir(candidate.path):
        for root, folders, names in os.walk(candidate.path):
            folders[:] = sorted(f for f in folders if f != "__pycache__" and not f.startswith("."))
            for name in sorted(names):
                if name.endswith((".py", ".yaml", ".yml")) and len(files) < _MAX_FILES:
                    try:
                        status = os.stat(os.path.join(root, name))
                    except OSError:
                        continue
                    files.append((os.path.join(root, name), status.st_size, status.st_mtime_ns))
    return candidate.source, candidate.version, candidate.module, candidate.path, tuple(files)


def same_declarations(loaded: PluginCandidate, now: PluginCandidate) -> bool:
    """``now`` declares what ``loaded`` declared, from the same place (what tells a declared-only plugin whose code
    never ran unchanged: its code is read when first used)."""
    return (loaded.source, loaded.version, loaded.module, loaded.path, loaded.defines_register, loaded.outline) == \
        (now.source, now.version, now.module, now.path, now.defines_register, now.outline) \
        and loaded.manifest_data == now.manifest_data


def forget_modules(package: str) -> None:
    """Drop ``package`` and its submodules from ``sys.modules``, so the next import reads the files again."""
    for name in [name for name in sys.modules if name == package or name.startswith(f"{package}.")]:
        _drop_bytecode(sys.modules.pop(name))


def _drop_bytecode(module: ModuleType) -> None:
    """Remove the module's cached bytecode: it is stamped with its source's whole seconds and size, so a file edited
    to the same size within the second it was compiled in would be imported again as the stale bytecode."""
    source = getattr(module, "__file__", None)
    if not isinstance(source, str) or not source.endswith(".py"):
        return
    with contextlib.suppress(OSError, NotImplementedError, ValueError):  # none kept, or none at all
        os.unlink(importlib.util.cache_from_source(source))
