"""Where the audio goes: ``output_path`` inside the workspace or the results folder (where links lead counts), as a
new file (an existing one is never replaced), its extension the format written; else the results folder."""

from __future__ import annotations

import os
from pathlib import Path

from hermes_core.plugin import tool_context

__all__ = ["OutputError", "write_new"]


class OutputError(Exception):
    """The audio cannot be written there; the message says why."""


def write_new(output_path: str, audio: bytes, suffix: str) -> Path:
    """Write ``audio`` at ``output_path`` (its extension made ``suffix``); the path written."""
    context = tool_context()
    path = Path(os.path.expanduser(output_path.strip()))
    path = (context.workspace / path).with_suffix(suffix)
    parent = Path(os.path.realpath(path.parent))
    roots = [Path(os.path.realpath(root)) for root in (context.workspace, context.home.results_dir)]
    if not any(parent == root or parent.is_relative_to(root) for root in roots):
        raise OutputError(f"refusing output_path {output_path!r}: audio is written in the workspace "
                          f"({context.workspace}) or the results folder ({context.home.results_dir}) only")
    target = parent / path.name
    try:
        parent.mkdir(parents=True, exist_ok=True)
        with open(target, "xb") as handle:  # never through a link, never over a file
            handle.write(audio)
    except FileExistsError:
        raise OutputError(f"{target} exists already: choose another output_path (nothing is replaced)") from None
    except OSError as exc:
        raise OutputError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target
