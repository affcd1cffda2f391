"""Where this hermes-tools comes from: a checkout of its repository, a folder or a VCS URL (PEP 610's
``direct_url.json``), or the package index.

The packs and hermes-tools are not on the package index yet: what installs them (``hermes plugins install``) and
what a new plugin's CI installs (``hermes plugins new``) follow from here, found at run time. Discovery reads
how a plugin's distribution was installed here too (:func:`direct_url`): the module imports nothing heavy at load
(listings from warm caches import it).
"""

from __future__ import annotations

import json
import re
import urllib.parse
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.metadata import Distribution

__all__ = ["CORE_DISTRIBUTION", "ci_requirement", "public_git_url", "source_tree"]

CORE_DISTRIBUTION = "hermes-tools"
#: ``git@host:owner/repo.git``, the scp-like spelling of an ssh remote.
_SCP_LIKE = re.compile(r"^(?P<user>[\w.-]+)@(?P<host>[\w.-]+):(?P<path>[^/\\][^\\]*)$")
#: What a URL written into a workflow may hold (no quotes, spaces or shell syntax).
_URL_CHARACTERS = re.compile(r"[\w.~:/@%+-]+")
_COMMIT = re.compile(r"[0-9a-f]{7,64}")
_GIT_TIMEOUT = 10


def direct_url(dist: Distribution) -> dict[str, Any]:
    """How pip installed ``dist``: its PEP 610 ``direct_url.json`` (a folder, an archive or a VCS URL), or {} when it
    came from an index or the record cannot be read."""
    try:
        raw = dist.read_text("direct_url.json")
        data = json.loads(raw) if raw else {}
    except (ValueError, OSError):
        return {}
    return data if isinstance(data, dict) else {}


def _direct_url() -> dict[str, Any]:
    """The ``direct_url.json`` of the installed hermes-tools, or {} (installed by name, or not installed)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        return direct_url(distribution(CORE_DISTRIBUTION))
    except PackageNotFoundError:
        return {}


def _is_repository(folder: Path) -> bool:
    return (folder / "pyproject.toml").is_file() and (folder / "hermes_core").is_dir() \
        and (folder / "hermes_plugins").is_dir()


def _running_tree() -> Path:
    """The folder holding the ``hermes_core`` that runs: a checkout's root, or site-packages."""
    return Path(__file__).resolve().parent.parent


@cache
def source_tree() -> Path | None:
    """The repository folder this hermes-tools runs from (an editable install of a checkout) or was installed from
    (``pip install ./hermes``, while that folder still holds the repository); None for a wheel from an index."""
    running = _running_tree()
    if _is_repository(running):
        return running
    url = str(_direct_url().get("url", ""))
    if url.startswith("file:") and "vcs_info" not in _direct_url():
        from urllib.request import url2pathname

        folder = Path(url2pathname(urllib.parse.urlparse(url).path))
        if _is_repository(folder):
            return folder
    return None


def public_git_url(remote: str) -> str | None:
    """``remote`` as a URL pip's ``git+`` can fetch from anywhere (https, or ssh in either spelling), else None:
    a local folder, a ``file:`` URL or a URL carrying a password never leaves this machine."""
    remote = remote.strip()
    if not _URL_CHARACTERS.fullmatch(remote):
        return None
    scp = _SCP_LIKE.match(remote)
    if scp and "://" not in remote:
        return f"ssh://{scp['user']}@{scp['host']}/{scp['path']}"
    parsed = urllib.parse.urlsplit(remote)
    if parsed.scheme not in ("https", "ssh", "git+https", "git+ssh") or not parsed.hostname or parsed.password:
        return None
    if parsed.username and parsed.scheme.endswith("https"):  # a token in the URL is a credential: never written
        return None
    return remote.removeprefix("git+")


def _git(folder: Path, *args: str) -> str | None:
    import subprocess

    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True,
                              timeout=_GIT_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def ci_requirement() -> str | None:
    """The pip requirement that installs this hermes-tools from its git repository, for a new plugin's CI, or None
    (install it from the package index).

    From ``direct_url.json`` when pip installed it from a VCS URL (pinned to the commit pip recorded); else from
    the ``origin`` remote of the checkout it runs from, pinned to that checkout's commit when a remote branch
    holds it. Never a local path.
    """
    direct = _direct_url()
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") == "git":
        url = public_git_url(str(direct.get("url", "")))
        commit = str(vcs.get("commit_id", ""))
        if url:
            return f"{CORE_DISTRIBUTION} @ git+{url}" + (f"@{commit}" if _COMMIT.fullmatch(commit) else "")
    tree = _running_tree()
    if not _is_repository(tree):
        return None
    url = public_git_url(_git(tree, "remote", "get-url", "origin") or "")
    if url is None:
        return None
    commit = _git(tree, "rev-parse", "HEAD") or ""
    pushed = bool(_COMMIT.fullmatch(commit) and _git(tree, "branch", "-r", "--contains", commit))
    return f"{CORE_DISTRIBUTION} @ git+{url}" + (f"@{commit}" if pushed else "")
