"""One browser per runtime, one context per session: isolation, closing, the sandbox, availability, the toolset."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from hermes_plugin_browser.chromium import INSTALL_COMMAND, ChromiumNotFound, bwrap_problem, plan_launch
from hermes_plugin_browser.settings import BrowserSettings

from hermes_core import Runtime
from hermes_core.plugins.discovery import candidate_from_module

from .conftest import chromium_or_skip, scaled, write_config

COOKIE_PAGE = """<script>
  if (!document.cookie.includes('login=')) document.cookie = 'login=' + location.hash.slice(1) + '; path=/';
  document.title = document.cookie || 'no cookie';
</script>"""
BROWSER_TOOLS = {"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_scroll",
                 "browser_back", "browser_press", "browser_get_images", "browser_vision", "browser_console"}


def descendants() -> dict[int, str]:
    """This process's living descendants: pid -> command name (Linux /proc)."""
    parents: dict[int, tuple[int, str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            state, ppid = stat[stat.rindex(")") + 2:].split()[:2]
            if state != "Z":
                parents[int(entry.name)] = (int(ppid), name)
    found: dict[int, str] = {}
    frontier = [os.getpid()]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, name) in parents.items():
            if ppid == parent and pid not in found:
                found[pid] = name
                frontier.append(pid)
    return found


def still_running(pids: set[int], timeout: float = scaled(30)) -> dict[int, str]:
    """Those of ``pids`` still alive after up to ``timeout`` s (processes take a moment to exit after being told)."""
    deadline = time.monotonic() + timeout
    while (left := {pid: name for pid, name in descendants().items() if pid in pids}) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def make_runtime(tmp_path: Path, name: str) -> Runtime:
    home = tmp_path / name
    home.mkdir()
    write_config(home, allow_private=True)
    runtime = Runtime(home=home, workspace=tmp_path, entry_points=())
    runtime.load_candidate(candidate_from_module("hermes_plugin_browser"))
    return runtime


def title(runtime: Runtime, url: str, session_id: str | None = None) -> str:
    result = json.loads(runtime.handle_function_call("browser_navigate", {"url": url}, session_id=session_id))
    assert result["success"], result
    return str(result["title"])


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_two_runtimes_do_not_share_cookies_and_close_leaves_no_process(pages, tmp_path) -> None:
    chromium_or_skip()
    pages.add("/login", COOKIE_PAGE)
    before = set(descendants())
    first, second = make_runtime(tmp_path, "one"), make_runtime(tmp_path, "two")
    try:
        assert title(first, pages.url("/login#alice")) == "login=alice"
        assert title(second, pages.url("/login#bob")) == "login=bob"
        assert title(first, pages.url("/login#again")) == "login=alice"  # the first runtime kept its own
        started = set(descendants()) - before
        assert any("chrom" in name for name in descendants().values())
    finally:
        first.close()
        second.close()
    assert still_running(started) == {}
    assert [path for home in ("one", "two") for path in (tmp_path / home / "tmp").iterdir()] == []  # profiles gone


def user_data_dirs() -> set[str]:
    """The ``--user-data-dir`` of every Chromium this process started (Linux /proc)."""
    found = set()
    for pid in descendants():
        try:
            arguments = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        found |= {argument.decode().partition("=")[2] for argument in arguments
                  if argument.startswith(b"--user-data-dir=")}
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("sandbox", ["off", "auto"])
def test_the_profile_lives_under_the_home_and_close_removes_it(pages, tmp_path, sandbox) -> None:
    chromium_or_skip()
    if sandbox == "auto" and bwrap_problem():
        pytest.skip(f"no bubblewrap here: {bwrap_problem()}")
    runtime = make_runtime(tmp_path, "home")
    write_config(tmp_path / "home", allow_private=True, sandbox=sandbox)
    try:
        assert title(runtime, pages.add("/", "<title>profiled</title>")) == "profiled"
        [profile] = user_data_dirs()
        assert Path(profile).is_relative_to(tmp_path / "home" / "tmp") and (Path(profile) / "Default").is_dir()
    finally:
        runtime.close()
    assert not Path(profile).exists() and list((tmp_path / "home" / "tmp").iterdir()) == []


def test_sessions_have_their_own_cookies_and_session_end_closes_them(browser, pages, hermes_runtime) -> None:
    pages.add("/login", COOKIE_PAGE)
    with hermes_runtime.session("test") as alice:
        assert title(hermes_runtime, pages.url("/login#alice"), alice) == "login=alice"
        with hermes_runtime.session("test") as bob:
            assert title(hermes_runtime, pages.url("/login#bob"), bob) == "login=bob"
        assert title(hermes_runtime, pages.url("/login#x"), alice) == "login=alice"
    with hermes_runtime.session("test", session_id=alice) as again:  # the same id, after its end: a new context
        assert title(hermes_runtime, pages.url("/login#new"), again) == "login=new"


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_chromium_runs_with_its_own_sandbox(browser, pages) -> None:
    browser("browser_navigate", url=pages.add("/", "<title>sandboxed</title>"))

    renderers = [pid for pid, name in descendants().items() if "chrom" in name
                 and "--type=renderer" in Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")]

    assert renderers
    for pid in renderers:
        status = Path(f"/proc/{pid}/status").read_text()
        assert "Seccomp:\t2" in status  # seccomp-bpf filter: Chromium's sandbox is on
        cmdline = Path(f"/proc/{pid}/cmdline").read_text()
        assert "--no-sandbox" not in cmdline


def test_a_missing_chromium_makes_the_tools_unavailable_with_the_install_command(browser, hermes_runtime,
                                                                                 monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no chromium, chromium-browser or google-chrome there

    definitions = hermes_runtime.get_tool_definitions(enabled_toolsets=["browser"], quiet_mode=True)
    why = hermes_runtime.registry.check("browser_navigate").reason or ""

    assert definitions == []
    assert INSTALL_COMMAND in why and "no Chromium found on PATH" in why
    called = browser("browser_navigate", url="http://127.0.0.1:1/")
    assert INSTALL_COMMAND in json.dumps(called)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="Chromium refuses root only as root")
def test_as_root_without_bubblewrap_chromium_does_not_start_unsandboxed(monkeypatch, tmp_path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "chromium").symlink_to("/bin/true")  # a Chromium on PATH, no bwrap beside it
    monkeypatch.setenv("PATH", str(bin_dir))
    bwrap_problem.cache_clear()
    try:
        with pytest.raises(ChromiumNotFound, match=r"set browser\.sandbox: off"):
            plan_launch(BrowserSettings(), tmp_path)
        assert plan_launch(BrowserSettings(sandbox="off"), tmp_path).sandbox == "off"  # only when asked
    finally:
        bwrap_problem.cache_clear()


def test_browser_tools_selects_the_ten_tools(browser, hermes_runtime) -> None:
    definitions = hermes_runtime.get_tool_definitions(enabled_toolsets=["browser_tools"], quiet_mode=True)

    assert {definition["function"]["name"] for definition in definitions} == BROWSER_TOOLS


def test_without_the_sandbox_every_navigation_says_so(browser, browser_config, pages) -> None:
    browser_config(allow_private=True, sandbox="off")

    opened = browser("browser_navigate", url=pages.add("/", "<title>unsandboxed</title>"))

    assert opened["warning"] == "Chromium runs without its sandbox (browser.sandbox: off in config.yaml)"


def test_a_call_before_any_page_is_open_says_so(browser, pages) -> None:
    """Not "success" with an empty snapshot of the blank page a session starts with."""
    for tool, args in (("browser_snapshot", {}), ("browser_click", {"ref": "@e1"}), ("browser_get_images", {})):
        assert browser(tool, session_id="fresh", **args) == {
            "success": False, "error": "no page is open in this session: call browser_navigate first"}, tool
    opened = browser("browser_navigate", session_id="fresh", url=pages.add("/p", "<h1>Now a page</h1>"))
    assert opened["success"] is True
    assert "Now a page" in json.dumps(browser("browser_snapshot", session_id="fresh"))
