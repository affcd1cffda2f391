"""`hermes plugins freeze` of a plugin installed with `--find-links DIR`: a `--find-links` line that `pip install -r`
needs to find it again, and a warning in text and JSON once the folder is gone. Real pip, real venvs, offline."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from hermes_core.index.installer import frozen_plugins
from hermes_core.index.installsources import record_install


def test_a_plugin_from_a_find_links_folder_freezes_with_that_folder_and_reinstalls(make_venv, wheelhouse, tmp_path):
    house = tmp_path / "house"
    house.mkdir()
    [wheel] = wheelhouse.glob("hermes_fixture_hooked-*.whl")
    shutil.copy(wheel, house)
    env = make_venv("freeze-find-links")
    # only `house` holds the plugin: neither an index nor the machine's own find-links
    offline = {"HERMES_HOME": str(tmp_path / "home"), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "",
               "PIP_CONFIG_FILE": os.devnull}

    installed = env.hermes_cli("plugins", "install", "--pip", "hermes-fixture-hooked", "--find-links", str(house),
                               env=offline)
    assert installed.returncode == 0, installed.stderr
    frozen = env.hermes_cli("plugins", "freeze", env=offline)
    as_json = json.loads(env.hermes_cli("plugins", "freeze", "--json", env=offline).stdout)

    assert frozen.stdout.splitlines() == [f"--find-links {house}", "hermes-fixture-hooked==0.3.0"]
    assert [(row["requirement"], row["find_links"], row["warning"]) for row in as_json] == [
        ("hermes-fixture-hooked==0.3.0", [str(house)], None)]
    requirements = tmp_path / "plugins.txt"
    requirements.write_text(frozen.stdout)
    fresh = make_venv("freeze-find-links-target")
    fresh.run(fresh.python, "-m", "pip", "install", "-q", "--no-index", "-r", str(requirements),
              env={**offline, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}).check_returncode()
    relisted = json.loads(fresh.hermes_cli("plugins", "list", "--json", env=offline).stdout)
    assert {row["id"] for row in relisted} == {"hooked-fixture"}

    shutil.rmtree(house)
    gone = env.hermes_cli("plugins", "freeze", env=offline)
    gone_json = json.loads(env.hermes_cli("plugins", "freeze", "--json", env=offline).stdout)
    message = f"hermes-fixture-hooked 0.3.0 was installed from --find-links {house}, which no longer exists"
    assert gone.stdout.startswith("# hermes-fixture-hooked==0.3.0: " + message) and f"warning: {message}" in gone.stderr
    assert gone_json[0]["requirement"] is None and gone_json[0]["warning"].startswith(message)


@pytest.mark.parametrize("installed_version, recorded", [("1.0", ["LINKS"]), ("2.0", [])])
def test_a_record_counts_only_for_the_version_it_was_made_for(plugins, isolated_home, tmp_path, installed_version,
                                                              recorded):
    plugins.distribution("shape", "hermes_shape", version=installed_version)
    record_install(isolated_home, {"hermes-shape": "1.0"}, [str(tmp_path)])

    [frozen] = [f for f in frozen_plugins(isolated_home) if f.distribution == "hermes-shape"]

    expected = [str(tmp_path) if link == "LINKS" else link for link in recorded]
    assert (frozen.requirement, frozen.find_links) == (f"hermes-shape=={installed_version}", expected)


def test_an_install_from_an_index_drops_an_older_find_links_record(plugins, isolated_home, tmp_path: Path):
    plugins.distribution("shape", "hermes_shape")
    record_install(isolated_home, {"hermes-shape": "1.0"}, [str(tmp_path)])
    record_install(isolated_home, {"hermes-shape": "1.0"}, [])

    assert [f.find_links for f in frozen_plugins(isolated_home) if f.distribution == "hermes-shape"] == [[]]
