"""Skills: their sources and gating, names and shadowing, the cached catalogue, and the skills tools run through a
runtime with the hermes-tools-skills pack loaded (real files, real FIFOs and symlinks, no mocks but one spy)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Runtime
from hermes_core.plugins.discovery import candidate_from_module

TIMEOUT = 60 * float(os.environ.get("HERMES_TEST_TIMEOUT_SCALE", "1"))
posix_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and /dev/zero are POSIX")


def write_skill(root: Path, name: str, description: str = "", body: str = "# Body\n", *, category: str | None = None,
                extra: str = "") -> Path:
    folder = (root / category / name) if category else root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description or 'Does ' + name}\n{extra}---\n"
                                     f"{body}", encoding="utf-8")
    return folder


def skills_runtime(home: Path, project: Path | None = None, *, opt_in: bool = False, **options: Any) -> Runtime:
    """A runtime over ``home`` with only the skills pack installed."""
    environ = {"HERMES_ENABLE_PROJECT_PLUGINS": "1"} if opt_in else {}
    runtime = Runtime(home=home, cwd=project, entry_points=(), environ=environ, **options)
    runtime.load_candidate(candidate_from_module("hermes_plugin_skills", "skills"))
    return runtime


def call(runtime: Runtime, tool: str, /, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(runtime.handle_function_call(tool, args))
    return result


@pytest.fixture
def home(isolated_home: Path) -> Path:
    return isolated_home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".hermes" / "skills").mkdir(parents=True)
    return folder


class ReadDetector:
    """A FIFO planted as a ``SKILL.md``: a thread waits to write to it, so any open for reading is seen (and
    cannot hang: the writer is there)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        os.mkfifo(path)
        self.opened = threading.Event()
        self.thread = threading.Thread(target=self._write, daemon=True)
        self.thread.start()

    def _write(self) -> None:
        descriptor = os.open(self.path, os.O_WRONLY)  # returns only once someone opens the FIFO to read
        self.opened.set()
        os.close(descriptor)

    def release(self) -> bool:
        """Whether anyone opened the FIFO; then let the waiting writer go."""
        seen = self.opened.is_set()
        if not seen:
            reader = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
            self.thread.join(TIMEOUT)
            os.close(reader)
        return seen


# -- sources and gating -------------------------------------------------------------------------------------


def test_user_skills_are_found_in_category_folders_with_their_category(home: Path) -> None:
    write_skill(home / "skills", "deploy", category="devops")
    write_skill(home / "skills", "notes")
    listed = call(skills_runtime(home), "skills_list")
    assert [(s["name"], s["source"], s.get("category")) for s in listed["skills"]] == [
        ("deploy", "user", "devops"), ("notes", "user", None)]
    assert listed["categories"] == ["devops"]
    assert [s["name"] for s in call(skills_runtime(home), "skills_list", category="devops")["skills"]] == ["deploy"]
    assert call(skills_runtime(home), "skill_view", name="devops/deploy")["name"] == "deploy"  # Hermes Agent's form
    assert "error" in call(skills_runtime(home), "skill_view", name="other/deploy")


def test_without_a_description_the_first_line_of_the_body_is_listed_as_hermes_agent_does(home: Path,
                                                                                        tmp_path: Path) -> None:
    from hermes_core.skills.validation import validate_skill

    terse = home / "skills" / "terse"
    terse.mkdir(parents=True)
    (terse / "SKILL.md").write_text("---\nname: terse\n---\n# Terse\n\n  Say   little,\n mean much.\nMore.\n")
    bare = home / "skills" / "bare"
    bare.mkdir()
    (bare / "SKILL.md").write_text("## Heading only first\n" + "y" * 1500 + "\n")  # no front matter at all
    shipped = tmp_path / "shipped" / "quiet"
    shipped.mkdir(parents=True)
    (shipped / "SKILL.md").write_text("---\nname: quiet\ndescription: ''\n---\nSpeak softly.\n")
    runtime = skills_runtime(home)
    runtime.context("helper").register_skill("quiet", shipped)

    listed = {s["name"]: s["description"] for s in call(runtime, "skills_list")["skills"]}
    catalog = {entry.name: entry.description for entry in runtime.skill_catalog().offered()}  # what MCP prompts use
    assert listed["terse"] == catalog["terse"] == "Say little,"
    assert listed["helper:quiet"] == catalog["helper:quiet"] == "Speak softly."
    assert catalog["bare"] == "y" * 1021 + "..."  # cut at the standard's limit, as Hermes Agent cuts it
    assert call(runtime, "skill_view", name="terse")["description"] == "Say little,"
    # listing is lenient; validation still says what is missing
    assert [problem.message for problem in validate_skill(terse).errors] == ["missing required field 'description'"]
    assert any("no YAML front matter" in problem.message for problem in validate_skill(bare).errors)


@posix_only
def test_project_skills_are_not_read_at_all_without_the_opt_in(home: Path, project: Path) -> None:
    root = project / ".hermes" / "skills"
    (root / "planted").mkdir()
    detector = ReadDetector(root / "planted" / "SKILL.md")
    (root / "zero").mkdir()
    (root / "zero" / "SKILL.md").symlink_to("/dev/zero")
    write_skill(root, "visible-only-opted-in")
    runtime = skills_runtime(home, project)

    listed = call(runtime, "skills_list")
    viewed = call(runtime, "skill_view", name="visible-only-opted-in")

    assert listed["skills"] == [] and "no skill" in viewed["error"]
    assert detector.release() is False, "a project SKILL.md was opened without HERMES_ENABLE_PROJECT_PLUGINS"


@posix_only
def test_with_the_opt_in_a_fifo_and_a_dev_zero_symlink_are_listed_as_problems_never_read(home: Path,
                                                                                         project: Path) -> None:
    root = project / ".hermes" / "skills"
    (root / "planted").mkdir()
    detector = ReadDetector(root / "planted" / "SKILL.md")
    (root / "zero").mkdir()
    (root / "zero" / "SKILL.md").symlink_to("/dev/zero")
    write_skill(root, "fine")
    runtime = skills_runtime(home, project, opt_in=True)

    catalog = runtime.skill_catalog()
    refused = [call(runtime, "skill_view", name=name) for name in ("planted", "zero")]

    assert {name: entry.problem is not None for name, entry in catalog.entries.items()} == \
        {"fine": False, "planted": True, "zero": True}
    assert all("not a regular file" in result["error"] for result in refused)
    assert [skill["name"] for skill in call(runtime, "skills_list")["skills"]] == ["fine"]
    assert detector.release() is False, "the FIFO was opened"


@posix_only
def test_a_cli_listing_over_a_fifo_and_dev_zero_ends_within_its_timeout(home: Path, project: Path) -> None:
    root = project / ".hermes" / "skills"
    (root / "planted").mkdir()
    os.mkfifo(root / "planted" / "SKILL.md")  # no writer: a blocking open would wait for ever
    (root / "zero").mkdir()
    (root / "zero" / "SKILL.md").symlink_to("/dev/zero")
    command = [sys.executable, "-c", "import sys; from hermes_core.cli import main; sys.exit(main())",
               "skills", "list", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=project, timeout=TIMEOUT,
                          env={**os.environ, "HERMES_HOME": str(home), "HERMES_ENABLE_PROJECT_PLUGINS": "1"})
    assert done.returncode == 0, done.stderr
    assert {row["name"]: "not a regular file" in row["problem"] for row in json.loads(done.stdout)} == \
        {"planted": True, "zero": True}


# -- names and shadowing --------------------------------------------------------------------------------------


def test_project_beats_user_and_the_loser_is_listed_as_shadowed(home: Path, project: Path) -> None:
    write_skill(home / "skills", "review", "the user's")
    write_skill(project / ".hermes" / "skills", "review", "the project's")
    runtime = skills_runtime(home, project, opt_in=True)
    listed = call(runtime, "skills_list")
    assert [(s["name"], s["description"], s["source"]) for s in listed["skills"]] == \
        [("review", "the project's", "project")]
    assert listed["shadowed"] == [{"name": "review", "source": "user", "shadowed_by": "project"}]
    assert "the project's" in call(runtime, "skill_view", name="review")["description"]


def test_plugin_skills_are_qualified_and_never_clash_with_bare_names(home: Path, tmp_path: Path) -> None:
    write_skill(home / "skills", "guide", "the user's guide")
    shipped = write_skill(tmp_path / "shipped", "guide", "the plugin's guide")
    runtime = skills_runtime(home)
    runtime.context("helper").register_skill("guide", shipped)
    listed = {s["name"]: s["source"] for s in call(runtime, "skills_list")["skills"]}
    assert listed == {"guide": "user", "helper:guide": "plugin:helper"}
    assert call(runtime, "skill_view", name="helper:guide")["description"] == "the plugin's guide"


def test_a_skill_registered_by_its_skill_md_serves_the_files_beside_it(home: Path, tmp_path: Path) -> None:
    shipped = write_skill(tmp_path / "shipped", "convert", body="See references/api.md\n")
    (shipped / "references").mkdir()
    (shipped / "references" / "api.md").write_text("# API\n")
    runtime = skills_runtime(home)
    runtime.context("pub").register_skill("convert", shipped / "SKILL.md")  # as published plugins do
    viewed = call(runtime, "skill_view", name="pub:convert")
    assert viewed["content"] == "See references/api.md\n"
    assert viewed["linked_files"] == {"references": ["references/api.md"]}
    assert call(runtime, "skill_view", name="pub:convert", file_path="references/api.md")["content"] == "# API\n"


def test_a_declarative_plugin_ships_skills_from_its_manifest_without_being_imported(home: Path) -> None:
    plugin = home / "plugins" / "howto"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("manifest_version: 1\nname: howto\ntools: []\n"
                                        "skills: [skills/brew, skills/missing, ../../escape]\n")
    (plugin / "__init__.py").write_text(f"open({str(home / 'imported')!r}, 'w').close()\n")
    write_skill(plugin / "skills", "brew", "How to brew")
    runtime = skills_runtime(home)
    runtime.load_plugins()
    record = runtime.plugin("howto")
    assert record is not None and record.state == "declared" and not (home / "imported").exists()
    assert [(s["name"], s["description"]) for s in call(runtime, "skills_list")["skills"]] == \
        [("howto:brew", "How to brew")]
    assert "# Body" in call(runtime, "skill_view", name="howto:brew")["content"]
    assert sum("ignored" in warning for warning in record.warnings) == 2  # the missing folder and the escape


@posix_only
def test_register_skill_refuses_a_dev_zero_symlink_or_a_fifo_without_reading_it(home: Path, tmp_path: Path) -> None:
    (tmp_path / "zero.md").symlink_to("/dev/zero")
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / "SKILL.md")  # no writer: reading it would block for ever
    context = skills_runtime(home).context("odd")
    for path in (tmp_path / "zero.md", tmp_path / "fifo"):
        with pytest.raises(FileNotFoundError):
            context.register_skill("odd", path)


# -- the catalogue is cached, front matter only ----------------------------------------------------------------


def test_listing_reads_front_matter_only_and_a_second_listing_reads_nothing(home: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import hermes_core.skills.sources as sources

    body = "x" * (200 * 1024) + "\n\udcff"  # a long body that would not even decode: never read to list
    write_skill(home / "skills", "big", body=body.encode("utf-8", "surrogatepass").decode("utf-8", "replace"))
    write_skill(home / "skills", "small")
    reads: list[Path] = []
    real = sources.read_front_matter
    monkeypatch.setattr(sources, "read_front_matter", lambda path, **kw: reads.append(path) or real(path, **kw))

    first = [s["name"] for s in call(skills_runtime(home), "skills_list")["skills"]]
    second = [s["name"] for s in call(skills_runtime(home), "skills_list")["skills"]]
    write_skill(home / "skills", "added")
    third = [s["name"] for s in call(skills_runtime(home), "skills_list")["skills"]]

    assert first == second == ["big", "small"] and third == ["added", "big", "small"]
    # the second listing came from the cache; the third read only the new skill
    assert [p.parent.name for p in reads] == ["big", "small", "added"]


def test_a_skill_md_changed_on_disk_invalidates_the_cached_listing(home: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import hermes_core.skills.sources as sources

    first = write_skill(home / "skills", "first", "old words")
    write_skill(home / "skills", "second", "stays")
    assert call(skills_runtime(home), "skills_list")["count"] == 2  # the cache is written
    reads: list[Path] = []
    real = sources.read_front_matter
    monkeypatch.setattr(sources, "read_front_matter", lambda path, **kw: reads.append(path) or real(path, **kw))
    document = first / "SKILL.md"
    stamp = document.stat()
    document.write_text(document.read_text().replace("old words", "new words"))  # the same size
    os.utime(document, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1_000_000_000))  # a coarse clock still ticks
    listed = {s["name"]: s["description"] for s in call(skills_runtime(home), "skills_list")["skills"]}
    assert listed == {"first": "new words", "second": "stays"}
    assert reads == [document]  # only the changed SKILL.md is read again
    assert {s["name"]: s["description"] for s in call(skills_runtime(home), "skills_list")["skills"]} == listed
    assert reads == [document]  # and the refreshed cache serves the next listing


def test_the_catalogue_stays_compact_at_the_description_limit(home: Path) -> None:
    for index in range(3):
        write_skill(home / "skills", f"long-{index}", "word " * 204)  # 1020 characters: near the standard's limit
    listed = call(skills_runtime(home), "skills_list")["skills"]
    # about 4 characters a token: 100 tokens is 400 characters of JSON per skill
    assert all(len(json.dumps(skill)) <= 400 for skill in listed)


# -- skill_view: files of the skill folder only ---------------------------------------------------------------


@pytest.fixture
def viewed(home: Path, tmp_path: Path) -> Runtime:
    folder = write_skill(home / "skills", "kit", body="See [the API](references/api.md).\n")
    (folder / "references").mkdir()
    (folder / "references" / "api.md").write_text("# API\nGET /things\n")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (folder / "assets").mkdir()
    (folder / "assets" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    (folder / "assets" / "huge.txt").write_text("line\n" * 60_000)
    (tmp_path / "secret.txt").write_text("TOP SECRET")
    (folder / "references" / "leak.md").symlink_to(tmp_path / "secret.txt")
    (folder / "references" / "inside.md").symlink_to(folder / "references" / "api.md")
    return skills_runtime(home)


def test_skill_view_returns_the_body_and_linked_files_grouped(viewed: Runtime) -> None:
    result = call(viewed, "skill_view", name="kit")
    assert result["content"] == "See [the API](references/api.md).\n"
    assert result["linked_files"] == {"references": ["references/api.md"], "scripts": ["scripts/run.sh"],
                                      "assets": ["assets/huge.txt", "assets/logo.png"]}
    assert call(viewed, "skill_view", name="kit", file_path="references/api.md")["content"] == "# API\nGET /things\n"


@pytest.mark.parametrize("path", ["../../config.yaml", "references/../../kit/SKILL.md", "/etc/passwd",
                                  "C:\\Windows\\win.ini", "C:relative", "references/leak.md", "refer\x00ences"])
def test_every_path_escape_is_refused(viewed: Runtime, path: str) -> None:
    result = call(viewed, "skill_view", name="kit", file_path=path)
    assert "error" in result and "TOP SECRET" not in json.dumps(result)


def test_a_symlink_inside_the_folder_is_served_and_a_large_file_is_cut_and_marked(viewed: Runtime) -> None:
    assert call(viewed, "skill_view", name="kit", file_path="references/inside.md")["content"].startswith("# API")
    huge = call(viewed, "skill_view", name="kit", file_path="assets/huge.txt")
    assert huge["truncated"] is True and huge["content"].endswith(f"of {5 * 60_000} bytes]")
    assert len(huge["content"]) < 140 * 1024


@posix_only
def test_a_fifo_or_device_among_a_skills_files_is_refused_not_read(viewed: Runtime, home: Path) -> None:
    folder = home / "skills" / "kit"
    detector = ReadDetector(folder / "references" / "pipe.md")
    (folder / "references" / "zero.md").symlink_to("/dev/zero")
    results = [call(viewed, "skill_view", name="kit", file_path=f"references/{name}")
               for name in ("pipe.md", "zero.md")]
    listed = call(viewed, "skill_view", name="kit")["linked_files"]["references"]
    assert all("error" in result for result in results)
    assert "references/pipe.md" not in listed and "references/zero.md" not in listed
    assert detector.release() is False, "the FIFO was opened"


def test_a_binary_file_is_described_not_dumped(viewed: Runtime) -> None:
    logo = call(viewed, "skill_view", name="kit", file_path="assets/logo.png")
    assert logo["is_binary"] is True and logo["content"] == "[Binary file: logo.png, size: 17 bytes]"


def test_a_skill_for_another_platform_is_not_offered(home: Path) -> None:
    other = "win32" if sys.platform != "win32" else "linux"
    write_skill(home / "skills", "elsewhere", extra=f"platforms: [{ {'win32': 'windows'}.get(other, other) }]\n")
    write_skill(home / "skills", "here", extra="required_environment_variables: [HERMES_TEST_UNSET_TOKEN]\n")
    runtime = skills_runtime(home)
    assert [s["name"] for s in call(runtime, "skills_list")["skills"]] == ["here"]
    assert "not this system" in call(runtime, "skill_view", name="elsewhere")["error"]
    here = call(runtime, "skill_view", name="here")
    assert here["missing_required_environment_variables"] == ["HERMES_TEST_UNSET_TOKEN"]  # reported, not enforced


# -- skill_manage: the user's skills only, validated, atomic --------------------------------------------------


GOOD = "---\nname: {name}\ndescription: Notes on {name}\n---\n# {name}\nStep one.\n"


def test_skill_manage_creates_patches_edits_and_deletes_a_user_skill(home: Path) -> None:
    runtime = skills_runtime(home)
    created = call(runtime, "skill_manage", action="create", name="brew", category="kitchen",
                   content=GOOD.format(name="brew"))
    folder = home / "skills" / "kitchen" / "brew"
    assert created["success"] and (folder / "SKILL.md").is_file()
    call(runtime, "skill_manage", action="patch", name="brew", old_string="Step one.", new_string="Step two.")
    assert "Step two." in (folder / "SKILL.md").read_text()
    call(runtime, "skill_manage", action="write_file", name="brew", file_path="references/beans.md",
         file_content="# Beans\n")
    assert call(runtime, "skill_view", name="brew", file_path="references/beans.md")["content"] == "# Beans\n"
    call(runtime, "skill_manage", action="remove_file", name="brew", file_path="references/beans.md")
    call(runtime, "skill_manage", action="edit", name="brew", content=GOOD.format(name="brew") + "More.\n")
    assert (folder / "SKILL.md").read_text().endswith("More.\n")
    assert call(runtime, "skill_manage", action="delete", name="brew")["success"] and not folder.exists()


def test_an_invalid_skill_md_is_refused_with_every_problem_and_nothing_changes(home: Path) -> None:
    runtime = skills_runtime(home)
    refused = call(runtime, "skill_manage", action="create", name="brew",
                   content="---\nname: Brew_It\ncompatibility: [a]\n---\nbody\n")
    assert not (home / "skills" / "brew").exists()
    assert all(problem in refused["error"] for problem in ("must be lower-case", "may hold only letters",
                                                           "missing required field 'description'",
                                                           "'compatibility' must be a string"))
    call(runtime, "skill_manage", action="create", name="brew", content=GOOD.format(name="brew"))
    before = (home / "skills" / "brew" / "SKILL.md").read_text()
    broken = call(runtime, "skill_manage", action="patch", name="brew", old_string="name: brew", new_string="")
    assert "missing required field 'name'" in broken["error"]
    assert (home / "skills" / "brew" / "SKILL.md").read_text() == before
    assert not [p for p in (home / "skills" / "brew").iterdir() if p.name != "SKILL.md"]  # no temporary left


@pytest.mark.parametrize("file_path", ["../escape.md", "SKILL2.md", "/etc/x.md", "references/../../x.md"])
def test_skill_manage_writes_only_inside_the_standard_folders(home: Path, file_path: str) -> None:
    runtime = skills_runtime(home)
    call(runtime, "skill_manage", action="create", name="brew", content=GOOD.format(name="brew"))
    refused = call(runtime, "skill_manage", action="write_file", name="brew", file_path=file_path, file_content="x")
    assert "error" in refused
    assert sorted(p.name for p in (home / "skills").rglob("*")) == ["SKILL.md", "brew"]


def test_skill_manage_does_not_create_through_a_symlinked_category(home: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (home / "skills").mkdir()
    (home / "skills" / "linked").symlink_to(tmp_path / "elsewhere")
    refused = call(skills_runtime(home), "skill_manage", action="create", name="brew", category="linked",
                   content=GOOD.format(name="brew"))
    assert "leads out" in refused["error"] and list((tmp_path / "elsewhere").iterdir()) == []


def test_plugin_and_project_skills_are_read_only(home: Path, project: Path, tmp_path: Path) -> None:
    write_skill(project / ".hermes" / "skills", "team")
    runtime = skills_runtime(home, project, opt_in=True)
    runtime.context("helper").register_skill("guide", write_skill(tmp_path / "shipped", "guide"))
    for name in ("team", "helper:guide"):
        refused = call(runtime, "skill_manage", action="delete", name=name)
        assert "read-only" in refused["error"]
    assert (project / ".hermes" / "skills" / "team" / "SKILL.md").exists()
    assert "already exists" in call(runtime, "skill_manage", action="create", name="team",
                                    content=GOOD.format(name="team"))["error"]


def test_read_only_policy_refuses_skill_manage_and_writes_asks(home: Path) -> None:
    read_only = skills_runtime(home, policy="read-only")
    assert "skill_manage" not in read_only.available_tools()
    refused = call(read_only, "skill_manage", action="create", name="brew", content=GOOD.format(name="brew"))
    assert "error" in refused and not (home / "skills" / "brew").exists()
    assert call(read_only, "skills_list")["success"]

    asked: list[str] = []
    writes = skills_runtime(home, policy="writes")
    writes.set_approval_callback(lambda *args, **kwargs: asked.append("skill_manage") or "deny")
    call(writes, "skills_list")
    denied = call(writes, "skill_manage", action="create", name="brew", content=GOOD.format(name="brew"))
    assert asked == ["skill_manage"] and "error" in denied and not (home / "skills" / "brew").exists()


def test_the_legacy_skills_tools_toolset_selects_the_three_tools(home: Path) -> None:
    definitions = skills_runtime(home).get_tool_definitions(enabled_toolsets=["skills_tools"])
    assert sorted(d["function"]["name"] for d in definitions) == ["skill_manage", "skill_view", "skills_list"]


def test_skill_roots_are_gated_for_the_compatibility_layer(tmp_path: Path) -> None:
    def roots(environ: dict[str, str]) -> list[tuple[Path, str]]:
        return Runtime(home=tmp_path / "home", cwd=tmp_path, entry_points=(), environ=environ).skill_roots()

    assert roots({}) == [(tmp_path / "home" / "skills", "user")]
    assert roots({"HERMES_ENABLE_PROJECT_PLUGINS": " Yes "}) == [
        (tmp_path / "home" / "skills", "user"), (tmp_path / ".hermes" / "skills", "project")]
