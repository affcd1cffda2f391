"""Every execution backend behaves like ``local``: the backend contract (``hermes_core.authoring.backend_contract``,
the terminal pack's behaviour through the ``terminal`` and ``process`` tools) on ``local``, ``sandbox``
(bubblewrap), ``ssh`` (a real sshd on 127.0.0.1) and ``ulimit`` (the documented example plugin). The docker pack runs
the same contract against podman (hermes_plugins/docker/tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_core.authoring.backend_contract import BackendContract

FIXTURES = Path(__file__).resolve().parent / "fixtures"


class TestLocal(BackendContract):
    backend = "local"


class TestSandbox(BackendContract):
    backend = "sandbox"

    @pytest.fixture
    def backend_settings(self) -> dict[str, Any]:
        from hermes_plugin_terminal.sandbox import sandbox_problem

        if problem := sandbox_problem():
            pytest.skip(f"bubblewrap cannot run on this machine: {problem}")
        return {}


class TestSsh(BackendContract):
    backend = "ssh"
    plugins = (("hermes_plugin_ssh", "ssh"),)
    supports_pty = False

    @pytest.fixture
    def backend_config(self, sshd: Any, hermes_workspace: Path) -> dict[str, Any]:
        # sshd runs on this machine: its tasks start in the workspace, as the others' do
        return {"terminal": {"backend": "ssh", "ssh": sshd.settings()},
                "plugins": {"entries": {"terminal": {"settings": {"workdir": str(hermes_workspace)}}}}}


class TestUlimitExample(BackendContract):
    backend = "ulimit"
    plugins = (("hermes_backend_ulimit", "ulimit"),)

    @pytest.fixture(autouse=True)
    def example_plugin_importable(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.syspath_prepend(str(FIXTURES / "dists" / "ulimit-backend"))
