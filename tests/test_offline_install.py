"""From a fresh clone, with none of Hermes' distributions on the package index, every install step of
docs/getting-started.md and docs/writing-plugins.md and every install hint the CLI prints works as printed, offline
(#46): pip has no index, only a wheelhouse of the third-party wheels (dependencies and build backends) made once
from this machine's index, a stand-in for a package index that holds everything but Hermes."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import venv
from collections.abc import Callable
from pathlib import Path

import pytest

from hermes_core.authoring.testing import scaled_timeout

ROOT = Path(__file__).resolve().parent.parent
PAGES = {name: ROOT / "docs" / name for name in ("getting-started.md", "writing-plugins.md")}
#: An install step: a pip install, a clone, or a make target that builds distributions.
STEP = re.compile(r"^(?:\$ )?((?:PIP_NO_INDEX=1 )?(?:python -m )?(?:pip install|hermes plugins install|git clone|"
                  r"make (?:dist|wheelhouse))\b[^`\n]*)$", re.M)
INLINE = re.compile(r"`([^`\n]+)`")
#: Steps for after the first release, naming Hermes' distributions on PyPI; each page says at once what to do until
#: then (checked below), and that is run.
AFTER_RELEASE = {"pip install hermes-tools hermes-tools-file", "pip install 'hermes-tools[scaffold]'"}
UNTIL_RELEASE = "Until the first release is on PyPI"
#: Steps the pages say to run where the package index can be reached (they set up the clone's development
#: environment first); the test runs what they run, scripts/build_dist.py and scripts/build_wheelhouse.py.
NEED_THE_INDEX = {"make dist", "make wheelhouse"}
#: A page's placeholder step or a command it names, and what it is here.
PLACEHOLDERS = {"git clone <the Hermes repository> hermes": "the clone of this repository's HEAD",
                "hermes plugins install <pack>": "each hint the CLI prints, run below",
                "hermes plugins install <id>": "each hint the CLI prints, run below",
                "hermes plugins install": "the command named, not a step",
                # the reader's own plugin once they published it to PyPI and the plugin index: not Hermes'
                "pip install hermes-plugin-weather": "after step 8", "hermes plugins install weather": "after step 9"}


def steps(page: Path) -> list[str]:
    """The install steps of ``page``: lines of its code blocks, and code spans of its text, that install."""
    text = page.read_text(encoding="utf-8")
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```$", text, re.S | re.M)
    prose = re.sub(r"^```[^\n]*\n.*?^```$", "", text, flags=re.S | re.M)
    found = [m.group(1).strip() for block in fenced for m in STEP.finditer(block)]
    found += [span for span in INLINE.findall(prose) if STEP.fullmatch(span)]
    return list(dict.fromkeys(found))


def test_every_install_step_of_the_pages_is_run_here_or_says_why_not():
    """The list the offline test below runs is the pages' own: a new install step must be run there, or be a
    post-release one whose page gives the way from a clone beside it."""
    found = {name: steps(page) for name, page in PAGES.items()}
    run = set(RUN_AS_PRINTED)
    unknown = [(name, step) for name, listed in found.items() for step in listed
               if step not in run | AFTER_RELEASE | NEED_THE_INDEX | PLACEHOLDERS.keys()]
    assert unknown == [], "install steps the offline test does not run"
    assert run <= {step for listed in found.values() for step in listed}, "the test runs steps the pages lost"
    for name, page in PAGES.items():
        text = page.read_text(encoding="utf-8")
        for step in (s for s in found[name] if s in AFTER_RELEASE):
            after = " ".join(text[text.index(step):][:900].split())
            assert UNTIL_RELEASE in after, f"{name}: {step!r} is not followed by the way from a clone"


# -- the offline run -----------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone of this repository's HEAD, named ``hermes`` as the pages name it, with ``dist/`` and
    ``wheelhouse/`` made as ``make dist`` and ``make wheelhouse`` make them (this machine's index at hand)."""
    work = tmp_path_factory.mktemp("offline")
    repository = work / "hermes"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(repository)], check=True,
                   timeout=scaled_timeout(300))
    for script, args in (("build_dist.py", ["dist", "--no-isolation"]),
                         ("build_wheelhouse.py", ["dist", "wheelhouse"])):
        made = subprocess.run([sys.executable, str(repository / "scripts" / script), *args], cwd=repository,
                              capture_output=True, text=True, timeout=scaled_timeout(1800))
        assert made.returncode == 0, made.stdout + made.stderr
    return repository


@pytest.fixture(scope="session")
def third_party(clone: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheelhouse's wheels but Hermes' own, plus what writing-plugins' publishing step installs."""
    house = tmp_path_factory.mktemp("third-party")
    for wheel in (clone / "wheelhouse").glob("*.whl"):
        if not wheel.name.startswith("hermes_tools"):
            (house / wheel.name).symlink_to(wheel)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "-w", str(house),
                    "--find-links", str(house), "build", "twine"], check=True, timeout=scaled_timeout(900))
    assert not list(house.glob("hermes_tools*")), "Hermes' distributions are on the stand-in index"
    return house


class Shell:
    """A fresh venv (with its own pip) in the clone's parent folder; pip sees no index, only ``third_party``."""

    def __init__(self, path: Path, work: Path, third_party: Path) -> None:
        venv.create(path, with_pip=True)
        self.work = work
        bin_dir = path / ("Scripts" if os.name == "nt" else "bin")
        self.env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "HERMES_", "VIRTUAL_ENV"))},
                    "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(path),
                    "PIP_CONFIG_FILE": os.devnull,  # not this machine's pip.conf (its index and wheel folders)
                    "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(third_party), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                    "HERMES_HOME": str(path / "hermes-home"), "COOKIECUTTER_CONFIG": str(path / "cookiecutterrc")}
        (path / "cookiecutterrc").write_text(f"replay_dir: {path / 'replay'}\ncookiecutters_dir: {path / 'cc'}\n")

    def __call__(self, command: str, cwd: Path | None = None, ok: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(["bash", "-c", command], cwd=cwd or self.work, env=self.env, capture_output=True,
                                text=True, timeout=scaled_timeout(900), stdin=subprocess.DEVNULL)
        if ok:
            assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
        return result

    def hint(self, command: str) -> str:
        """Run ``command`` and return the one install command its message gives, in backticks or after a colon."""
        failed = self(command, ok=False)
        message = failed.stdout + failed.stderr
        given = re.findall(r"`((?:hermes plugins install|pip install) [^`]+)`", message) or \
            re.findall(r": ((?:pip install|hermes plugins install) .+?)(?:\n|$)", message)
        assert len(set(given)) == 1, f"{command} gives no single install command: {message}"
        return given[0]


@pytest.fixture
def shell(clone: Path, third_party: Path, tmp_path: Path) -> Callable[[str], Shell]:
    return lambda name: Shell(tmp_path / name, clone.parent, third_party)


#: The pages' steps this test runs as printed, and the test that runs each.
RUN_AS_PRINTED = {
    "pip install ./hermes ./hermes/hermes_plugins/file": "getting started",
    "pip install --find-links hermes/dist hermes-tools hermes-tools-file": "getting started",
    "pip install --no-index --find-links hermes/wheelhouse hermes-tools hermes-tools-file": "getting started",
    "PIP_NO_INDEX=1 hermes plugins install --find-links hermes/wheelhouse web": "getting started",
    "pip install './hermes[scaffold]'": "writing plugins",
    'pip install -e ".[test]"': "writing plugins",
    "python -m pip install build twine": "writing plugins",
}


@pytest.mark.slow
@pytest.mark.network
def test_getting_started_from_a_clone_offline(shell, clone: Path):
    from_source = shell("from-source")
    from_source("pip install ./hermes ./hermes/hermes_plugins/file")
    assert "read_file" in from_source("hermes tools list").stdout
    # the CLI's hints, from a hermes-tools installed from the clone (its direct_url.json names the folder)
    web = from_source.hint("hermes tools call web_extract '{\"urls\": [\"https://example.org\"]}'")
    assert web == "hermes plugins install web"
    cron = from_source.hint("hermes cron list")
    assert cron == "hermes plugins install cron"
    image = from_source.hint("hermes tools call image_generate '{\"prompt\": \"a cat\"}'")
    assert image == "hermes plugins install image"  # it needs the web and vision packs: from the clone too
    for hint in (web, cron, image):
        from_source(hint)
    listed = from_source("hermes tools list --all").stdout
    assert {"web_extract", "image_generate", "vision_analyze", "cronjob"} <= set(re.findall(r"^(\w+)", listed, re.M))
    assert from_source("hermes cron list").returncode == 0
    info = from_source("hermes plugins info terminal").stdout
    printed = re.search(r"\(pip install (.+)\)", info)
    assert printed and printed.group(1) == shlex.quote(str(clone / "hermes_plugins" / "terminal"))
    from_source(f"pip install {printed.group(1)}")

    by_name = shell("by-name")
    by_name("pip install --find-links hermes/dist hermes-tools hermes-tools-file")
    assert "read_file" in by_name("hermes tools list").stdout

    wheelhouse = shell("wheelhouse")
    wheelhouse("pip install --no-index --find-links hermes/wheelhouse hermes-tools hermes-tools-file")
    wheelhouse("PIP_NO_INDEX=1 hermes plugins install --find-links hermes/wheelhouse web")
    assert "web_extract" in wheelhouse("hermes tools list --all").stdout


@pytest.mark.slow
@pytest.mark.network
def test_writing_plugins_from_a_clone_offline(shell):
    writer = shell("writer")
    writer("pip install './hermes[scaffold]'")
    first = writer.hint("hermes tools list")  # no tools yet: the CLI's first hint
    assert first == "hermes plugins install file"
    writer(first)
    assert "read_file" in writer("hermes tools list").stdout
    writer("hermes plugins new weather --no-input")
    project = writer.work / "hermes-plugin-weather"
    writer('pip install -e ".[test]"', cwd=project)
    assert '"Hello, Ada."' in writer("hermes tools call weather_hello '{\"name\": \"Ada\"}'").stdout
    writer("python -m pytest -q", cwd=project)
    writer("python -m pip install build twine")

    bare = shell("bare")  # the core without the scaffold extra: `plugins new` names the extra to install
    bare("pip install ./hermes")
    scaffold = bare.hint("hermes plugins new weather --no-input")
    assert scaffold == "pip install 'hermes-tools[scaffold]'"
    bare(scaffold)
    bare("hermes plugins new weather --no-input -o elsewhere")
