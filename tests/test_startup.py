"""Startup stays lean: importing the core imports neither mcp nor any plugin module."""

from __future__ import annotations

import json
import subprocess
import sys


def test_import_hermes_core_imports_no_mcp_and_no_plugin():
    code = ("import sys, json, hermes_core; print(json.dumps(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('mcp', 'hermes_plugins', 'httpx', 'jsonschema', 'cookiecutter') "
            "or m.startswith('hermes_plugin_'))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(result.stdout) == []
