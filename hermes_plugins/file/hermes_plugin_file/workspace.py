"""The file tools' sandbox: every path argument must resolve to a real path inside the workspace root."""

from __future__ import annotations

import os
from pathlib import Path

from hermes_core.plugin import tool_context


class WorkspacePathError(ValueError):
    """A path argument that is malformed or leads outside the workspace."""


def workspace_root() -> Path:
    """The real path of the workspace: setting ``workspace``, else the runtime's workspace."""
    context = tool_context()
    configured = context.settings.get("workspace") or context.workspace
    root = Path(os.path.realpath(os.path.expanduser(str(configured))))
    if not root.is_dir():
        raise WorkspacePathError(f"the workspace root {str(root)!r} is not an existing directory")
    return root


def resolve_path(user_path: str, root: Path) -> Path:
    """Resolve ``user_path`` (relative to ``root``, ``~`` expanded, symlinks followed) inside ``root``.

    ``root`` must be a real path (as :func:`workspace_root` returns). Raises
    :class:`WorkspacePathError` for an empty path, a NUL byte, or a real path outside ``root``.
    """
    if "\0" in user_path:
        raise WorkspacePathError(f"path {user_path!r} contains a NUL byte")
    if not user_path.strip():
        raise WorkspacePathError("path is empty")
    candidate = root / os.path.expanduser(user_path)
    # realpath, not normpath: ".." must apply after symlinks are followed, as the kernel does.
    real = Path(os.path.realpath(candidate))
    if real.is_relative_to(root):
        return real
    through = " through a symlink" if Path(os.path.normpath(candidate)).is_relative_to(root) else ""
    raise WorkspacePathError(
        f"path {user_path!r} leads outside the workspace {str(root)!r}{through}; "
        "file tools only reach files inside the workspace"
    )


def resolve_readable(user_path: str, root: Path) -> tuple[Path, str]:
    """A path ``read_file`` may read, and how to show it: inside the workspace (shown relative to it), or a
    result the runtime saved in its home's ``results/`` folder because it was over budget (shown in full: the
    preview of that result gives this path and tells the model to read it)."""
    try:
        path = resolve_path(user_path, root)
    except WorkspacePathError:
        saved = _saved_result(user_path)
        if saved is None:
            raise
        return saved, str(saved)
    return path, path.relative_to(root).as_posix()


def _saved_result(user_path: str) -> Path | None:
    if "\0" in user_path:
        return None
    results = Path(os.path.realpath(tool_context().home.results_dir))
    real = Path(os.path.realpath(os.path.expanduser(user_path)))
    return real if real.is_relative_to(results) and real != results else None
