"""Checking a skill against the Agent Skills standard; every problem names its file and line.

The rules are the standard's, as its reference implementation (``skills-ref``) applies them: the name (at
most 64 characters: lower-case letters, digits and single hyphens, not at either end) equals the folder's
name; the description is present and at most 1024 characters; ``compatibility`` at most 500; ``metadata`` a
mapping. Hermes adds: the front matter must be YAML without aliases, and each relative Markdown link of the
body must name a file inside the skill folder. Fields outside the standard (Hermes Agent's ``platforms``,
``prerequisites`` ...) are warnings, where ``skills-ref`` refuses them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SkillError
from .document import MAX_DESCRIPTION, SKILL_DOCUMENT, FrontMatter, Problem, parse_front_matter, read_regular
from .files import FILE_LIMIT, resolve_inside

__all__ = ["MAX_DESCRIPTION", "MAX_NAME", "SkillReport", "name_problems", "validate_skill", "validate_text"]

MAX_NAME = 64
MAX_COMPATIBILITY = 500
STANDARD_FIELDS = frozenset({"name", "description", "license", "allowed-tools", "metadata", "compatibility"})
#: Fields Hermes Agent reads beyond the standard (a warning says where the standard wants them).
HERMES_AGENT_FIELDS = frozenset({"platforms", "prerequisites", "required_environment_variables", "setup", "tags",
                                 "related_skills", "version", "author"})
_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


@dataclass
class SkillReport:
    """What validating one skill found."""

    document: Path
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    name: str | None = None

    @property
    def valid(self) -> bool:
        return not self.errors


def name_problems(name: object) -> list[str]:
    """Why ``name`` is not a skill name under the standard (empty: it is one)."""
    if not isinstance(name, str) or not name.strip():
        return ["'name' must be a non-empty string"]
    name = unicodedata.normalize("NFKC", name.strip())
    problems = []
    if len(name) > MAX_NAME:
        problems.append(f"name {name!r} is longer than {MAX_NAME} characters ({len(name)})")
    if name != name.lower():
        problems.append(f"name {name!r} must be lower-case")
    if name.startswith("-") or name.endswith("-"):
        problems.append(f"name {name!r} must not start or end with '-'")
    if "--" in name:
        problems.append(f"name {name!r} must not hold '--'")
    if not all(c.isalnum() or c == "-" for c in name):
        problems.append(f"name {name!r} may hold only letters, digits and '-'")
    return problems


def validate_skill(path: Path) -> SkillReport:
    """Validate the skill at ``path``: a skill folder, or its ``SKILL.md``."""
    folder = path.parent if path.name == SKILL_DOCUMENT and not path.is_dir() else path
    document = folder / SKILL_DOCUMENT
    report = SkillReport(document)
    if not folder.is_dir():
        report.errors.append(Problem(str(folder), 0, "not a skill folder (no such folder)"))
        return report
    try:
        capped = read_regular(document, FILE_LIMIT)
    except SkillError as exc:
        report.errors.append(Problem(str(document), 0, str(exc).removeprefix(f"{document}: ")))
        return report
    if capped.truncated:
        report.errors.append(Problem(str(document), 0, f"larger than {FILE_LIMIT // 1024} KiB"))
        return report
    try:
        text = capped.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        report.errors.append(Problem(str(document), 1, f"not UTF-8 text: {exc.reason}"))
        return report
    return validate_text(text, folder, report)


def validate_text(text: str, folder: Path, report: SkillReport | None = None) -> SkillReport:
    """Validate ``text`` as the ``SKILL.md`` of ``folder`` (which need not exist yet: its links are then not
    checked)."""
    document = folder / SKILL_DOCUMENT
    report = report or SkillReport(document)
    where = str(document)
    front = parse_front_matter(text, document)
    report.errors += front.problems
    if front.problems:
        return report
    fields = front.fields
    report.name = fields.get("name") if isinstance(fields.get("name"), str) else None

    def line(key: str) -> int:
        return front.lines.get(key, 1)

    if "name" not in fields:
        report.errors.append(Problem(where, 1, "missing required field 'name'"))
    else:
        problems = name_problems(fields["name"])
        report.errors += [Problem(where, line("name"), message) for message in problems]
        if not problems and unicodedata.normalize("NFKC", folder.name) != \
                unicodedata.normalize("NFKC", fields["name"].strip()):
            report.errors.append(Problem(where, line("name"), f"name {fields['name']!r} differs from its folder's "
                                                              f"name {folder.name!r}"))
    description = fields.get("description")
    if "description" not in fields:
        report.errors.append(Problem(where, 1, "missing required field 'description'"))
    elif not isinstance(description, str) or not description.strip():
        report.errors.append(Problem(where, line("description"), "'description' must be a non-empty string"))
    elif len(description) > MAX_DESCRIPTION:
        report.errors.append(Problem(where, line("description"), f"'description' is longer than {MAX_DESCRIPTION} "
                                                                 f"characters ({len(description)})"))
    compatibility = fields.get("compatibility")
    if "compatibility" in fields:
        if not isinstance(compatibility, str):
            report.errors.append(Problem(where, line("compatibility"), "'compatibility' must be a string"))
        elif len(compatibility) > MAX_COMPATIBILITY:
            report.errors.append(Problem(where, line("compatibility"), f"'compatibility' is longer than "
                                                                       f"{MAX_COMPATIBILITY} characters"))
    if "metadata" in fields and not isinstance(fields["metadata"], dict):
        report.errors.append(Problem(where, line("metadata"), "'metadata' must be a mapping of keys to strings"))
    for key in ("license", "allowed-tools"):
        if key in fields and not isinstance(fields[key], str):
            report.errors.append(Problem(where, line(key), f"{key!r} must be a string"))
    for key in sorted(set(fields) - STANDARD_FIELDS):
        known = " (read by Hermes Agent)" if key in HERMES_AGENT_FIELDS else ""
        report.warnings.append(Problem(where, line(key), f"field {key!r}{known} is not in the Agent Skills "
                                                         "standard; other readers may refuse it (the standard "
                                                         "puts extra fields under 'metadata')"))
    if folder.is_dir():
        report.errors += _link_problems(front, folder, where)
    return report


def _link_problems(front: FrontMatter, folder: Path, where: str) -> list[Problem]:
    """Each relative Markdown link of the body that names no file inside the skill folder."""
    problems = []
    for offset, text in enumerate(front.body.splitlines()):
        for match in _LINK.finditer(text):
            target = match.group(1).split("#", 1)[0]
            if not target or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith(("#", "/")):
                continue  # a URL, an anchor, a site-absolute link: not a file of the skill
            try:
                resolved = resolve_inside(folder, target)
            except SkillError as exc:
                problems.append(Problem(where, front.body_line + offset, f"link {target!r}: {exc}"))
                continue
            if not resolved.exists():
                problems.append(Problem(where, front.body_line + offset, f"linked file {target!r} does not exist"))
    return problems
