"""Running ``git`` against the shadow store: the user's git configuration, hooks and environment left out.

The store is Hermes's own: a ``commit.gpgsign`` or a credential helper of the user's must not make a checkpoint
prompt for a passphrase, and no ``GIT_*`` variable of the caller may point git elsewhere.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from ..errors import CheckpointError

__all__ = ["GIT_SECONDS", "Git", "git_problem"]

#: Bound on one git command (a first checkpoint of a large workspace hashes every file).
GIT_SECONDS: Final = 120.0
#: Who the store's commits are by (no user configuration is read).
_IDENTITY: Final = {"GIT_AUTHOR_NAME": "Hermes Checkpoint", "GIT_AUTHOR_EMAIL": "hermes@local",
                    "GIT_COMMITTER_NAME": "Hermes Checkpoint", "GIT_COMMITTER_EMAIL": "hermes@local"}


def git_problem() -> str | None:
    """Why checkpoints cannot work here (``git`` is missing), or ``None``."""
    if shutil.which("git") is None:
        return "git is not installed; checkpoints need it (Debian and Ubuntu: apt-get install git)"
    return None


class Git:
    """``git`` with ``GIT_DIR`` the store, and (for a workspace's commands) its work tree and its own index."""

    def __init__(self, store: Path, work_tree: Path | None = None, index: Path | None = None) -> None:
        env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
        env.update(_IDENTITY, GIT_DIR=str(store), GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_SYSTEM=os.devnull,
                   GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0")
        if work_tree is not None:
            env["GIT_WORK_TREE"] = str(work_tree)
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        self.env = env
        self.cwd = work_tree or store.parent  # the store itself may not exist yet (git init)

    def __call__(self, *args: str, input: bytes | None = None, codes: Sequence[int] = (0,),
                 env: dict[str, str] | None = None) -> str:
        """``git args`` and its output (stripped); raises :class:`CheckpointError` with git's message on any exit
        code not in ``codes``."""
        return self.run(*args, input=input, codes=codes, env=env)[1].strip()

    def run(self, *args: str, input: bytes | None = None, codes: Sequence[int] = (0,),
            env: dict[str, str] | None = None) -> tuple[int, str]:
        """``git args``: its exit code and output as it is, raising as :meth:`__call__` does."""
        command = ["git", "-c", "core.hooksPath=" + os.devnull, "-c", "core.fsmonitor=false", *args]
        try:
            result = subprocess.run(command, input=input, capture_output=True, cwd=self.cwd, timeout=GIT_SECONDS,
                                    env={**self.env, **(env or {})}, stdin=None if input is not None
                                    else subprocess.DEVNULL)
        except FileNotFoundError:
            raise CheckpointError(git_problem() or "git cannot be run") from None
        except subprocess.TimeoutExpired:
            raise CheckpointError(f"git {args[0]} did not finish within {GIT_SECONDS:g}s") from None
        if result.returncode not in codes:
            said = result.stderr.decode("utf-8", "replace").strip().splitlines()
            raise CheckpointError(f"git {args[0]} failed: {said[-1] if said else f'exit code {result.returncode}'}")
        return result.returncode, result.stdout.decode("utf-8", "surrogateescape")
