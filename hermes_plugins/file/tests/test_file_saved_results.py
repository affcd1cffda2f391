"""A result over its budget is saved in the home's results folder, and its preview tells the model to read
that file: ``read_file`` of the path the preview gives works, and reaches nothing else outside the workspace."""

from __future__ import annotations

import re
from pathlib import Path

from hermes_plugin_file.read import read_file
from hermes_plugin_file.write import write_file

from hermes_core import Runtime

BIG = "".join(f"row {i:05d}\n" for i in range(3000))


def test_the_model_can_read_the_saved_result_its_preview_points_to(call, hermes_runtime: Runtime) -> None:
    hermes_runtime.register_tool("big_report", "reports", {"name": "big_report", "description": "A long report",
                                                           "parameters": {"type": "object", "properties": {}}},
                                 lambda args, **kwargs: BIG, max_result_size_chars=5_000)
    preview = hermes_runtime.handle_function_call("big_report", {})
    saved = re.search(r"saved in full to (\S+);", preview)
    assert saved, preview

    result = call(read_file, path=saved.group(1), offset=2999, limit=2)
    assert "error" not in result, result
    assert result["content"] == "  2999|row 02998\n  3000|row 02999"


def test_the_results_folder_is_readable_only(call, hermes_home: Path, outside: Path) -> None:
    results = hermes_home / "results"
    results.mkdir()
    (results / "link.txt").symlink_to(outside / "secret.txt")  # a link in the results folder leads nowhere else
    assert "outside the workspace" in call(read_file, path=str(results / "link.txt"))["error"]
    assert "outside the workspace" in call(read_file, path=str(results / ".." / "config.yaml"))["error"]
    written = call(write_file, path=str(results / "new.txt"), content="x")
    assert "outside the workspace" in written["error"] and not (results / "new.txt").exists()
