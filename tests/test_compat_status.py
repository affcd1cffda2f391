"""The measured status of published plugins (``make compat``): kept in the index records, shown by ``plugins
search`` and ``plugins info`` before a plugin is installed, and the docs' table generated from the records."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.index.build import find_layout, load_entry_file

ROOT = Path(__file__).resolve().parent.parent
harness = sys.modules["hermes_compat_harness"]  # loaded by conftest.py


def probe(**changes):
    report = {"found": True, "id": "p", "state": "loaded", "reason": "", "tools": ["t"], "hooks": [],
              "warnings": [], "contributions": {"platforms": []}, "availability": {"t": [True, ""]},
              "calls": {"t": "json"}, "hook_failures": [], "cli": {"list": True, "info": True}}
    return {**report, **changes}


def test_every_pinned_plugin_has_a_measured_record():
    layout = find_layout(ROOT / "registry-index")
    for plugin_id, requirement in harness.PINNED.items():
        entry = load_entry_file(layout.entry_path(plugin_id))
        assert entry.compatibility is not None, plugin_id
        assert requirement == f"{entry.distribution}=={entry.version}"


def test_the_docs_table_is_what_the_records_say():
    text = harness.DOC.read_text(encoding="utf-8")
    table = text[text.index(harness.TABLE_START) + len(harness.TABLE_START):text.index(harness.TABLE_END)]
    assert table.strip() == harness.table()
    assert "is skipped" not in text


def test_classify_names_why_a_plugin_is_not_fully_working():
    assert harness.classify(probe()) == ("works", "")
    assert harness.classify(probe(availability={"t": [False, "environment variable K is not set"]})) == ("works", "")
    gateway = "its check reported it unavailable: it needs ... and Hermes runs no messaging gateway"
    assert harness.classify(probe(availability={"t": [False, gateway]})) == ("partly", f"tool t unavailable: {gateway}")
    assert harness.classify(probe(calls={"t": "not JSON: boom"})) == ("partly", "tool t gave not JSON: boom")
    inactive = "logged WARNING (x): plugin inactive: No module named 'tools.delegate_tool'"
    assert harness.classify(probe(tools=[], calls={}, availability={}, warnings=[inactive])) == (
        "needs Hermes Agent", inactive)
    failed = "imports 'gateway.platforms.telegram' (x.py:1), a Hermes Agent internal module that ..."
    assert harness.classify(probe(state="error", reason=failed)) == ("needs Hermes Agent", f"does not load: {failed}")


def test_a_slash_command_that_answers_with_an_error_or_raises_makes_a_plugin_partly():
    fine = {"/evolve": "Usage:\n  /evolve now", "/evolve status": "## Evolve — Status\n\n3 plugin module(s)"}
    assert harness.classify(probe(commands=fine)) == ("works", "")
    failed = {**fine, "/evolve now": "## Evolve\n  ⚠ plugin rediscovery: Hermes loads plugins once per runtime"}
    assert harness.classify(probe(commands=failed)) == (
        "partly", "command /evolve now answered: ⚠ plugin rediscovery: Hermes loads plugins once per runtime")
    no_cli = {"/retitle": "No CLI context available — use /quit to generate title instead."}
    assert harness.classify(probe(commands=no_cli))[0] == "partly"
    raised = {"/x": "raised ImportError: x imports 'hermes_cli.plugins', a Hermes Agent internal"}
    assert harness.classify(probe(commands=raised)) == ("partly", f"command /x answered: {raised['/x']}")
    own_key = {"/xstatus": '{"success":false,"error":"API key missing. Set XQUIK_API_KEY in the environment."}'}
    assert harness.classify(probe(commands=own_key)) == ("works", "")  # waiting for its user's key, as a tool does


def test_a_plugin_measured_with_its_key_set_says_so():
    assert harness.classify(probe(setup=["BRIGHTDATA_API_TOKEN"])) == (
        "works", "register() refuses to run until BRIGHTDATA_API_TOKEN is set (as under Hermes Agent); measured "
                 "with a placeholder")


def test_search_and_info_show_the_measured_status_before_installing():
    runner = CliRunner()
    searched = runner.invoke(cli, ["plugins", "search", "telegram"], env={"COLUMNS": "200"})
    assert searched.exit_code == 0, searched.output
    row = next(line for line in searched.output.splitlines() if line.startswith("telegram-reactions"))
    assert "partly" in row
    info = runner.invoke(cli, ["plugins", "info", "incontext"], env={"COLUMNS": "200"})
    assert info.exit_code == 0, info.output
    assert "with hermes:  needs Hermes Agent: does not load: register() raised SettingsError" in info.output


def test_the_table_can_be_regenerated_without_measuring():
    before = harness.DOC.read_text(encoding="utf-8")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "compat.py"), "--table"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert harness.DOC.read_text(encoding="utf-8") == before
