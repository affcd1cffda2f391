"""``hermes skills install``: copy a skill from a folder, a ``.zip`` or a plugin's wheel into the user's skills,
validated first.

Nothing of the skill runs: its files are copied as data. From a ``.zip`` only regular files are taken,
each under a relative path without ``..``; the archive may not hold more than :data:`MAX_FILES` files or
unpack to more than :data:`MAX_BYTES` (counted while reading, whatever its headers claim). Every shape an
archive can take ends in a :class:`SkillError` that names the member, never a traceback: a name used twice or
for a file and a folder at once, a name part longer than :data:`MAX_NAME_BYTES`, and whatever the file system
refuses.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..errors import SkillError
from .document import SKILL_DOCUMENT, read_front_matter
from .validation import name_problems, validate_skill

__all__ = ["MAX_BYTES", "MAX_FILES", "InstalledSkill", "install_from_wheel", "install_skill"]

MAX_FILES = 1000
MAX_BYTES = 32 * 1024 * 1024
#: The longest file or folder name (in UTF-8 bytes) a skill may have: most file systems' limit.
MAX_NAME_BYTES = 255
_CHUNK = 64 * 1024


@dataclass
class InstalledSkill:
    """Where a skill went, and what was left out or worth a warning."""

    name: str
    folder: Path
    replaced: bool = False
    warnings: list[str] = field(default_factory=list)


def install_skill(source: Path, user_root: Path, *, force: bool = False) -> InstalledSkill:
    """Install the skill at ``source`` (a skill folder, or a ``.zip`` holding one) as ``user_root/<name>``.

    Refuses an invalid skill (every problem listed), and a name the user already has unless ``force``.
    """
    if not source.exists():
        raise SkillError(f"{source}: no such file or folder")
    with _file_errors(str(source)), _staging(user_root) as staging:
        skipped = _unzip(source, staging) if source.is_file() else _copy_tree(source, staging)
        return _install_staged(staging, str(source), user_root, force, skipped)


def install_from_wheel(wheel: Path, folders: Sequence[str], user_root: Path, *,
                       force: bool = False) -> list[InstalledSkill]:
    """Install the skills whose folders (paths inside the zip) ``folders`` lists from the wheel ``wheel``, each
    as :func:`install_skill` would; nothing of the wheel is installed or run."""
    installed = []
    for folder in folders:
        with _file_errors(f"{wheel.name}:{folder}"), _staging(user_root) as staging:
            skipped = _unzip(wheel, staging, prefix=folder.strip("/") + "/")
            installed.append(_install_staged(staging, f"{wheel.name}:{folder}", user_root, force, skipped))
    return installed


@contextmanager
def _file_errors(source: str) -> Iterator[None]:
    """What the file system refuses while installing ``source`` becomes a :class:`SkillError` naming the file."""
    try:
        yield
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise SkillError(f"{source}: cannot install the skill: {exc.strerror or exc}{where}; nothing "
                         "installed") from None


@contextmanager
def _staging(user_root: Path) -> Iterator[Path]:
    """A private folder beside the user's skills (a hidden name: never listed), removed afterwards."""
    user_root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".install-", dir=user_root))
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _install_staged(staging: Path, source: str, user_root: Path, force: bool, skipped: list[str]) -> InstalledSkill:
    folder = _named(_skill_folder(staging), staging)
    report = validate_skill(folder)
    name = folder.name
    if not report.valid:
        raise SkillError(f"{source} is not a valid skill, nothing installed:\n" +
                         "\n".join(str(p).replace(str(folder), f"<skill {name}>") for p in report.errors))
    target = user_root / name
    replaced = target.exists() or target.is_symlink()
    if replaced and not force:
        raise SkillError(f"a skill {name!r} is already installed ({target}); --force replaces it")
    if replaced:
        _remove(target)
    os.rename(folder, target)
    return InstalledSkill(name, target, replaced,
                          [*skipped, *(str(w).replace(str(folder), str(target)) for w in report.warnings)])


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    else:
        shutil.rmtree(path)


def _named(folder: Path, staging: Path) -> Path:
    """The unpacked skill moved to a folder named as its front matter says (the standard wants them equal); a
    name that is no plain folder name keeps the folder's, and validation says why."""
    name = read_front_matter(folder / SKILL_DOCUMENT).fields.get("name")
    if not isinstance(name, str) or not name.strip() or name_problems(name):
        return folder
    named = staging / "named" / name.strip()
    named.parent.mkdir()
    os.rename(folder, named)
    return named


def _skill_folder(staging: Path) -> Path:
    """The folder holding ``SKILL.md``: the copy itself, or its one top-level folder."""
    inner = staging / "skill"
    if (inner / SKILL_DOCUMENT).is_file():
        return inner
    children = [child for child in inner.iterdir() if child.is_dir()] if inner.is_dir() else []
    if len(children) == 1 and (children[0] / SKILL_DOCUMENT).is_file():
        return children[0]
    raise SkillError(f"no {SKILL_DOCUMENT} at the top of the skill, nor in its one top-level folder")


def _copy_tree(source: Path, staging: Path) -> list[str]:
    """Copy the regular files of ``source``; symlinks and special files are left out (and said so)."""
    skipped: list[str] = []
    budget = _Budget()
    target_root = staging / "skill"
    for folder, folders, files in os.walk(source):  # os.walk does not enter symlinked folders
        relative = Path(folder).relative_to(source)
        folders[:] = [f for f in folders if f != ".git"]
        for name in files:
            path = Path(folder) / name
            mode = os.lstat(path).st_mode
            if not stat.S_ISREG(mode):
                skipped.append(f"{relative / name}: left out (not a regular file)")
                continue
            budget.count(os.lstat(path).st_size)
            destination = target_root / relative / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination, follow_symlinks=False)
    return skipped


def _unzip(archive: Path, staging: Path, prefix: str = "") -> list[str]:
    """Extract the regular files of ``archive`` (those under ``prefix``, which is cut off); any member whose path
    leaves the folder refuses the archive."""
    skipped: list[str] = []
    budget = _Budget()
    target_root = staging / "skill"
    try:
        with zipfile.ZipFile(archive) as zipped:
            members = []
            for member in zipped.infolist():
                if not member.filename.startswith(prefix):
                    continue
                parts = _member_parts(member.filename[len(prefix):])
                if member.is_dir() or not parts:
                    continue
                if stat.S_ISLNK(member.external_attr >> 16):
                    skipped.append(f"{member.filename}: left out (a symlink)")
                    continue
                members.append((member, parts))
            _check_layout(members)
            for member, parts in members:
                budget.count(0)
                destination = target_root.joinpath(*parts)
                try:
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    with zipped.open(member) as source, open(destination, "wb") as out:
                        while chunk := source.read(_CHUNK):
                            budget.grow(len(chunk))
                            out.write(chunk)
                except OSError as exc:
                    raise SkillError(f"{archive}: zip member {member.filename!r} cannot be unpacked: "
                                     f"{exc.strerror or exc}") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError,
            ValueError) as exc:
        raise SkillError(f"{archive}: not a usable .zip: {exc}") from None
    return skipped


def _check_layout(members: list[tuple[zipfile.ZipInfo, tuple[str, ...]]]) -> None:
    """Refuse a name used twice, or for a file and a folder at once, and a name part too long for a file system."""
    files: dict[tuple[str, ...], str] = {}
    for member, parts in members:
        too_long = next((part for part in parts if len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES),
                        None)
        if too_long is not None:
            raise SkillError(f"zip member {member.filename[:80]!r}...: a name in its path is "
                             f"{len(too_long.encode('utf-8', 'surrogateescape'))} bytes long, over the "
                             f"{MAX_NAME_BYTES} a file system allows")
        if parts in files:
            raise SkillError(f"zip member {member.filename!r} is in the archive twice (also as {files[parts]!r})")
        files[parts] = member.filename
    folders = {parts[:depth] for parts in files for depth in range(1, len(parts))}
    both = sorted(folders & files.keys())
    if both:
        raise SkillError(f"zip member {files[both[0]]!r} is a file, and other members put files inside it as a "
                         "folder")


def _member_parts(name: str) -> tuple[str, ...]:
    """The path of a zip member as parts; one that is absolute or holds ``..`` refuses the whole archive."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise SkillError(f"zip member {name!r} leads out of the skill folder")
    return tuple(part for part in path.parts if part not in ("", "."))


class _Budget:
    """Counts files and bytes as they are written; past a limit the install stops."""

    def __init__(self) -> None:
        self.files = 0
        self.bytes = 0

    def count(self, size: int) -> None:
        self.files += 1
        if self.files > MAX_FILES:
            raise SkillError(f"more than {MAX_FILES} files: not a skill")
        self.grow(size)

    def grow(self, size: int) -> None:
        self.bytes += size
        if self.bytes > MAX_BYTES:
            raise SkillError(f"more than {MAX_BYTES // (1024 * 1024)} MiB unpacked: not a skill")
