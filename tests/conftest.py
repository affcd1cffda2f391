"""Shared fixtures: an isolated HERMES_HOME per test, and real wheels and venvs built once per session."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import threading
import time
import venv
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import EntryPoint, distributions
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Runtime
from hermes_core.authoring.testing import scaled_timeout

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _load_support(name: str, path: Path) -> None:
    """Tests' shared helpers, importable as ``name`` (tests import in importlib mode)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)


_load_support("hermes_mcp_test_support", FIXTURES / "mcp" / "support.py")
_load_support("hermes_fake_provider", FIXTURES / "providers" / "fake_provider.py")
#: ``make compat``'s harness: its ``PINNED`` list is the one list of published plugins and their versions.
_load_support("hermes_compat_harness", ROOT / "scripts" / "compat.py")
_load_support("hermes_adapter_test_support", FIXTURES / "adapters" / "support.py")
_load_support("hermes_serve_test_support", FIXTURES / "serve" / "support.py")


def pip(*args: str, python: str = sys.executable, **kwargs) -> subprocess.CompletedProcess[str]:
    """Run real pip; raise with its output when it fails."""
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    result = subprocess.run([python, "-m", "pip", *args], capture_output=True, text=True, env=env, **kwargs)
    if result.returncode:
        raise AssertionError(f"pip {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


#: Session fixtures that build wheels or venvs: a test that uses one (directly or not) is marked ``slow``.
BUILDING_FIXTURES = frozenset({"dist", "wheelhouse", "make_venv", "hermes_agent_reference", "hermes_agent"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test that builds wheels or venvs, so ``-m "not slow"`` (``make test-fast``) skips them."""
    for item in items:
        if BUILDING_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What `make dist` makes: sdists and wheels of hermes-tools and the six packs, checked by twine, built once."""
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_dist.py"), str(out), "--no-isolation"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return out


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory, dist: Path) -> Path:
    """The wheels of `dist` plus one of every fixture distribution."""
    house = tmp_path_factory.mktemp("wheelhouse")
    for wheel in dist.glob("*.whl"):
        (house / wheel.name).symlink_to(wheel)
    # Fixture distributions are built from copies: setuptools builds in the source tree, and xdist workers
    # building the same tree at once break each other's build/ folders (and would litter the repository).
    sources = tmp_path_factory.mktemp("dist-sources")
    fixtures = [shutil.copytree(d, sources / d.name, ignore=shutil.ignore_patterns("build", "*.egg-info"))
                for d in sorted((FIXTURES / "dists").iterdir()) if (d / "pyproject.toml").exists()]
    pip("wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(house), *map(str, fixtures))
    return house


@pytest.fixture(scope="session")
def shared_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This interpreter's site-packages minus any Hermes distribution: the dependencies every test venv shares.

    The test venvs see it through a ``.pth`` file, so they install only Hermes and plugin wheels themselves.
    """
    site = tmp_path_factory.mktemp("shared-site")
    purelib = Path(sysconfig.get_paths()["purelib"])
    for entry in purelib.iterdir():
        lowered = entry.name.lower()
        if lowered.startswith(("hermes", "__editable__", "_hermes")) or entry.suffix == ".pth" \
                or lowered == "__pycache__":
            continue
        (site / entry.name).symlink_to(entry)
    return site


class Venv:
    """A real virtual environment, with hermes-tools installed from its wheel unless asked otherwise."""

    def __init__(self, path: Path, wheelhouse: Path | None = None) -> None:
        self.path = path
        self.wheelhouse = wheelhouse
        self.python = str(path / "bin" / "python")
        self.hermes = str(path / "bin" / "hermes")

    def install(self, *requirements: str, extra: tuple[str, ...] = (), find_links: tuple[Path, ...] = ()) -> None:
        """pip install offline, from ``find_links`` (default: the session's wheelhouse)."""
        folders = find_links or ((self.wheelhouse,) if self.wheelhouse is not None else ())
        links = [arg for folder in folders for arg in ("--find-links", str(folder))]
        pip("install", "-q", "--no-index", *links, *extra, *requirements, python=self.python)

    def uninstall(self, *names: str) -> None:
        pip("uninstall", "-y", "-q", *names, python=self.python)

    def run(self, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
            input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run a command; ``timeout`` is its bound on an idle machine, scaled for this one."""
        return subprocess.run(list(args), capture_output=True, text=True, env={**os.environ, **(env or {})},
                              cwd=cwd, input=input, timeout=scaled_timeout(timeout))

    def hermes_cli(self, *args: str, **kwargs) -> subprocess.CompletedProcess[str]:
        return self.run(self.hermes, *args, **kwargs)

    def py(self, code: str, **kwargs) -> subprocess.CompletedProcess[str]:
        return self.run(self.python, "-c", code, **kwargs)

    def json(self, code: str, **kwargs) -> object:
        result = self.py(code, **kwargs)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def make_venv(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path, shared_site: Path):
    """Factory of fresh venvs holding hermes-tools (real pip install of its wheel), or nothing with ``core=False``."""

    def make(name: str = "venv", *, core: bool = True) -> Venv:
        path = tmp_path_factory.mktemp(name)
        venv.EnvBuilder(with_pip=False, symlinks=True).create(path)
        purelib = next((path / "lib").glob("python3*/site-packages"))
        (purelib / "_hermes_shared.pth").write_text(str(shared_site) + "\n")
        env = Venv(path, wheelhouse)
        if core:
            env.install("hermes-tools", extra=("--no-deps",))
        return env

    return make


#: The folders of the distributions the current test wrote (reset by ``isolated_home`` for every test).
TEST_SITES: list[Path] = []


def entry_points_in(sites: list[Path]) -> list[EntryPoint]:
    """The plugin entry points of the distributions in ``sites``."""
    return [ep for dist in distributions(path=[str(site) for site in sites]) for ep in dist.entry_points
            if ep.group in ("hermes_agent.plugins", "hermes.plugins")] if sites else []


@pytest.fixture(scope="session")
def package_index() -> str:
    """The package index the ``network`` tests install from; they are skipped when it cannot be reached."""
    import urllib.request

    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    try:
        with urllib.request.urlopen(f"{index}/pip/", timeout=20):
            return index
    except (OSError, ValueError) as exc:
        pytest.skip(f"the package index {index} cannot be reached: {exc}")


#: What a venv holding Hermes Agent 0.19 prints: every tool's schema its modules register, and its toolsets.
_HERMES_AGENT_DUMP = """if True:
    import json, logging, sys
    logging.disable(logging.CRITICAL)
    from tools.registry import discover_builtin_tools, registry
    import toolsets
    discover_builtin_tools()
    print(json.dumps({
        "schemas": {name: registry.get_schema(name) for name in registry.get_all_tool_names()},
        "toolsets": {name: {"tools": list(t["tools"]), "includes": list(t["includes"])}
                     for name, t in toolsets.TOOLSETS.items()},
        "core_tools": list(toolsets._HERMES_CORE_TOOLS),
    }))
"""


@pytest.fixture(scope="session")
def hermes_agent(tmp_path_factory: pytest.TempPathFactory, package_index: str) -> Venv:
    """A venv holding Hermes Agent 0.19.0 with its own pinned dependencies, built once per session from the package
    index (``HERMES_AGENT_PYTHON``, when it names the interpreter of one made before, as ``make
    bench-vs-hermes-agent`` makes, is used instead). The one fixture every test that drives Hermes Agent uses."""
    given = os.environ.get("HERMES_AGENT_PYTHON")
    if given:
        return Venv(Path(given).parent.parent)
    path = tmp_path_factory.mktemp("hermes-agent")
    venv.EnvBuilder(with_pip=True, symlinks=True).create(path)
    agent = Venv(path)
    pip("install", "-q", "hermes-agent==0.19.0", python=agent.python, timeout=scaled_timeout(1200))
    return agent


@pytest.fixture(scope="session")
def hermes_agent_reference(hermes_agent: Venv, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Hermes Agent 0.19's tool schemas and toolsets, read from its modules in the ``hermes_agent`` venv:
    ``{"schemas": {name: schema}, "toolsets": {...}, "core_tools": [...]}``."""
    home = tmp_path_factory.mktemp("hermes-agent-home")
    result = hermes_agent.run(hermes_agent.python, "-c", _HERMES_AGENT_DUMP, cwd=home, env={"HERMES_HOME": str(home)},
                              timeout=300)
    assert result.returncode == 0, result.stderr
    reference: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return reference


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own HERMES_HOME and working directory, and no plugin-selection variables."""
    home = tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    for name in ("HERMES_ENABLE_PROJECT_PLUGINS", "HERMES_LOAD_PLUGINS", "HERMES_SAFE_MODE", "HERMES_NO_CACHE",
                 "HERMES_PLUGINS_DEBUG", "HERMES_INDEX_URL", "HERMES_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    # A runtime made in a test discovers the distributions the test wrote (see PluginFactory), never the
    # plugins installed in the test environment: the suite passes with the first-party packs installed or not.
    TEST_SITES.clear()
    monkeypatch.setattr("hermes_core.runtime.installed_entry_points", lambda: entry_points_in(TEST_SITES))
    from hermes_core import reset_default_runtime, set_approval_callback

    previous = set_approval_callback(None)
    yield home
    set_approval_callback(previous)
    reset_default_runtime()


class PluginFactory:
    """Writes small plugins on disk: folders for the user and project sources, fake distributions for pip."""

    def __init__(self, home: Path, work: Path, site: Path, markers: Path) -> None:
        self.home, self.work, self.site, self.markers = home, work, site, markers

    def folder(self, plugin_id: str, manifest: str | None = None, init: str | None = None,
               source: str = "user", files: dict[str, str] | None = None) -> Path:
        root = self.home / "plugins" if source == "user" else self.work / ".hermes" / "plugins"
        folder = root / plugin_id
        folder.mkdir(parents=True, exist_ok=True)
        if manifest is not None:
            (folder / "plugin.yaml").write_text(manifest)
        if init is not None:
            (folder / "__init__.py").write_text(self.marker_line(plugin_id) + init)
        for name, text in (files or {}).items():
            (folder / name).write_text(text)
        return folder

    def distribution(self, plugin_id: str, package: str, manifest: str | None = None, init: str = "",
                     group: str = "hermes_agent.plugins", value: str | None = None, version: str = "1.0",
                     files: dict[str, str] | None = None) -> Path:
        """A package plus a ``.dist-info`` with an entry point, on a folder that is on ``sys.path``."""
        folder = self.site / package
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text(self.marker_line(plugin_id) + init)
        if manifest is not None:
            (folder / "plugin.yaml").write_text(manifest)
        for name, text in (files or {}).items():
            (folder / name).write_text(text)
        dist = self.site / f"{package}-{version}.dist-info"
        dist.mkdir()
        name = package.replace("_", "-")
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        (dist / "entry_points.txt").write_text(f"[{group}]\n{plugin_id} = {value or package}\n")
        return folder

    def entry_points(self) -> list[EntryPoint]:
        """The plugin entry points of the distributions this factory wrote (and of nothing else installed)."""
        return entry_points_in([self.site])

    def runtime(self, **options: Any) -> Runtime:
        """A runtime of the test's home that discovers the folders and just this factory's distributions."""
        return Runtime(entry_points=self.entry_points(), **options)

    def marker_line(self, plugin_id: str) -> str:
        return f"open({str(self.markers / (plugin_id + '.imported'))!r}, 'w').write('x')\n"

    def imported(self, plugin_id: str) -> bool:
        return (self.markers / f"{plugin_id}.imported").exists()


@pytest.fixture
def plugins(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginFactory]:
    """Write plugins for this test; modules imported from them are forgotten afterwards."""
    site = tmp_path / "site"
    site.mkdir()
    markers = tmp_path / "markers"
    markers.mkdir()
    monkeypatch.syspath_prepend(str(site))
    TEST_SITES.append(site)
    yield PluginFactory(isolated_home, Path.cwd(), site, markers)
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", "") or "").startswith(str(tmp_path)):
            del sys.modules[name]


@pytest.fixture
def http_server() -> Iterator[tuple[str, dict[str, tuple[int, bytes]]]]:
    """A server on 127.0.0.1 answering from a dict of path -> (status, body)."""
    routes: dict[str, tuple[int, bytes]] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body = routes.get(self.path, (404, b"not found"))
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8" if body.lstrip().startswith(b"<")
                             else "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", routes
    finally:
        server.shutdown()
        server.server_close()


# -- a real sshd on 127.0.0.1 --------------------------------------------------------------------------


@dataclass(frozen=True)
class SshServer:
    """An sshd of this test session: its port, the client's key, a known_hosts that trusts it."""

    port: int
    user: str
    identity_file: Path
    known_hosts: Path
    host_key: Path

    def settings(self, **overrides: Any) -> dict[str, Any]:
        """``terminal.ssh`` for this server (no ~/.ssh/config: the machine's own must not change the test)."""
        return {"host": "127.0.0.1", "port": self.port, "user": self.user, "identity_file": str(self.identity_file),
                "known_hosts": str(self.known_hosts), "config_file": os.devnull, **overrides}


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True, capture_output=True)


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    """sshd on a free port of 127.0.0.1 with generated host and user keys, logging in the user running the tests."""
    binary = shutil.which("sshd") or next((p for p in ("/usr/sbin/sshd", "/usr/local/sbin/sshd") if os.path.exists(p)),
                                          None)
    if binary is None or shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        pytest.skip("OpenSSH is not installed (apt-get install openssh-server openssh-client); .ci/run installs it")
    folder = tmp_path_factory.mktemp("sshd")
    host_key, user_key = folder / "host_key", folder / "user_key"
    _keygen(host_key)
    _keygen(user_key)
    (folder / "authorized_keys").write_text(user_key.with_suffix(".pub").read_text())
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = folder / "sshd_config"
    config.write_text(f"Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\nPidFile {folder / 'sshd.pid'}\n"
                      f"AuthorizedKeysFile {folder / 'authorized_keys'}\n"
                      # the test folder is not owned the way StrictModes wants; PAM would need a login session
                      "StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                      "PermitRootLogin prohibit-password\nAllowStreamLocalForwarding yes\nStreamLocalBindUnlink yes\n"
                      "LogLevel ERROR\n")
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # the privilege separation directory
    checked = subprocess.run([binary, "-t", "-f", str(config)], capture_output=True, text=True)
    if checked.returncode:
        pytest.skip(f"sshd cannot run here: {checked.stderr.strip()}")
    log = (folder / "sshd.log").open("w")
    server = subprocess.Popen([binary, "-D", "-e", "-f", str(config)], stdin=subprocess.DEVNULL, stdout=log,
                              stderr=log)
    deadline = time.monotonic() + scaled_timeout(20)
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"sshd did not start: {(folder / 'sshd.log').read_text()}")
            time.sleep(0.05)
    known_hosts = folder / "known_hosts"
    known_hosts.write_text(f"[127.0.0.1]:{port} {' '.join(host_key.with_suffix('.pub').read_text().split()[:2])}\n")
    import pwd  # (Unix-only, like sshd)

    yield SshServer(port, pwd.getpwuid(os.geteuid()).pw_name, user_key, known_hosts, host_key)
    server.terminate()
    server.wait(10)
    log.close()


# -- runtimes of the packs, for the execution-backend tests ---------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The workspace of ``pack_runtime``: where local commands start."""
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def pack_runtime(isolated_home: Path, workspace: Path) -> Iterator[Any]:
    """``pack_runtime(config, *plugins)``: a runtime of this test's home and workspace whose config.yaml is
    ``config``, with ``plugins`` (``(module, plugin id)`` pairs, e.g. the packs of the repository) loaded as
    their manifests declare them; closed after the test."""
    made: list[Runtime] = []

    def make(config: dict[str, Any], *plugins: tuple[str, str]) -> Runtime:
        import yaml

        from hermes_core.plugins.discovery import candidate_from_module

        (isolated_home / "config.yaml").write_text(yaml.safe_dump(config))
        runtime = Runtime(home=isolated_home, workspace=workspace, entry_points=())
        made.append(runtime)
        for module, plugin_id in plugins:
            record = runtime.load_candidate(candidate_from_module(module, plugin_id))
            assert record.state == "declared", record.reason
        return runtime

    yield make
    for runtime in made:
        runtime.close()


@pytest.fixture(scope="session")
def published_plugin(make_venv: Any, package_index: Any) -> Any:
    """``published_plugin(plugin_id, *packs, requirement=None)``: a venv (made once per session for each plugin and
    set of packs) with hermes-tools, the first-party ``packs`` named and that published plugin at its pinned version
    (``PINNED`` of scripts/compat.py, or ``requirement``), installed from the package index with its dependencies."""
    pinned = sys.modules["hermes_compat_harness"].PINNED
    venvs: dict[tuple[str, ...], Any] = {}

    def get(plugin_id: str, *packs: str, requirement: str | None = None) -> Any:
        key = (plugin_id, *sorted(packs))
        if key not in venvs:
            venv = make_venv("-".join(("published", *key)))
            for pack in packs:
                venv.install(f"hermes-tools-{pack}", extra=("--no-deps",))
            installed = venv.run(venv.python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                                 requirement or pinned[plugin_id], timeout=900)
            assert installed.returncode == 0, installed.stdout + installed.stderr
            venvs[key] = venv
        return venvs[key]

    return get


@pytest.fixture
def hermes(isolated_home: Path) -> Iterator[Callable[..., Runtime]]:
    """``hermes(servers, before=None, **config)``: start a runtime whose config.yaml has the given ``mcp_servers``
    (and ``config``'s other sections) and connect them, waiting for each one's first attempt; ``before(runtime)``
    runs before plugins load. Every runtime is closed afterwards."""
    runtimes: list[Runtime] = []

    def start(servers: dict[str, dict], before: Callable[[Runtime], None] | None = None, **config: Any) -> Runtime:
        import yaml

        (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": servers, **config}))
        runtime = Runtime(home=isolated_home)
        runtimes.append(runtime)
        if before:
            before(runtime)
        runtime.load_plugins()
        runtime.start_mcp()
        return runtime

    yield start
    for runtime in runtimes:
        runtime.close()
