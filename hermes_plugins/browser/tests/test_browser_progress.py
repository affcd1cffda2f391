"""browser_navigate tells whoever listens how far a page load got (an MCP client, `hermes tools call`)."""

from __future__ import annotations

from typing import Any

from hermes_core import Progress, Runtime


def test_navigate_reports_the_load_it_starts(browser: Any, pages: Any, hermes_runtime: Runtime) -> None:
    heard: list[Progress] = []
    hermes_runtime.set_progress_callback(heard.append)
    url = pages.add("/page", "<title>A page</title><p>Some text.</p>")

    assert browser("browser_navigate", url=url)["success"]

    assert (heard[0].done, heard[0].total, heard[0].message) == (0, 2, f"loading {url}")
    assert {progress.tool_name for progress in heard} == {"browser_navigate"}
