"""The suite on a busy machine: hang bounds scale with it (HERMES_TEST_TIMEOUT_SCALE, else the load per core), and
the tests that build wheels and venvs are marked ``slow`` so ``make test-fast`` can leave them out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.authoring.testing import scaled_timeout, timeout_scale

ROOT = Path(__file__).resolve().parent.parent


def test_the_variable_scales_every_bound(monkeypatch):
    monkeypatch.setenv("HERMES_TEST_TIMEOUT_SCALE", "2.5")

    assert scaled_timeout(120) == 300


@pytest.mark.parametrize("given", ["soon", "0", "-1"])
def test_a_scale_that_is_not_a_positive_number_is_refused(monkeypatch, given):
    monkeypatch.setenv("HERMES_TEST_TIMEOUT_SCALE", given)

    with pytest.raises(ValueError, match="HERMES_TEST_TIMEOUT_SCALE"):
        scaled_timeout(1)


def test_without_the_variable_the_scale_follows_the_load_per_core_and_never_shrinks(monkeypatch):
    monkeypatch.delenv("HERMES_TEST_TIMEOUT_SCALE", raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 0.0, 0.0))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert timeout_scale() == 4.5
    monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 0.0, 0.0))
    assert timeout_scale() == 1.0


def test_venv_building_tests_are_slow_and_test_fast_leaves_them_out():
    def collected(*options: str) -> list[str]:
        result = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
                                 *options, "tests/test_scaffold.py"], capture_output=True, text=True, cwd=ROOT,
                                timeout=scaled_timeout(120))
        assert result.returncode == 0, result.stdout + result.stderr
        return [line for line in result.stdout.splitlines() if "::" in line]

    everything, fast = collected(), collected("-m", "not slow")
    venv_builders = [test for test in everything if "installs_lists_calls" in test or "tutorial_runs" in test]

    assert venv_builders and not set(venv_builders) & set(fast)
    assert fast and set(fast) < set(everything)
    makefile = (ROOT / "Makefile").read_text()
    assert '-m "not slow"' in makefile.split("test-fast:")[1].split("\n\n")[0]
