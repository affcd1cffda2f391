"""pip, run in the interpreter Hermes itself runs in: install, uninstall and freeze plugin distributions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from importlib.metadata import Distribution, distributions
from pathlib import Path

from .discovery import ENTRY_POINT_GROUP, LEGACY_ENTRY_POINT_GROUP
from .errors import HermesError

__all__ = ["InstallerError", "check_environment", "freeze_lines", "pip", "plugin_distributions"]

PLUGIN_GROUPS = (ENTRY_POINT_GROUP, LEGACY_ENTRY_POINT_GROUP)


class InstallerError(HermesError):
    """pip cannot or should not run here."""


def check_environment() -> None:
    """Refuse when pip would write somewhere Hermes does not live, or somewhere it may not write."""
    purelib = Path(sysconfig.get_paths()["purelib"])
    core = Path(__file__).resolve().parent
    prefixes = {Path(sys.prefix).resolve()}
    in_env = any(prefix in core.parents for prefix in prefixes) or _editable_in(purelib)
    if not in_env:
        raise InstallerError(f"hermes-core at {core} is not installed in the environment of {sys.executable} "
                             f"({sys.prefix}); run `{sys.executable} -m pip install ...` from the environment "
                             "that holds Hermes instead")
    if not os.access(purelib, os.W_OK):
        raise InstallerError(f"{purelib} is not writable; use a virtual environment (python -m venv) or run "
                             "as a user who may write there")


def _editable_in(purelib: Path) -> bool:
    return any(d.metadata["Name"] == "hermes-core" for d in distributions(path=[str(purelib)]))


def pip(args: Sequence[str]) -> int:
    """Run ``python -m pip ARGS`` with its output shown as it comes; returns pip's exit code."""
    command = [sys.executable, "-m", "pip", *args]
    return subprocess.call(command, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})


def plugin_distributions() -> dict[str, Distribution]:
    """Plugin id to the distribution whose entry point provides it (read from metadata, nothing imported)."""
    found: dict[str, Distribution] = {}
    for dist in distributions():
        for ep in dist.entry_points:
            if ep.group in PLUGIN_GROUPS:
                found.setdefault(ep.name, dist)
    return found


def freeze_lines() -> list[str]:
    """Requirement lines that ``pip install -r`` turns back into the installed plugin distributions."""
    lines = {_requirement(dist) for dist in plugin_distributions().values()}
    return sorted(lines, key=str.lower)


def _requirement(dist: Distribution) -> str:
    name, version = dist.metadata["Name"], dist.version
    raw = dist.read_text("direct_url.json")
    if raw:
        direct = json.loads(raw)
        url = direct.get("url", "")
        if direct.get("dir_info", {}).get("editable"):
            return f"-e {url.removeprefix('file://')}"
        if url.startswith("file://") and direct.get("dir_info") is not None:
            return f"{name} @ {url}"
        if "vcs_info" in direct:
            vcs = direct["vcs_info"]
            return f"{name} @ {vcs['vcs']}+{url}@{vcs.get('commit_id', '')}"
    return f"{name}=={version}"
