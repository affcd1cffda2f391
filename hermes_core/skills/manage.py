"""``skill_manage``: create, change and delete the user's own skills (``$HERMES_HOME/skills``), nothing else.

Plugin and project skills are read-only. Every change is validated before it is written, and written
atomically: a new ``SKILL.md`` or file replaces the old one whole, a new skill appears as a whole folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from ..config.cachefile import write_atomically
from ..errors import SkillError
from .catalog import SkillCatalog, SkillEntry
from .document import SKILL_DOCUMENT, read_regular
from .files import FILE_LIMIT, LINKED_GROUPS, resolve_inside
from .validation import name_problems, validate_text

__all__ = ["ACTIONS", "manage_skill", "write_atomically"]

ACTIONS = ("create", "patch", "edit", "delete", "write_file", "remove_file")


def manage_skill(catalog: SkillCatalog, user_root: Path, action: str, name: str, *, content: str | None = None,
                 category: str | None = None, file_path: str | None = None, file_content: str | None = None,
                 old_string: str | None = None, new_string: str | None = None,
                 replace_all: bool = False) -> dict[str, Any]:
    """Run one ``skill_manage`` action; raises :class:`SkillError` saying what is wrong (nothing changed)."""
    if action not in ACTIONS:
        raise SkillError(f"unknown action {action!r}: use one of {', '.join(ACTIONS)}")
    name = (name or "").strip()
    if action == "create":
        return _create(catalog, user_root, name, _required(content, "content", action), category)
    entry = _own_skill(catalog, user_root, name)
    assert entry.folder is not None  # a user skill is always a folder
    if action == "edit":
        _write_document(entry, _required(content, "content", action))
        return {"success": True, "message": f"skill {name!r} rewritten", "path": str(entry.document)}
    if action == "patch":
        return _patch(entry, file_path, _required(old_string, "old_string", action),
                      _required(new_string, "new_string", action, empty=True), replace_all)
    if action == "delete":
        shutil.rmtree(entry.folder)
        return {"success": True, "message": f"skill {name!r} deleted"}
    target = _supporting_file(entry, _required(file_path, "file_path", action))
    if action == "write_file":
        text = _required(file_content, "file_content", action, empty=True)
        if len(text.encode("utf-8")) > FILE_LIMIT:
            raise SkillError(f"file_content is larger than {FILE_LIMIT // 1024} KiB")
        write_atomically(target, text)
        return {"success": True, "message": f"wrote {file_path} in skill {name!r}", "path": str(target)}
    if not target.is_file() or target.is_symlink():
        raise SkillError(f"skill {name!r} has no file {file_path!r}")
    target.unlink()
    return {"success": True, "message": f"removed {file_path} from skill {name!r}"}


def _required(value: str | None, argument: str, action: str, *, empty: bool = False) -> str:
    if value is None or (not empty and not value.strip()):
        raise SkillError(f"{action!r} needs {argument!r}")
    return value


def _own_skill(catalog: SkillCatalog, user_root: Path, name: str) -> SkillEntry:
    """The user skill ``name``; a plugin's or the project's is refused (read-only)."""
    entry = catalog.get(name)
    if entry is None:
        raise SkillError(f"no skill {name!r} (skill_manage create makes one)")
    if entry.source != "user":
        raise SkillError(f"skill {name!r} comes from {entry.origin} and is read-only: only skills in "
                         f"{user_root} can be changed")
    folder = entry.folder
    root = Path(os.path.realpath(user_root))
    if folder is None or folder.is_symlink() or root not in Path(os.path.realpath(folder)).parents:
        raise SkillError(f"skill {name!r} is not a folder inside {user_root}")
    return entry


def _create(catalog: SkillCatalog, user_root: Path, name: str, content: str, category: str | None) -> dict[str, Any]:
    problems = name_problems(name)
    if problems:
        raise SkillError(f"invalid skill name: {'; '.join(problems)}")
    existing = catalog.get(name)
    if existing is not None:
        raise SkillError(f"a skill {name!r} already exists ({existing.origin}); use edit or patch to change it")
    parent = user_root
    if category:
        parts = PurePosixPath(category.strip().replace("\\", "/")).parts
        if not parts or any(name_problems(part) for part in parts) or len(parts) > 3:
            raise SkillError(f"invalid category {category!r}: use one to three names of lower-case letters, "
                             "digits and '-', separated by '/'")
        parent = user_root.joinpath(*parts)
    folder = parent / name
    root = Path(os.path.realpath(user_root))
    if root != Path(os.path.realpath(parent)) and root not in Path(os.path.realpath(parent)).parents:
        raise SkillError(f"category {category!r} leads out of {user_root} (a symlink)")
    if folder.exists() or folder.is_symlink():
        raise SkillError(f"{folder} already exists")
    report = validate_text(content, folder)
    if not report.valid:
        raise SkillError("invalid SKILL.md, nothing written:\n" + "\n".join(map(str, report.errors)))
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=parent))
    try:
        (staging / SKILL_DOCUMENT).write_text(content, encoding="utf-8")
        os.rename(staging, folder)  # the whole skill appears at once
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {"success": True, "message": f"skill {name!r} created", "path": str(folder / SKILL_DOCUMENT),
            "warnings": [str(w) for w in report.warnings]}


def _write_document(entry: SkillEntry, content: str) -> None:
    assert entry.folder is not None
    report = validate_text(content, entry.folder)
    if not report.valid:
        raise SkillError("invalid SKILL.md, nothing written:\n" + "\n".join(map(str, report.errors)))
    write_atomically(entry.document, content)


def _supporting_file(entry: SkillEntry, file_path: str) -> Path:
    """A file the model may write or remove: inside one of the standard's folders of the skill."""
    assert entry.folder is not None
    target = resolve_inside(entry.folder, file_path)
    relative = target.relative_to(Path(os.path.realpath(entry.folder)))
    if len(relative.parts) < 2 or relative.parts[0] not in LINKED_GROUPS:
        raise SkillError(f"file_path {file_path!r} must be inside one of {', '.join(LINKED_GROUPS)}")
    return target


def _patch(entry: SkillEntry, file_path: str | None, old: str, new: str, replace_all: bool) -> dict[str, Any]:
    assert entry.folder is not None
    document = not file_path or file_path.strip() == SKILL_DOCUMENT
    target = entry.document if document else _supporting_file(entry, file_path or "")
    capped = read_regular(target, FILE_LIMIT)
    if capped.truncated:
        raise SkillError(f"{target.name} is larger than {FILE_LIMIT // 1024} KiB: rewrite it instead")
    try:
        text = capped.data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillError(f"{target.name} is not UTF-8 text") from None
    count = text.count(old) if old else 0
    if count == 0:
        raise SkillError(f"old_string not found in {target.name}")
    if count > 1 and not replace_all:
        raise SkillError(f"old_string occurs {count} times in {target.name}: give more context, or replace_all")
    patched = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    if document:
        _write_document(entry, patched)
    else:
        write_atomically(target, patched)
    replaced = count if replace_all else 1
    return {"success": True,
            "message": f"patched {target.name} of skill {entry.name!r} ({replaced} replacement{'s' * (replaced > 1)})"}
