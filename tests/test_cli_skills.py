"""``hermes skills list|show|validate|new|install``, and the skills in ``hermes plugins info`` and ``validate``."""

from __future__ import annotations

import io
import json
import os
import stat
import warnings
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hermes_core.cli import cli


def hermes(*args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    return result


def skill_text(name: str, description: str = "Does things", body: str = "# Steps\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


def make_skill(root: Path, name: str, text: str | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text or skill_text(name))
    return folder


def test_new_makes_a_skeleton_that_validates_and_installs(isolated_home: Path, tmp_path: Path) -> None:
    hermes("skills", "new", "pdf-forms", "--dir", str(tmp_path), "--description", "Fill: PDF forms")
    assert "valid" in hermes("skills", "validate", str(tmp_path / "pdf-forms")).output
    assert "installed skill 'pdf-forms'" in hermes("skills", "install", str(tmp_path / "pdf-forms")).output
    [row] = json.loads(hermes("skills", "list", "--json").output)
    assert (row["name"], row["description"], row["source"]) == ("pdf-forms", "Fill: PDF forms", "user")
    assert "invalid skill name" in hermes("skills", "new", "Bad_Name", "--dir", str(tmp_path), code=1).output


def test_install_refuses_an_existing_name_unless_forced(isolated_home: Path, tmp_path: Path) -> None:
    source = make_skill(tmp_path / "src", "notes", skill_text("notes", "first"))
    hermes("skills", "install", str(source))
    (source / "SKILL.md").write_text(skill_text("notes", "second"))
    assert "already installed" in hermes("skills", "install", str(source), code=1).output
    assert "first" in (isolated_home / "skills" / "notes" / "SKILL.md").read_text()
    assert "replaced skill 'notes'" in hermes("skills", "install", str(source), "--force").output
    assert "second" in (isolated_home / "skills" / "notes" / "SKILL.md").read_text()


def test_install_refuses_an_invalid_skill_listing_every_problem(isolated_home: Path, tmp_path: Path) -> None:
    source = make_skill(tmp_path, "broken", "---\nname: Broken_\n---\n[x](references/none.md)\n")
    output = hermes("skills", "install", str(source), code=1).output
    assert all(words in output for words in ("lower-case", "description", "none.md"))
    assert not (isolated_home / "skills").exists() or not any((isolated_home / "skills").iterdir())


def test_install_copies_regular_files_and_leaves_symlinks_out(isolated_home: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("TOP SECRET")
    source = make_skill(tmp_path, "kit")
    (source / "scripts").mkdir()
    (source / "scripts" / "run.sh").write_text("#!/bin/sh\ntouch ran\n")
    (source / "scripts" / "leak.txt").symlink_to(tmp_path / "secret.txt")
    output = hermes("skills", "install", str(source)).output
    installed = isolated_home / "skills" / "kit"
    assert "scripts/leak.txt: left out" in output
    assert sorted(p.relative_to(installed).as_posix() for p in installed.rglob("*")) == \
        ["SKILL.md", "scripts", "scripts/run.sh"]
    assert not (installed / "ran").exists() and not Path("ran").exists()  # nothing of the skill ran


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_install_and_validate_never_open_a_fifo(isolated_home: Path, tmp_path: Path) -> None:
    source = make_skill(tmp_path, "piped")
    os.mkfifo(source / "references.md")  # no writer: opening it to copy would block for ever
    output = hermes("skills", "install", str(source)).output
    assert "references.md: left out (not a regular file)" in output
    planted = tmp_path / "planted"
    planted.mkdir()
    os.mkfifo(planted / "SKILL.md")
    assert "not a regular file" in hermes("skills", "validate", str(planted), code=1).output


def zipped(tmp_path: Path, members: dict[str, bytes], *, symlinks: dict[str, str] | None = None) -> Path:
    archive = tmp_path / "skill.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in members.items():
            out.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            out.writestr(info, target)
    return archive


def test_install_from_a_zip_with_a_top_folder(isolated_home: Path, tmp_path: Path) -> None:
    archive = zipped(tmp_path, {"zipped/SKILL.md": skill_text("zipped").encode(), "zipped/references/a.md": b"# A\n"},
                     symlinks={"zipped/references/passwd": "/etc/passwd"})
    output = hermes("skills", "install", str(archive)).output
    assert "references/passwd: left out (a symlink)" in output
    installed = isolated_home / "skills" / "zipped"
    assert (installed / "references" / "a.md").read_text() == "# A\n"
    assert not (installed / "references" / "passwd").exists()


@pytest.mark.parametrize("member", ["../evil/SKILL.md", "/abs/SKILL.md", "zipped/../../evil.txt", "C:/evil.txt"])
def test_a_zip_member_that_leaves_the_folder_refuses_the_archive(isolated_home: Path, tmp_path: Path,
                                                                 member: str) -> None:
    archive = zipped(tmp_path, {"zipped/SKILL.md": skill_text("zipped").encode(), member: b"evil"})
    assert "leads out of the skill folder" in hermes("skills", "install", str(archive), code=1).output
    assert not list(tmp_path.rglob("evil*")) and not (isolated_home / "skills" / "zipped").exists()


def test_a_zip_bomb_is_stopped_while_it_unpacks(isolated_home: Path, tmp_path: Path) -> None:
    from hermes_core.skills.install import MAX_BYTES

    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("bomb/SKILL.md", skill_text("bomb"))
        with out.open("bomb/assets/zeros.bin", "w") as member:  # compresses to a few dozen KiB
            chunk = bytes(1024 * 1024)
            for _ in range(MAX_BYTES // len(chunk) + 2):
                member.write(chunk)
    assert archive.stat().st_size < 1024 * 1024
    assert "MiB unpacked: not a skill" in hermes("skills", "install", str(archive), code=1).output
    assert [p.name for p in (isolated_home / "skills").iterdir()] == []  # the staging folder is gone too


def test_a_zip_of_too_many_files_is_refused(isolated_home: Path, tmp_path: Path) -> None:
    from hermes_core.skills.install import MAX_FILES

    members = {f"many/references/{index}.md": b"x" for index in range(MAX_FILES + 1)}
    archive = zipped(tmp_path, {"many/SKILL.md": skill_text("many").encode(), **members})
    assert "files: not a skill" in hermes("skills", "install", str(archive), code=1).output


def test_not_a_zip_is_a_clear_error(isolated_home: Path, tmp_path: Path) -> None:
    (tmp_path / "fake.zip").write_bytes(b"not a zip at all")
    assert "not a usable .zip" in hermes("skills", "install", str(tmp_path / "fake.zip"), code=1).output


def _members(archive: Path, members: list[tuple[str, bytes]]) -> Path:
    """A zip of ``members`` in this order, duplicates included."""
    with warnings.catch_warnings(), zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as out:
        warnings.simplefilter("ignore")  # zipfile warns about a duplicate name, and writes it
        for name, data in members:
            out.writestr(name, data)
    return archive


def _damaged(archive: Path, old: bytes, new: bytes) -> Path:
    """``archive`` with the bytes ``old`` replaced by ``new`` everywhere (local and central headers alike)."""
    data = archive.read_bytes()
    archive.write_bytes(data.replace(old, new))
    return archive


SKILL = ("s/SKILL.md", skill_text("s").encode())
ARCHIVE_SHAPES = {
    "a file and a folder of the same name": (
        lambda path: _members(path, [SKILL, ("s/refs", b"a file"), ("s/refs/a.md", b"in a folder")]),
        "is a file, and other members put files inside it"),
    "a folder and then a file of the same name": (
        lambda path: _members(path, [SKILL, ("s/refs/a.md", b"in a folder"), ("s/refs", b"a file")]),
        "is a file, and other members put files inside it"),
    "a 300-character member name": (
        lambda path: _members(path, [SKILL, ("s/" + "n" * 300 + ".md", b"x")]),
        "over the 255 a file system allows"),
    "a member twice": (
        lambda path: _members(path, [SKILL, ("s/a.md", b"one"), ("s/a.md", b"two")]),
        "is in the archive twice"),
    "a path longer than the file system takes": (
        lambda path: _members(path, [SKILL, ("s/" + "/".join(["d" * 200] * 25) + "/f.md", b"deep")]),
        "cannot be unpacked"),
    "an encrypted member": (
        lambda path: _damaged(_members(path, [SKILL]), b"\x14\x00\x00\x00\x00\x00", b"\x14\x00\x01\x00\x00\x00"),
        "not a usable .zip"),
    "an unknown compression method": (
        lambda path: _damaged(_members(path, [SKILL]), b"\x14\x00\x00\x00\x00\x00", b"\x14\x00\x00\x00\x63\x00"),
        "not a usable .zip"),
    "a damaged member": (
        lambda path: _damaged(_members(path, [SKILL]), b"# Steps", b"# STEPS"),
        "not a usable .zip"),
    "a cut-off archive": (
        lambda path: path.write_bytes(_members(path, [SKILL, ("s/a.md", b"x" * 5000)]).read_bytes()[:-3000]) and path,
        "not a usable .zip"),
}


@pytest.mark.parametrize("shape", ARCHIVE_SHAPES)
def test_every_archive_shape_ends_in_a_clean_error(isolated_home: Path, tmp_path: Path, shape: str) -> None:
    build, message = ARCHIVE_SHAPES[shape]
    archive = build(tmp_path / "skill.zip")
    output = hermes("skills", "install", str(archive), code=1).output
    assert message in output and "Traceback" not in output, output
    assert output.startswith("Error: ") and output.count("\n") == 1
    assert not (isolated_home / "skills").exists() or list((isolated_home / "skills").iterdir()) == []


def test_show_prints_the_body_and_a_file(isolated_home: Path) -> None:
    folder = make_skill(isolated_home / "skills", "kit", skill_text("kit", body="Read [a](references/a.md).\n"))
    (folder / "references").mkdir()
    (folder / "references" / "a.md").write_text("# A file\n")
    shown = hermes("skills", "show", "kit").output
    assert "Read [a](references/a.md)." in shown and "references: references/a.md" in shown
    assert hermes("skills", "show", "kit", "--file", "references/a.md").output == "# A file\n"
    assert "leaves the skill folder" in hermes("skills", "show", "kit", "--file", "../../config.yaml", code=1).output
    assert json.loads(hermes("skills", "show", "kit", "--json").output)["linked_files"] == \
        {"references": ["references/a.md"]}


def test_list_shows_shadowed_skills_with_the_project_opt_in(isolated_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    make_skill(isolated_home / "skills", "review", skill_text("review", "the user's"))
    make_skill(Path.cwd() / ".hermes" / "skills", "review", skill_text("review", "the project's"))
    assert [r["source"] for r in json.loads(hermes("skills", "list", "--json").output)] == ["user"]
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    from hermes_core import reset_default_runtime

    reset_default_runtime()
    rows = json.loads(hermes("skills", "list", "--json").output)
    assert [(r["source"], r["shadowed_by"]) for r in rows] == [("project", None), ("user", "project")]
    assert "shadowed by project" in hermes("skills", "list").output


def test_validate_checks_every_skill_below_a_folder(tmp_path: Path) -> None:
    make_skill(tmp_path / "all", "good")
    make_skill(tmp_path / "all" / "category", "bad", skill_text("other-name"))
    result = hermes("skills", "validate", str(tmp_path / "all"), "--json", code=1)
    assert {Path(r["path"]).parent.name: r["valid"] for r in json.loads(result.output)} == {"good": True, "bad": False}


def test_plugins_info_lists_skills_and_plugins_validate_checks_them(isolated_home: Path) -> None:
    plugin = isolated_home / "plugins" / "howto"
    (plugin / "skills").mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("manifest_version: 1\nname: howto\ntools: []\nskills: [skills/brew]\n")
    make_skill(plugin / "skills", "brew", skill_text("brew", "How to brew"))
    info = hermes("plugins", "info", "howto").output
    assert "skill howto:brew: How to brew" in info
    assert json.loads(hermes("plugins", "info", "howto", "--json").output)["skill_descriptions"] == \
        {"howto:brew": "How to brew"}
    assert "valid" in hermes("plugins", "validate", str(plugin)).output
    (plugin / "skills" / "brew" / "SKILL.md").write_text(skill_text("Brew"))
    failed = hermes("plugins", "validate", str(plugin), code=1).output
    assert f"{plugin / 'skills' / 'brew' / 'SKILL.md'}:2: name 'Brew' must be lower-case" in failed


def test_a_zip_with_skill_md_at_its_top_installs_under_the_skills_name(isolated_home: Path, tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        out.writestr("SKILL.md", skill_text("flat"))
    (tmp_path / "flat.zip").write_bytes(buffer.getvalue())
    hermes("skills", "install", str(tmp_path / "flat.zip"))
    assert (isolated_home / "skills" / "flat" / "SKILL.md").read_text() == skill_text("flat")
