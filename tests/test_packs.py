"""First-party packs are ordinary plugins: each installs alone next to hermes-tools and uninstalls cleanly."""

from __future__ import annotations

import json

import pytest

PACK_TOOLS = {
    "file": {"read_file", "write_file", "patch", "search_files"},
    "terminal": {"terminal", "process", "read_terminal", "close_terminal"},
    "web": {"web_extract", "web_search"},
    "code": {"execute_code"},
    "agent": {"todo", "memory", "session_search", "delegate_task", "clarify", "spawn_agent", "subagent_list",
              "subagent_status", "sessions_list", "sessions_history", "sessions_send", "notify", "slash_command"},
    "skills": {"skills_list", "skill_view", "skill_manage"},
    "homeassistant": {"ha_list_entities", "ha_get_state", "ha_list_services", "ha_call_service"},
}
#: TinyElf's tools in the agent pack: in no Hermes Agent preset.
BEYOND_PRESETS = {"spawn_agent", "subagent_list", "subagent_status", "sessions_list", "sessions_history",
                  "sessions_send", "notify", "slash_command"}


def tool_names(env, home, *args):
    result = env.hermes_cli("tools", "list", "--all", "--json", *args, env=home)
    assert result.returncode == 0, result.stderr
    return {row["name"] for row in json.loads(result.stdout)}


@pytest.fixture
def home(tmp_path):
    (tmp_path / "home").mkdir()
    return {"HERMES_HOME": str(tmp_path / "home")}


@pytest.mark.parametrize("pack", sorted(PACK_TOOLS))
def test_pack_installs_alone_and_uninstalls_cleanly(make_venv, home, pack):
    env = make_venv(f"pack-{pack}")
    assert tool_names(env, home) == set()
    env.install(f"hermes-tools-{pack}")
    assert tool_names(env, home) == PACK_TOOLS[pack]
    listed = json.loads(env.hermes_cli("plugins", "list", "--json", env=home).stdout)
    assert [(r["id"], r["state"], r["imported"]) for r in listed] == [(pack, "declared", False)]
    env.uninstall(f"hermes-tools-{pack}")
    assert tool_names(env, home) == set()


@pytest.fixture(scope="module")
def everything(make_venv):
    env = make_venv("all-packs")
    env.install(*(f"hermes-tools-{pack}" for pack in PACK_TOOLS))
    return env


@pytest.mark.parametrize(("legacy", "expected"), [
    ("file_tools", {"read_file", "write_file", "patch", "search_files"}),
    ("terminal_tools", {"terminal"}),
    ("web_tools", {"web_search", "web_extract"}),
    ("skills_tools", {"skills_list", "skill_view", "skill_manage"}),
])
def test_legacy_names_select_the_packs(everything, home, legacy, expected):
    assert tool_names(everything, home, "--toolsets", legacy) == expected


def test_presets_resolve_over_what_is_installed(everything, home):
    shown = json.loads(everything.hermes_cli("toolsets", "show", "hermes-cli", "--json", env=home).stdout)
    assert set(shown["tools"]) == set().union(*PACK_TOOLS.values()) - BEYOND_PRESETS
    acp = json.loads(everything.hermes_cli("toolsets", "show", "hermes-acp", "--json", env=home).stdout)
    assert "clarify" not in acp["tools"] and "read_file" in acp["tools"]


def test_packs_work_together_through_the_cli(everything, home, tmp_path):
    work = tmp_path / "project"
    work.mkdir()

    def call(name, args):
        result = everything.hermes_cli("tools", "call", name, json.dumps(args), env=home, cwd=work)
        return json.loads(result.stdout)

    call("write_file", {"path": "data/numbers.txt", "content": "1\n2\n3\n"})
    assert "2" in call("read_file", {"path": "data/numbers.txt"})["content"]
    ran = call("terminal", {"command": "wc -l data/numbers.txt"})
    assert "3" in json.dumps(ran)
    code = ("from hermes_tools import read_file, write_file\n"
            "text = read_file(path='data/numbers.txt')['content']\n"
            "write_file(path='data/total.txt', content=str(3))\nprint('done')\n")
    result = call("execute_code", {"code": code})
    assert result["status"] == "ok" and result["tool_calls"] == 2
    assert (work / "data" / "total.txt").read_text() == "3"
    assert call("todo", {"todos": [{"id": "1", "content": "sum the numbers", "status": "completed"}]})["summary"][
        "completed"] == 1
    assert "asks the user only when its input is a terminal" in call("clarify", {"question": "Which one?"})["error"]
