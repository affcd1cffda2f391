"""patch(mode="patch"): Hermes Agent's multi-file patch format, applied all or nothing, inside the workspace."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hermes_plugin_file.patch import patch
from hermes_plugin_file.v4a import PatchSyntaxError, parse_patch


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text(
        "import os\n\n\ndef main():\n    print('hello')\n    return 0\n\n\ndef other():\n    return 0\n")
    (workspace / "README.md").write_text("# Project\n\nOld text.\n")
    (workspace / "old.txt").write_text("bye\n")
    (workspace / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(workspace / "tool.sh", 0o755)
    return workspace


MULTI_FILE = """*** Begin Patch
*** Update File: src/app.py
@@ def main():
 def main():
-    print('hello')
+    print('hello, world')
     return 0
*** Update File: README.md
 # Project

-Old text.
+New text.
*** Add File: docs/guide.md
+# Guide
+
+Read me.
*** Delete File: old.txt
*** Move File: tool.sh -> bin/tool.sh
*** End Patch
"""


def test_a_multi_file_patch_updates_adds_deletes_and_moves(project, call) -> None:
    result = call(patch, mode="patch", patch=MULTI_FILE)

    assert "error" not in result, result
    assert (project / "src" / "app.py").read_text().splitlines()[4] == "    print('hello, world')"
    assert (project / "src" / "app.py").read_text().endswith("def other():\n    return 0\n")
    assert (project / "README.md").read_text() == "# Project\n\nNew text.\n"
    assert (project / "docs" / "guide.md").read_text() == "# Guide\n\nRead me.\n"
    assert not (project / "old.txt").exists()
    assert not (project / "tool.sh").exists()
    assert (project / "bin" / "tool.sh").read_text() == "#!/bin/sh\necho hi\n"
    assert os.stat(project / "bin" / "tool.sh").st_mode & 0o777 == 0o755
    assert set(result["files_modified"]) == {"src/app.py", "README.md"}
    assert set(result["files_created"]) == {"docs/guide.md", "bin/tool.sh"}
    assert set(result["files_deleted"]) == {"old.txt", "tool.sh"}
    assert "-    print('hello')\n+    print('hello, world')\n" in result["diff"]
    assert "+++ b/docs/guide.md" in result["diff"]


def test_one_hunk_that_does_not_apply_leaves_every_file_as_it_was(project, call) -> None:
    before = {path: path.read_bytes() for path in project.rglob("*") if path.is_file()}
    broken = MULTI_FILE.replace("-Old text.", "-Text that is not there.")

    error = call(patch, mode="patch", patch=broken)["error"]

    assert error.startswith("the patch was not applied (no file was changed):")
    assert "README.md: hunk 1" in error
    assert {path: path.read_bytes() for path in project.rglob("*") if path.is_file()} == before


def test_lines_that_differ_only_in_trailing_whitespace_or_indentation_still_match(project, call) -> None:
    text = "*** Begin Patch\n*** Update File: src/app.py\n def other():  \n-  return 0\n+  return 1\n*** End Patch"

    assert "error" not in call(patch, mode="patch", patch=text)
    assert (project / "src" / "app.py").read_text().endswith("def other():\n  return 1\n")


def test_a_hunk_matching_two_places_is_refused_unless_its_hint_names_one(project, call) -> None:
    ambiguous = "*** Begin Patch\n*** Update File: src/app.py\n-    return 0\n+    return 2\n*** End Patch"

    assert "matches 2 places (lines 6, 10)" in call(patch, mode="patch", patch=ambiguous)["error"]

    hinted = ambiguous.replace("*** Update File: src/app.py\n", "*** Update File: src/app.py\n@@ def other():\n")
    assert "error" not in call(patch, mode="patch", patch=hinted)
    assert (project / "src" / "app.py").read_text().endswith("def other():\n    return 2\n")


def test_added_lines_alone_go_after_the_hint_line(project, call) -> None:
    text = "*** Begin Patch\n*** Update File: src/app.py\n@@ import os\n+import sys\n*** End Patch"

    call(patch, mode="patch", patch=text)

    assert (project / "src" / "app.py").read_text().startswith("import os\nimport sys\n\n")


@pytest.mark.parametrize("path", ["../escape.txt", "/etc/passwd"])
def test_a_path_outside_the_workspace_is_refused_before_anything_is_written(project, call, path) -> None:
    text = f"*** Begin Patch\n*** Add File: inside.txt\n+ok\n*** Add File: {path}\n+owned\n*** End Patch"

    assert "leads outside the workspace" in call(patch, mode="patch", patch=text)["error"]
    assert not (project / "inside.txt").exists()


def test_a_move_over_an_existing_file_is_refused(project, call) -> None:
    error = call(patch, mode="patch", patch="*** Begin Patch\n*** Move File: old.txt -> README.md\n*** End Patch")

    assert "README.md: already exists" in error["error"]
    assert (project / "old.txt").exists()


def test_update_with_move_to_renames_and_edits(project, call) -> None:
    text = "*** Begin Patch\n*** Update File: old.txt\n*** Move to: new.txt\n-bye\n+hello\n*** End Patch"

    call(patch, mode="patch", patch=text)

    assert (project / "new.txt").read_text() == "hello\n" and not (project / "old.txt").exists()


def test_mode_patch_without_patch_text_and_replace_without_its_arguments_say_what_is_missing(project, call) -> None:
    assert call(patch, mode="patch")["error"].startswith("mode 'patch' needs `patch`")
    assert call(patch, path="README.md")["error"] == (
        "mode 'replace' needs old_string, new_string (or use mode 'patch' with `patch`)")


@pytest.mark.parametrize(("text", "message"), [
    ("*** Begin Patch\nstray line\n*** End Patch", "line 2: 'stray line' is outside any"),
    ("*** Begin Patch\n*** Move File: a.txt\n*** End Patch", "line 2: '*** Move File:' needs 'old/path -> new/path'"),
    ("*** Begin Patch\n*** Add File: a.txt\nno plus\n*** End Patch", "every line of an added file starts with '+'"),
    ("*** Begin Patch\n*** Update File: a.txt\n context only\n*** End Patch", "changes nothing"),
])
def test_malformed_patches_name_the_line(text, message) -> None:
    with pytest.raises(PatchSyntaxError, match=re.escape(message)):
        parse_patch(text)


def test_blank_lines_before_the_next_header_are_not_context() -> None:
    [update, add] = parse_patch("*** Update File: a.txt\n-x\n+y\n\n\n*** Add File: b.txt\n+z\n")

    assert update.hunks[0].lines == [("-", "x"), ("+", "y")]
    assert add.content == "z\n"
