"""No silent "loaded": what a plugin logs at WARNING or above, warns or writes to stderr while it is imported and
registered is kept on its record (bounded) and still reaches the terminal; an internal of Hermes Agent imported
at call time is named as a load names it; ``doctor`` with an invalid config.yaml says why nothing loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hermes_core import Runtime
from hermes_core.plugins.loadoutput import MAX_ITEMS

NOISY = '''
import logging, sys, warnings
logging.getLogger("noisy_plugin").warning("endpoint missing: set NOISY_URL")
warnings.warn("the old API is going away", DeprecationWarning if False else UserWarning)

def register(ctx):
    print("noisy: degraded mode", file=sys.stderr)
    logging.getLogger("noisy_plugin").info("only information: not kept")
    ctx.register_hook("post_tool_call", lambda **kw: None)
'''

FLOOD = '''
import logging
def register(ctx):
    for n in range(100):
        logging.getLogger("flood").error("problem %d " + "x" * 1500, n)
'''

LATE_IMPORT = '''
import json
def status(args, **kwargs):
    from hermes_cli.not_a_module import anything
    return json.dumps({"ok": True})

def register(ctx):
    ctx.register_tool(name="late_status", toolset="late", schema={"name": "late_status", "description": "s",
                      "parameters": {"type": "object", "properties": {}}}, handler=status)
'''


def user_plugin(home: Path, name: str, code: str) -> None:
    folder = home / "plugins" / name
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(code)
    (folder / "plugin.yaml").write_text(f"name: {name}\nversion: 1.0.0\nprovides_hooks: [post_tool_call]\n")


def hermes(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes_core.cli", *args], capture_output=True, text=True,
                          timeout=120 * float(os.environ.get("HERMES_TEST_TIMEOUT_SCALE", "1")),
                          env={**os.environ, "COLUMNS": "250"})


def test_what_a_plugin_says_while_loading_is_kept_and_still_printed(isolated_home, capfd, caplog):
    user_plugin(isolated_home, "noisy", NOISY)
    runtime = Runtime()
    runtime.load_plugins()
    record = runtime.plugin("noisy")
    assert record.state == "loaded"
    assert record.warnings[0] == "logged WARNING (noisy_plugin): endpoint missing: set NOISY_URL"
    assert record.warnings[1].startswith("warnings.warn UserWarning: the old API is going away (")
    assert record.warnings[2] == "wrote to stderr: noisy: degraded mode"
    assert len(record.warnings) == 3  # the INFO record is not a warning
    # tee, not swallow: the record still reaches the handlers it would reach (pytest's here; the terminal in the
    # CLI test below), and stderr still gets the text, once
    assert [r.getMessage() for r in caplog.records if r.name == "noisy_plugin"] == ["endpoint missing: set NOISY_URL"]
    assert capfd.readouterr().err.count("noisy: degraded mode") == 1


def test_list_says_how_many_warnings_and_doctor_strict_fails_on_them(isolated_home):
    user_plugin(isolated_home, "noisy", NOISY)
    listed = hermes("plugins", "list")
    row = next(line for line in listed.stdout.splitlines() if line.startswith("noisy"))
    assert "loaded, 3 warnings" in row
    # the plugin's own output goes to its record only (as Hermes Agent prints none), and to the terminal with -v
    verbose = hermes("-v", "plugins", "list")
    for printed in ("noisy: degraded mode", "endpoint missing: set NOISY_URL",
                    "UserWarning: the old API is going away"):
        assert printed not in listed.stderr and printed in verbose.stderr
    assert "loaded, 3 warnings" in verbose.stdout
    [record] = [r for r in json.loads(hermes("plugins", "list", "--json").stdout) if r["id"] == "noisy"]
    assert "logged WARNING (noisy_plugin): endpoint missing: set NOISY_URL" in record["warnings"]
    info = hermes("plugins", "info", "noisy").stdout
    assert "warning: wrote to stderr: noisy: degraded mode" in info
    strict = hermes("plugins", "doctor", "--strict")
    assert strict.returncode == 1 and "warning: logged WARNING (noisy_plugin)" in strict.stdout


def test_what_is_kept_is_bounded(isolated_home):
    user_plugin(isolated_home, "flood", FLOOD)
    runtime = Runtime()
    runtime.load_plugins()
    warnings = runtime.plugin("flood").warnings
    assert len(warnings) == MAX_ITEMS + 1
    assert all(len(w) <= 1000 for w in warnings)
    assert warnings[-1] == "80 more warnings not kept (the terminal showed them)"


def test_an_internal_imported_at_call_time_is_named_with_its_file_and_line(isolated_home):
    user_plugin(isolated_home, "late", LATE_IMPORT)
    runtime = Runtime()
    runtime.load_plugins()
    assert runtime.plugin("late").state == "loaded"
    error = json.loads(runtime.handle_function_call("late_status", {}))["error"]
    assert "imports 'hermes_cli.not_a_module' (late/__init__.py:4)" in error
    assert "has no compatibility shim" in error


def test_doctor_with_an_invalid_config_says_why_no_plugin_loaded(isolated_home):
    user_plugin(isolated_home, "noisy", NOISY)
    (isolated_home / "config.yaml").write_text("plugins: [not: a mapping\n")
    report = json.loads(hermes("plugins", "doctor", "--json").stdout)
    [row] = [r for r in report["plugins"] if r["id"] == "noisy"]
    assert row["state"] == "disabled"
    assert "HERMES_SAFE_MODE" not in row["reason"]
    assert row["reason"] == ("not loaded: config.yaml is invalid, so which plugins are enabled or disabled cannot "
                             "be read")
