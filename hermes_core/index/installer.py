"""pip, run in the interpreter Hermes itself runs in: install, uninstall and freeze plugin distributions.

``hermes plugins install`` hands pip only what is clearly meant for it: an id (or distribution) the plugin
index lists, or an argument that is unmistakably a pip requirement (a path, a URL, ``name==1.0``,
``name @ url``), or anything given with ``--pip``. A bare name the index does not list is refused, since
pip would fetch whatever project of that name PyPI holds. What pip installs without providing a plugin
is uninstalled again.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import Distribution, distributions
from pathlib import Path
from typing import TYPE_CHECKING, Final

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from ..errors import InstallerError, InstallRefused
from ..origin import direct_url
from ..plugins.discovery import ENTRY_POINT_GROUP, LEGACY_ENTRY_POINT_GROUP

if TYPE_CHECKING:
    from .catalog import PluginIndex

__all__ = [
    "CORE_DISTRIBUTION",
    "FrozenPlugin",
    "InstallRefused",
    "InstallTarget",
    "InstallerError",
    "PipRun",
    "changed",
    "check_environment",
    "checkout_pack",
    "describe_versions",
    "frozen_plugins",
    "install_target",
    "newly_installed",
    "pip",
    "plugin_distributions",
    "snapshot",
]

PLUGIN_GROUPS: Final = (ENTRY_POINT_GROUP, LEGACY_ENTRY_POINT_GROUP)
#: The distribution that ships ``hermes_core`` and the ``hermes`` and ``hermes-tools`` commands.
CORE_DISTRIBUTION: Final = "hermes-tools"
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_ARCHIVES: Final = (".whl", ".tar.gz", ".zip", ".tar.bz2", ".tgz")


def check_environment() -> None:
    """Refuse when pip would write somewhere Hermes does not live, or somewhere it may not write."""
    purelib = Path(sysconfig.get_paths()["purelib"])
    core = Path(__file__).resolve().parent
    prefixes = {Path(sys.prefix).resolve()}
    in_env = any(prefix in core.parents for prefix in prefixes) or _editable_in(purelib)
    if not in_env:
        raise InstallerError(f"{CORE_DISTRIBUTION} at {core} is not installed in the environment of {sys.executable} "
                             f"({sys.prefix}); run `{sys.executable} -m pip install ...` from the environment "
                             "that holds Hermes instead")
    if not os.access(purelib, os.W_OK):
        raise InstallerError(f"{purelib} is not writable; use a virtual environment (python -m venv) or run "
                             "as a user who may write there")


def _editable_in(purelib: Path) -> bool:
    return any(canonicalize_name(d.metadata["Name"]) == CORE_DISTRIBUTION for d in distributions(path=[str(purelib)]))


@dataclass(frozen=True)
class PipRun:
    """How a pip command ended: its exit code, and what it printed when that was captured."""

    returncode: int
    #: pip's stdout and stderr, interleaved ("" when they were shown as they came).
    output: str = ""


def pip(args: Sequence[str], *, show_output: bool = True) -> PipRun:
    """Run ``python -m pip ARGS``: its output shown as it comes, or, without ``show_output``, captured."""
    command = [sys.executable, "-m", "pip", *args]
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    if show_output:
        return PipRun(subprocess.call(command, env=env))
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace", check=False)
    return PipRun(done.returncode, done.stdout)


def plugin_distributions() -> dict[str, Distribution]:
    """Plugin id to the distribution whose entry point provides it (read from metadata, nothing imported)."""
    found: dict[str, Distribution] = {}
    for dist in distributions():
        for ep in dist.entry_points:
            if ep.group in PLUGIN_GROUPS:
                found.setdefault(ep.name, dist)
    return found


def snapshot() -> dict[str, str]:
    """Every installed distribution (canonical name) and its version; compared before and after pip runs."""
    found: dict[str, str] = {}
    for dist in distributions():
        found.setdefault(canonicalize_name(dist.metadata["Name"] or ""), dist.version)
    found.pop("", None)
    return found


# -- what an install argument means ------------------------------------------------------------------------------

@dataclass(frozen=True)
class InstallTarget:
    """What pip is given, and the distribution it installs when that is known before pip runs."""

    requirement: str
    distribution: str | None
    #: More requirements pip gets beside it: the checkout's folders of first-party packs it depends on that are
    #: not installed (they are not on the package index either).
    also: tuple[str, ...] = ()


def install_target(spec: str, index: PluginIndex | None, *, as_pip: bool = False,
                   index_problem: str | None = None) -> InstallTarget:
    """Decide what ``hermes plugins install SPEC`` hands pip; raises :class:`InstallRefused` for a bare unknown name.

    ``index`` is None when it could not be read (``index_problem`` says why).
    """
    entry = index.get(spec) if index is not None and not as_pip else None
    if entry is not None:
        pack = checkout_pack(entry.id) if entry.first_party else None
        if pack is None:
            return InstallTarget(entry.requirement, entry.distribution)
        return InstallTarget(str(pack), entry.distribution, tuple(str(folder) for folder in _pack_needs(pack)))
    if as_pip or _is_path_or_url(spec):
        return InstallTarget(spec, _distribution_of(spec))
    try:
        requirement = Requirement(spec)
    except InvalidRequirement:
        raise InstallRefused(f"{spec!r} is neither a plugin id nor a pip requirement; "
                             "`hermes plugins search WORDS` finds plugins") from None
    if requirement.url or requirement.specifier:
        return InstallTarget(spec, requirement.name)
    raise InstallRefused(_unknown_name(spec, index, index_problem))


def checkout_pack(plugin_id: str) -> Path | None:
    """The folder of first-party pack ``plugin_id`` in the repository this hermes-tools runs from (an editable
    install) or was installed from (``pip install ./hermes``): installed from there, the pack matches the core, and
    needs no package index (the packs are not published there yet)."""
    from ..origin import source_tree

    root = source_tree()
    folder = root / "hermes_plugins" / plugin_id if root else None
    return folder if folder and (folder / "pyproject.toml").is_file() else None


def _pack_needs(pack: Path) -> list[Path]:
    """The checkout's folders of the first-party packs ``pack`` depends on (``hermes-tools-web`` of the image pack)
    that are not installed, theirs included: pip would look for them on the package index."""
    import tomllib
    from importlib.metadata import PackageNotFoundError, version

    needed: list[Path] = []
    queue = [pack]
    while queue:
        project = tomllib.loads((queue.pop() / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
        for line in project.get("dependencies", []):
            name = canonicalize_name(Requirement(line).name)
            folder = pack.parent / name.removeprefix(f"{CORE_DISTRIBUTION}-")
            if not name.startswith(f"{CORE_DISTRIBUTION}-") or folder in needed or not folder.is_dir():
                continue
            try:
                version(name)
            except PackageNotFoundError:
                needed.append(folder)
                queue.append(folder)
    return needed


def _is_path_or_url(spec: str) -> bool:
    return bool(_URL.match(spec)) or os.path.exists(spec) or spec.startswith((".", "~")) \
        or os.sep in spec or "/" in spec or spec.endswith(_ARCHIVES)


def _distribution_of(spec: str) -> str | None:
    """The distribution a requirement or wheel file names (None for a folder, an sdist or a URL)."""
    name = Path(urllib.parse.urlparse(spec).path if _URL.match(spec) else spec).name
    if name.endswith(".whl"):
        try:
            return parse_wheel_filename(name)[0]
        except InvalidWheelFilename:
            return None
    try:
        requirement = Requirement(spec)
    except InvalidRequirement:
        return None
    return requirement.name


def _unknown_name(spec: str, index: PluginIndex | None, index_problem: str | None) -> str:
    anyway = f"`hermes plugins install --pip {shlex.quote(spec)}` installs the PyPI project of that name anyway"
    if index is None:
        return f"cannot check {spec!r} against the plugin index ({index_problem}); nothing was installed; {anyway}"
    names = {e.id.lower(): e.id for e in index} | {e.distribution.lower(): e.id for e in index}
    close = list(dict.fromkeys(names[m] for m in difflib.get_close_matches(spec.lower(), names, n=5, cutoff=0.6)))
    hint = f"closest plugin ids: {', '.join(close[:3])}" if close else "`hermes plugins search WORDS` finds plugins"
    return (f"{spec!r} is not a plugin in the index ({index.source}), so it was not handed to pip; {hint}; "
            f"{anyway} (Hermes uninstalls it again if it provides no plugin)")


# -- freeze -------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FrozenPlugin:
    """One installed plugin distribution as ``pip install -r`` can install it again."""

    plugins: list[str]
    distribution: str
    version: str
    #: The requirement line, or None when pip could not reinstall it (``warning`` says why).
    requirement: str | None
    warning: str | None = None
    #: The ``--find-links`` folders pip needs to find it (it was installed from them).
    find_links: list[str] = field(default_factory=list)


def frozen_plugins(home: Path | None = None) -> list[FrozenPlugin]:
    """Every distribution that provides a plugin, as pip would reinstall it; sorted by distribution name.
    ``home``: the Hermes home whose install records name the ``--find-links`` folders of plugins installed
    from one (default: none)."""
    by_name: dict[str, tuple[Distribution, list[str]]] = {}
    for plugin_id, dist in plugin_distributions().items():
        by_name.setdefault(dist.metadata["Name"], (dist, []))[1].append(plugin_id)
    return [_frozen(dist, sorted(ids), home) for _, (dist, ids)
            in sorted(by_name.items(), key=lambda i: i[0].lower())]


def _frozen(dist: Distribution, plugin_ids: list[str], home: Path | None) -> FrozenPlugin:
    name, version = dist.metadata["Name"], dist.version
    direct = direct_url(dist)
    if not direct:
        return _from_an_index(plugin_ids, name, version, home)
    url = direct.get("url", "")
    if "vcs_info" in direct:
        vcs = direct["vcs_info"]
        return FrozenPlugin(plugin_ids, name, version, f"{name} @ {vcs['vcs']}+{url}@{vcs.get('commit_id', '')}")
    if url.startswith("file://") and not Path(urllib.request.url2pathname(url.removeprefix("file://"))).exists():
        return FrozenPlugin(plugin_ids, name, version, None,
                            f"{name} {version} was installed from {url}, which no longer exists; "
                            "pip cannot install it again from there")
    if direct.get("dir_info", {}).get("editable"):
        return FrozenPlugin(plugin_ids, name, version, f"-e {url}")
    return FrozenPlugin(plugin_ids, name, version, f"{name} @ {url}")


def _from_an_index(plugin_ids: list[str], name: str, version: str, home: Path | None) -> FrozenPlugin:
    """``name==version``, with the ``--find-links`` folders it was installed from while they still exist."""
    from .installsources import find_links_of

    links = find_links_of(home, name, version) if home is not None else []
    gone = [link for link in links if "://" not in link and not Path(link).is_dir()]
    if gone:
        return FrozenPlugin(plugin_ids, name, version, None,
                            f"{name} {version} was installed from --find-links {gone[0]}, which no longer exists; "
                            "pip cannot install it again from there")
    return FrozenPlugin(plugin_ids, name, version, f"{name}=={version}", find_links=links)


def newly_installed(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """Distributions in ``after`` that ``before`` did not have."""
    return sorted(set(after) - set(before))


def changed(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """Distributions that are new or whose version changed."""
    return sorted(name for name, version in after.items() if before.get(name) != version)


def describe_versions(names: Iterable[str], versions: Mapping[str, str]) -> str:
    """``a 1.0, b 2.0``."""
    return ", ".join(f"{name} {versions[name]}" for name in names)
