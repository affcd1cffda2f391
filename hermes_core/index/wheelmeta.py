"""Read a wheel's metadata, entry points and ``plugin.yaml`` straight from its zip: nothing installed or imported.

``importlib.metadata`` reads the ``.dist-info`` folder inside the zip (a ``zipfile.Path``) as it reads an
installed one, and ``packaging.metadata`` parses ``METADATA`` into its core-metadata fields.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import EntryPoint, PathDistribution
from pathlib import Path
from typing import Any, Final

from packaging.metadata import RawMetadata, parse_email

from ..errors import WheelError
from ..plugins.discovery import ENTRY_POINT_GROUP, LEGACY_ENTRY_POINT_GROUP

__all__ = ["WheelError", "WheelInfo", "build_wheel", "download_wheel", "read_wheel"]

#: Larger members are not read: a manifest or METADATA file is never this big.
MAX_MEMBER_BYTES: Final = 4 * 1024 * 1024
#: Seconds pip may take to download (or build) one wheel.
PIP_TIMEOUT: Final = 600


@dataclass
class WheelInfo:
    """What a wheel says about itself, read from the zip."""

    path: Path
    #: The core-metadata fields of ``METADATA`` (``name``, ``summary``, ``classifiers``, ``project_urls``, ...).
    metadata: RawMetadata
    entry_points: list[EntryPoint]
    members: frozenset[str]
    _zip: zipfile.ZipFile

    @property
    def name(self) -> str:
        return self.metadata["name"]

    @property
    def version(self) -> str:
        return self.metadata["version"]

    def field(self, name: str) -> str | None:
        """A single-valued metadata field (``summary``, ``license_expression``, ...), stripped; None when blank."""
        value: Any = self.metadata.get(name)
        return value.strip() or None if isinstance(value, str) else None

    @property
    def project_urls(self) -> dict[str, str]:
        """``Project-URL`` entries by label, lower-cased without spaces, dashes or underscores."""
        urls: dict[str, str] = {}
        for label, url in (self.metadata.get("project_urls") or {}).items():
            urls.setdefault("".join(ch for ch in label.lower() if ch.isalnum()), url.strip())
        return urls

    def plugin_entry_points(self) -> list[EntryPoint]:
        """Entry points in the Hermes groups; a name in both groups counts once (the current group wins)."""
        found: dict[str, EntryPoint] = {}
        for group in (ENTRY_POINT_GROUP, LEGACY_ENTRY_POINT_GROUP):
            for ep in self.entry_points:
                if ep.group == group:
                    found.setdefault(ep.name, ep)
        return list(found.values())

    def read_text(self, member: str) -> str:
        """The text of one member of the zip."""
        info = self._zip.getinfo(member)
        if info.file_size > MAX_MEMBER_BYTES:
            raise WheelError(f"{self.path.name}: {member} is too large to read ({info.file_size} bytes)")
        try:
            return self._zip.read(info).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WheelError(f"{self.path.name}: {member} is not UTF-8 text: {exc}") from None

    def manifest_member(self, ep: EntryPoint) -> str | None:
        """The ``plugin.yaml`` of an entry point: next to its package, else in the closest parent package."""
        parts = ep.module.split(".")
        for depth in range(len(parts), 0, -1):
            folder = "/".join(parts[:depth])
            for root in ("", *self._data_roots()):
                candidate = f"{root}{folder}/plugin.yaml"
                if candidate in self.members:
                    return candidate
        return None

    def _data_roots(self) -> list[str]:
        roots = set()
        for member in self.members:
            parts = member.split("/")
            if len(parts) > 2 and parts[0].endswith(".data") and parts[1] in ("purelib", "platlib"):
                roots.add(f"{parts[0]}/{parts[1]}/")
        return sorted(roots)

    def close(self) -> None:
        self._zip.close()

    def __enter__(self) -> WheelInfo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_wheel(path: Path) -> WheelInfo:
    """Open ``path`` and read its ``METADATA`` and ``entry_points.txt``; raises :class:`WheelError`."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise WheelError(f"{path.name}: not a readable wheel: {exc}") from None
    try:
        members = frozenset(archive.namelist())
        dist_info = _dist_info(path, members)
        info = WheelInfo(path, {}, [], members, archive)
        # read through the size check first; importlib.metadata then finds the text in the zip's cache
        metadata, _ = parse_email(info.read_text(f"{dist_info}/METADATA"))
        if not metadata.get("name") or not metadata.get("version"):
            raise WheelError(f"{path.name}: {dist_info}/METADATA has no Name or Version")
        info.metadata = metadata
        if f"{dist_info}/entry_points.txt" in members:
            info.read_text(f"{dist_info}/entry_points.txt")
            try:
                info.entry_points = list(PathDistribution(zipfile.Path(archive, f"{dist_info}/")).entry_points)
            except (ValueError, TypeError) as exc:  # what importlib.metadata raises for a line it cannot split
                raise WheelError(f"{path.name}: entry_points.txt cannot be parsed: {exc}") from None
        return info
    except BaseException:
        archive.close()
        raise


def _dist_info(path: Path, members: frozenset[str]) -> str:
    folders = sorted({m.split("/")[0] for m in members if m.split("/")[0].endswith(".dist-info")
                      and m.endswith("/METADATA") and m.count("/") == 1})
    if not folders:
        raise WheelError(f"{path.name}: not a wheel: no *.dist-info/METADATA inside")
    if len(folders) > 1:
        stem = "-".join(path.name.split("-")[:2]).lower()
        preferred = [f for f in folders if f.lower() == f"{stem}.dist-info"]
        if len(preferred) != 1:
            raise WheelError(f"{path.name}: several .dist-info folders: {', '.join(folders)}")
        return preferred[0]
    return folders[0]


def _pip(args: Sequence[str], what: str) -> None:
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    try:
        result = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, env=env,
                                timeout=PIP_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise WheelError(f"{what}: pip did not finish within {PIP_TIMEOUT} s") from None
    if result.returncode:
        lines = [line for line in (result.stderr or result.stdout).splitlines() if line.strip()]
        reason = next((line for line in reversed(lines) if line.startswith("ERROR")), lines[-1] if lines else "")
        raise WheelError(f"{what}: pip failed: {reason.removeprefix('ERROR: ')}")


def _only_wheel(folder: Path, what: str) -> Path:
    wheels = sorted(folder.glob("*.whl"))
    if len(wheels) != 1:
        found = ", ".join(w.name for w in wheels) or "nothing"
        raise WheelError(f"{what}: expected one wheel, pip produced {found}")
    return wheels[0]


@contextmanager
def download_wheel(requirement: str, *, find_links: Sequence[str] = (), index_url: str | None = None,
                   no_index: bool = False) -> Iterator[Path]:
    """Download the wheel of ``requirement`` (no dependencies, no sdists) into a temporary folder."""
    args = ["download", "--no-deps", "--only-binary", ":all:", "--quiet"]
    args += [arg for link in find_links for arg in ("--find-links", str(link))]
    if index_url:
        args += ["--index-url", index_url]
    if no_index:
        args.append("--no-index")
    with tempfile.TemporaryDirectory(prefix="hermes-index-") as tmp:
        _pip([*args, "--dest", tmp, requirement], requirement)
        yield _only_wheel(Path(tmp), requirement)


@contextmanager
def build_wheel(project: Path) -> Iterator[Path]:
    """Build the wheel of a local project folder (``pip wheel --no-deps --no-build-isolation``)."""
    with tempfile.TemporaryDirectory(prefix="hermes-index-") as tmp:
        _pip(["wheel", "--no-deps", "--no-build-isolation", "--quiet", "--wheel-dir", tmp, str(project)],
             str(project))
        yield _only_wheel(Path(tmp), str(project))
