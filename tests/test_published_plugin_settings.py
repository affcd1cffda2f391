"""Published plugins configured as their READMEs say (#46): psy-core-hermes's and agentmetrics-hermes's
``plugins.<id>:`` blocks, and yandex-mail without credentials giving its own set-up hint. Each is installed from the
package index at a pinned version into a venv of its own (made once per session), beside hermes-tools."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytestmark = pytest.mark.network

#: Not in scripts/compat.py's PINNED (that list has measured index records): the plugins these tests configure.
VERSIONS = {"psy": "psy-core-hermes==0.1.4", "agentmetrics": "agentmetrics-hermes==0.2.2",
            "yandex_mail": "hermes-yandex-mail==0.4.2"}


@pytest.fixture(scope="session")
def configured_plugin(published_plugin: Any) -> Any:
    return lambda plugin_id: published_plugin(plugin_id, requirement=VERSIONS[plugin_id])


PROBE = '''
import json
import hermes_core
from hermes_core.cli import cli
from click.testing import CliRunner

rt = hermes_core.Runtime()
rt.load_plugins()
r = rt.plugin(PLUGIN)
out = {"state": r.state, "reason": r.reason, "hooks": r.hooks, "warnings": r.warnings,
       "listed": CliRunner().invoke(cli, ["plugins", "list"]).exit_code}
'''


def probe(venv: Any, plugin_id: str, code: str = "", **env: str) -> dict:
    return venv.json(f"PLUGIN = {plugin_id!r}\n" + PROBE + code + "\nprint(json.dumps(out, default=str))\n",
                     env=env, timeout=300)


def test_psy_configured_as_its_readme_says_registers_its_hooks(configured_plugin, isolated_home, tmp_path):
    fake_psy = tmp_path / "psy"  # psy_binary: the audit engine it spawns (npx otherwise), here a local stand-in
    fake_psy.write_text("#!/bin/sh\ncat > /dev/null\n")
    fake_psy.chmod(0o755)
    (isolated_home / "config.yaml").write_text(
        f"plugins:\n  enabled:\n    - psy\n  psy:\n    actor_id: you@example.com\n    psy_binary: {fake_psy}\n")
    out = probe(configured_plugin("psy"), "psy")
    assert (out["state"], out["reason"], out["listed"]) == ("loaded", "", 0)
    assert out["hooks"] == ["post_tool_call", "pre_tool_call"]
    assert not any("actor_id is required" in warning for warning in out["warnings"])


AGENTMETRICS = '''
from agentmetrics_hermes.config import AgentMetricsConfig
loaded = AgentMetricsConfig.load()
out["config"] = [loaded.api_key, loaded.endpoint]
'''


def test_agentmetrics_reads_its_plugins_block(configured_plugin, isolated_home, monkeypatch):
    monkeypatch.delenv("AGENTMETRICS_API_KEY", raising=False)
    (isolated_home / "config.yaml").write_text(
        "plugins:\n  agentmetrics:\n    api_key: test-key\n    endpoint: http://127.0.0.1:9/ingest\n")
    out = probe(configured_plugin("agentmetrics"), "agentmetrics", AGENTMETRICS)
    assert out["config"] == ["test-key", "http://127.0.0.1:9/ingest"]
    assert out["state"] == "loaded" and out["hooks"]  # with a key it wires its hooks
    assert not any("no API key configured" in warning for warning in out["warnings"])


YANDEX = '''
out["call"] = json.loads(rt.handle_function_call("yandex_mail_list_folders", {}))
out["reason"] = rt.registry.check("yandex_mail_list_folders").reason
'''


def test_yandex_mail_without_credentials_returns_its_own_hint(configured_plugin, isolated_home, monkeypatch):
    for name in ("YANDEX_MAIL_LOGIN", "YANDEX_MAIL_APP_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    out = probe(configured_plugin("yandex_mail"), "yandex_mail", YANDEX)
    assert out["state"] == "loaded"
    assert "environment variable YANDEX_MAIL_LOGIN is not set" in out["reason"]  # listed as needing it
    error = json.dumps(out["call"])
    assert "YANDEX_MAIL_LOGIN and YANDEX_MAIL_APP_PASSWORD must be set" in error
    assert "https://id.yandex.ru/security/app-passwords" in error  # the plugin's own hint, not Hermes' refusal


EVOLVE = '''
import time
folder = os.path.join(os.environ["HERMES_HOME"], "plugins", "mine")

def write(answer):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "__init__.py")
    with open(path, "w") as f:
        f.write("def register(ctx):\\n    ctx.register_tool(name='mine_tool', toolset='mine', "
                "schema={'name': 'mine_tool', 'parameters': {}}, handler=lambda args, **kw: %r)\\n" % answer)
    later = time.time() + 5
    os.utime(path, (later, later))

write("v1")
rt = hermes_core.Runtime()
rt.load_plugins()
out["before"] = rt.handle_function_call("mine_tool", {})
write("v2")
out["now"] = rt.run_command("evolve", "now")
out["after"] = rt.handle_function_call("mine_tool", {})
'''


def test_evolve_now_reloads_the_plugins_that_changed(published_plugin, isolated_home):
    venv = published_plugin("evolve")
    out = venv.json("import json, os\nimport hermes_core\nout = {}\n" + EVOLVE + "\nprint(json.dumps(out))\n",
                    timeout=300)
    assert out["before"] == "v1" and out["after"] == "v2"
    assert "plugins re-discovered + re-registered" in out["now"] and "plugin rediscovery:" not in out["now"]


def test_the_skills_docs_example_installs_from_the_bundled_index(isolated_home, package_index):
    """docs/skills.md's `hermes skills install html-to-markdown`: the bundled index has the entry (no index fetched),
    the wheel comes from the package index, its skills are copied out, the plugin is not installed."""
    from click.testing import CliRunner

    from hermes_core.cli import cli

    result = CliRunner().invoke(cli, ["skills", "install", "html-to-markdown"])
    assert result.exit_code == 0, result.output
    installed = sorted(path.name for path in (isolated_home / "skills").iterdir())
    assert "html-to-markdown" in installed and len(installed) == 6
    assert (isolated_home / "skills" / "html-to-markdown" / "SKILL.md").is_file()


@pytest.mark.parametrize(("plugin_id", "skill"), [("hermes-tenuo", "tenuo-scope"), ("rine", "rine"),
                                                  ("stock-analysis", "bottom-volume")])
def test_the_skills_of_the_other_skill_shipping_plugins_install_from_the_bundled_index(isolated_home, package_index,
                                                                                         plugin_id, skill):
    """#46 item 10: their records, refreshed by `make compat`, list their skills (stock-analysis-plugin's lie in a
    top-level skills/ folder beside its package): `hermes skills install ID:SKILL` copies one out. (hermes-tweet's
    skill and most of stock-analysis' are refused by the skill checks: a list for `allowed-tools`, links that leave
    the skill's folder; test_a_skill_that_fails_the_checks_is_refused_naming_why shows one.)"""
    from click.testing import CliRunner

    from hermes_core.cli import cli

    result = CliRunner().invoke(cli, ["skills", "install", f"{plugin_id}:{skill}"])
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in (isolated_home / "skills").iterdir()) == [skill]
    assert (isolated_home / "skills" / skill / "SKILL.md").is_file()


def test_a_skill_that_fails_the_checks_is_refused_naming_why(isolated_home, package_index):
    from click.testing import CliRunner

    from hermes_core.cli import cli

    result = CliRunner().invoke(cli, ["skills", "install", "hermes-tweet"])
    assert result.exit_code == 1 and "'allowed-tools' must be a string" in result.output
    assert not (isolated_home / "skills").exists() or list((isolated_home / "skills").iterdir()) == []
