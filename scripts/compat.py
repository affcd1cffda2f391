"""Measure how published Hermes Agent plugins work with Hermes: `make compat`.

    python scripts/compat.py                  every pinned plugin
    python scripts/compat.py --only capsule   some of them (the others keep their last measurement)
    python scripts/compat.py --table          only regenerate the docs' table from the index records

Each plugin of :data:`PINNED` is installed from the package index, with its dependencies, into a venv of its
own beside the hermes-tools wheel built from this checkout (and the terminal and web packs). A probe run in
that venv loads it, lists it (``hermes plugins list --json``, ``info ID --json``), makes a call of each tool,
fires each of its hooks, runs each of its slash commands (with no arguments, and with each word of an args hint
such as ``now|status``; an answer that says it failed, or an exception, makes the plugin ``partly``) and
reports. From that, the plugin's status — ``works``, ``partly`` or ``needs Hermes Agent``, with the reason and
the date — is written into its ``registry-index/plugins/<id>.yaml`` record
(created with ``hermes index fetch`` when it has none), ``index.json`` is rebuilt, and the compatibility table
of docs/hermes-agent-compatibility.md is regenerated from the records: that table is never edited by hand.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import venv
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "hermes-agent-compatibility.md"
TABLE_START, TABLE_END = "<!-- BEGIN MEASURED compat-table -->", "<!-- END MEASURED compat-table -->"
PACKS = ("agent", "terminal", "web")

#: Plugin id -> the pinned requirement (the tested ones of tests/test_published_plugins.py and
#: tests/test_hermes_agent_compat.py first).
PINNED: dict[str, str] = {
    "hermes-tenuo": "hermes-tenuo==0.1.4",
    "ollama-cloud": "hermes-ollama-cloud==1.0.1",
    "serpapi": "serpapi-hermes-plugin==1.1.1",
    "tabstack": "tabstack-hermes==0.0.1",
    "noisegate": "noisegate-hermes==0.3.3",
    "agentguard-spend": "agentguard-spend-hermes==0.4.1",
    "hermes-loop": "hermes-loop-plugin==1.0.2",
    "sagtask": "sagtask==2.2.1",
    "hindsight": "hindsight-hermes==0.5.0",
    "plivo-tools": "hermes-plivo-tools==0.1.3",
    "hermes-tweet": "hermes-tweet==0.1.16",
    "hermead": "hermead==0.2.0",
    "github-app": "hermes-github-app-plugin==0.2.0",
    "blackwall": "blackwall-hermes-plugin==0.1.0",
    "capsule": "capsule-hermes==0.5.0",
    "hermes-ssh": "hermes-ssh==0.4.12",
    "hookdeck": "hermes-hookdeck==1.0.1",
    "telegram-reactions": "hermes-plugin-telegram-reactions==1.0.0",
    "delegate_routing": "hermes-delegate-routing==0.1.3",
    "evolve": "hermes-evolve==1.3.0",
    "session-titler": "hermes-session-titler==1.2.3",
    # the other plugins of the compatibility table written by hand before this harness
    "hermes-gemini-web-search": "hermes-gemini-web-search==1.0.0",
    "hermes-browserless-web-extract": "hermes-browserless-web-extract==1.0.0",
    "web-tinyfish": "hermes-plugin-tinyfish==0.4.1",
    "crawlberg": "crawlberg-hermes-plugin==1.12.0",
    "clawclaw": "hermes-clawclaw==0.2.0",
    "hermes-music": "hermes-music==0.2.0",
    "hermes-pmxt": "hermes-pmxt==0.4.0",
    "ryzome": "hermes-ryzome-plugin==1.1.0",
    "keeperhub": "keeperhub-hermes-plugin==1.0.0",
    "pushary": "hermes-plugin-pushary==0.9.2",
    "whatsapp-plusplus": "wpp-hermes==0.4.2",
    "exploration": "hermes-exploration==0.1.0",
    "acp": "acp-hermes==0.3.2",
    "agentsfence": "agentsfence==0.2.0a9",
    "atbash-hermes-plugin": "atbash-hermes-plugin==0.10.0",
    "intaris": "hermes-intaris==0.1.0",
    "aidememo": "hermes-aidememo==0.1.0",
    "brightdata": "hermes-brightdata==0.3.1",
    "rine": "hermes-rine==0.8.1",
    "incontext": "incontext==0.0.5",
    "apify": "apify-hermes-agent-plugin==0.1.5",
    "stock-analysis": "stock-analysis-plugin==0.2.9",
    # the other skills-shipping plugin of the survey of #46 (29 skills)
    "clawmes": "clawmes==0.21.0",
}

#: Plugin id -> environment variables a plugin needs before it registers anything (its own service's key), set to
#: placeholders for the probe so that what it registers is measured; the status's reason says so.
SETUP: dict[str, dict[str, str]] = {
    "brightdata": {"BRIGHTDATA_API_TOKEN": "compat-probe-placeholder"},
}

#: Keywords of the hooks a probe fires (the contract's); other hooks get none.
HOOK_KEYWORDS: dict[str, dict[str, Any]] = {
    "pre_tool_call": {"tool_name": "compat_probe", "args": {}, "task_id": "t", "session_id": "s",
                      "tool_call_id": "c", "turn_id": None, "api_request_id": None, "middleware_trace": []},
    "post_tool_call": {"tool_name": "compat_probe", "args": {}, "result": "{}", "task_id": "t", "session_id": "s",
                       "tool_call_id": "c", "turn_id": None, "api_request_id": None, "duration_ms": 1.0,
                       "status": "ok", "error_type": None, "error_message": None, "middleware_trace": []},
    "on_session_start": {"session_id": "s", "model": None, "platform": "cli"},
    "on_session_end": {"session_id": "s", "model": None, "platform": "cli", "task_id": "t", "turn_id": None,
                       "completed": True, "interrupted": False},
}
HOOK_KEYWORDS["transform_tool_result"] = HOOK_KEYWORDS["post_tool_call"]

#: Run in the plugin's venv: argv[1] is its distribution; prints what it found as JSON.
PROBE = r'''
import json, re, subprocess, sys, threading
from packaging.utils import canonicalize_name
import hermes_core

distribution, hook_keywords = sys.argv[1], json.loads(sys.argv[2])
rt = hermes_core.Runtime()
rt.load_plugins()
wanted = canonicalize_name(distribution)
records = [r for r in rt.plugins if r.distribution and canonicalize_name(r.distribution) == wanted]
if not records:
    print(json.dumps({"found": False}))
    sys.exit(0)
record = records[0]
out = {"found": True, "id": record.id, "state": record.state, "reason": record.reason, "tools": record.tools,
       "hooks": record.hooks, "warnings": record.warnings, "contributions": rt.contributions.of_plugin(record.id)}
out["availability"] = {name: list(rt.registry.check(name)) for name in record.tools}
out["calls"] = {}
for name in record.tools:
    result = rt.handle_function_call(name, {}, task_id="compat", session_id="compat")
    try:
        json.loads(result)
        out["calls"][name] = "json"
    except ValueError:
        out["calls"][name] = "not JSON: " + result[:200]
out["hook_failures"] = []
for hook in record.hooks:
    answered = {impl.plugin for impl, _ in rt.hooks.call(hook, **hook_keywords.get(hook, {}))}
    if record.id not in answered and hook in hook_keywords:
        out["hook_failures"].append(hook)
out["agent_loop_hooks"] = [hook for hook in record.hooks if hook not in hook_keywords]
out["commands"] = {}
for name in out["contributions"].get("commands", []):
    hint = rt.commands[name].args_hint or ""
    words = hint.split("|") if re.fullmatch(r"[a-z][\w-]*(\|[a-z][\w-]*)+", hint) else []
    for args in ["", *words]:  # empty, and each choice of a hint such as "now|status"
        answers = []

        def run(name=name, args=args, answers=answers):
            try:
                answer = rt.run_command(name, args)
                answers.append("" if answer is None else str(answer))
            except BaseException as exc:
                answers.append(f"raised {type(exc).__name__}: {exc}")

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        worker.join(120)
        out["commands"][f"/{name} {args}".rstrip()] = (answers or ["raised: no answer within 120 s"])[0][:2000]
listed = subprocess.run([sys.executable, "-m", "hermes_core.cli", "plugins", "list", "--json"],
                        capture_output=True, text=True, timeout=300)
info = subprocess.run([sys.executable, "-m", "hermes_core.cli", "plugins", "info", record.id, "--json"],
                      capture_output=True, text=True, timeout=300)
rows = json.loads(listed.stdout or "[]") if listed.returncode == 0 else []
out["cli"] = {"list": any(row["id"] == record.id for row in rows), "info": info.returncode == 0}
print(json.dumps(out))
'''

INTERNAL = re.compile(r"Hermes Agent internal|No module named '(tools|hermes_cli|agent|gateway|model_tools|"
                      r"hermes_state|run_agent|toolsets|cron)\b")

#: A slash command's answer that says it did not do its work (its error text, or the exception it raised).
COMMAND_FAILED = re.compile(r"^raised |\b(error|failed|failure|unavailable|not available|not supported|cannot|"
                            r"could not|unable to)\b|\bno\b[^.\n]{0,40}\bavailable\b|No module named|Traceback|⚠|❌",
                            re.IGNORECASE)

#: An answer that only says the plugin's own service key is missing (``Set XQUIK_API_KEY``): like a tool unavailable
#: for want of its key, that is the plugin working, waiting for its user's credentials.
OWN_KEY = re.compile(r"(?i:\b(set|missing|export)\b)[^\n]{0,60}\b[A-Z][A-Z0-9]*_[A-Z0-9_]*(KEY|TOKEN|SECRET)\b|"
                     r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]*(KEY|TOKEN|SECRET)\b[^\n]{0,20}(?i:\b(is not set|missing)\b)")


def _first_line(answer: str) -> str:
    """The first line of ``answer`` that says what went wrong (else its first line), shortened."""
    lines = [line.strip() for line in answer.splitlines() if line.strip()]
    failing = [line for line in lines if COMMAND_FAILED.search(line)]
    return ((failing or lines or [""])[0])[:200]


def classify(probe: dict[str, Any]) -> tuple[str, str]:
    """``(status, reason)`` from a probe's report."""
    if not probe.get("found"):
        return "partly", probe.get("error") or "installed, but Hermes discovers no plugin in its distribution"
    if probe["state"] not in ("loaded", "declared"):
        status = "needs Hermes Agent" if INTERNAL.search(probe["reason"]) else "partly"
        return status, f"does not load: {probe['reason']}"
    contributed = probe["tools"] or probe["hooks"] or any(probe["contributions"].values())
    said = [w for w in probe["warnings"] if w.startswith(("logged ", "warnings.warn ", "wrote to stderr"))]
    inactive = [w for w in said if INTERNAL.search(w)]
    if inactive and not contributed:
        return "needs Hermes Agent", inactive[0]
    problems = []
    if not probe["cli"]["list"] or not probe["cli"]["info"]:
        problems.append("`hermes plugins list` or `info` did not show it")
    problems += [f"tool {name} gave {how}" for name, how in probe["calls"].items() if how != "json"]
    problems += [f"hook {hook} raised" for hook in probe["hook_failures"]]
    problems += [f"tool {name} unavailable: {reason}" for name, (available, reason) in probe["availability"].items()
                 if not available and "Hermes runs no" in reason]
    problems += [f"messaging platform {name}: registered, not run (Hermes runs no messaging gateway)"
                 for name in probe["contributions"].get("platforms", [])]
    problems += [f"command {command} answered: {_first_line(answer)}" for command, answer in
                 probe.get("commands", {}).items() if COMMAND_FAILED.search(answer) and not OWN_KEY.search(answer)]
    problems += inactive
    if problems:
        return "partly", "; ".join(problems)
    if not contributed:  # a plugin that waits for its settings (capsule's endpoint): it works once given them
        return "works", "registers nothing until it is configured" + (f" ({said[0]})" if said else "")
    if probe.get("setup"):
        return "works", (f"register() refuses to run until {', '.join(probe['setup'])} is set (as under Hermes "
                         "Agent); measured with a placeholder")
    return "works", ""


def contributes(probe: dict[str, Any]) -> str:
    """``4 tools, 2 hooks, a slash command`` from a probe's report."""
    if not probe.get("found") or probe["state"] not in ("loaded", "declared"):
        return "-"
    parts = [(len(probe["tools"]), "tool"), (len(probe["hooks"]), "hook")]
    labels = {"commands": "slash command", "cli_commands": "CLI command", "skills": "skill",
              "middleware": "middleware kind", "web_search_providers": "web search provider",
              "platforms": "messaging platform", "memory_providers": "memory provider"}
    parts += [(len(probe["contributions"].get(key, [])), label) for key, label in labels.items()]
    text = ", ".join(f"{n} {label}{'s' if n > 1 else ''}" for n, label in parts if n)
    return text or "nothing"


# -- running -------------------------------------------------------------------------------------------------


def build_wheels(target: Path) -> list[Path]:
    """The hermes-tools wheel of this checkout and the packs' wheels."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps",
                    "-w", str(target), str(ROOT), *(str(ROOT / "hermes_plugins" / pack) for pack in PACKS)],
                   check=True)
    return sorted(target.glob("*.whl"))


def measure(plugin_id: str, requirement: str, wheels: list[Path], work: Path) -> dict[str, Any]:
    """Install ``requirement`` into a fresh venv with ``wheels`` and probe it."""
    folder = work / plugin_id
    venv.create(folder / "venv", with_pip=True)
    python = folder / "venv" / ("Scripts" if os.name == "nt" else "bin") / "python"
    env = {**os.environ, "HERMES_HOME": str(folder / "home"), "PYTHONNOUSERSITE": "1"}
    for name in ("HERMES_LOAD_PLUGINS", "HERMES_SAFE_MODE", "HERMES_ENABLE_PROJECT_PLUGINS"):
        env.pop(name, None)
    install = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *map(str, wheels), requirement]
    installed = subprocess.run(install, capture_output=True, text=True, env=env, timeout=1800)
    if installed.returncode:  # the venv's bundled pip may be too old for its resolver: a current one, as users have
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-U", "pip"],
                       capture_output=True, env=env, timeout=600)
        installed = subprocess.run(install, capture_output=True, text=True, env=env, timeout=1800)
    if installed.returncode:
        return {"found": False, "error": f"pip install failed: {installed.stderr.strip()[-300:]}"}
    env.update(SETUP.get(plugin_id, {}))
    try:
        probe = subprocess.run([str(python), "-c", PROBE, requirement.split("==")[0], json.dumps(HOOK_KEYWORDS)],
                               capture_output=True, text=True, env=env, timeout=900, cwd=folder,
                               stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"found": False, "error": "the probe did not finish within 900 s"}
    try:
        return {**json.loads(probe.stdout.strip().splitlines()[-1]), "setup": sorted(SETUP.get(plugin_id, {}))}
    except (ValueError, IndexError):
        return {"found": False, "error": f"the probe failed: {probe.stderr.strip()[-300:]}"}


def hermes(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes_core.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=900)


def record(plugin_id: str, requirement: str, probe: dict[str, Any], today: str) -> str:
    """Write the measured status into the plugin's index record; returns the status."""
    from hermes_core import __version__
    from hermes_core.index.build import find_layout, load_entry_file, write_entry
    from hermes_core.index.catalog import Compatibility

    layout = find_layout(ROOT / "registry-index")
    path = layout.entry_path(plugin_id)
    # the facts are read again from the pinned wheel each time (what a newer `index fetch` finds, such as the
    # skills a record written before it read skills lacks); tags added by hand and the requirement are kept
    fetched = hermes("index", "fetch", requirement, "--root", str(layout.root))
    if fetched.returncode or not path.is_file():
        raise SystemExit(f"{plugin_id}: hermes index fetch {requirement} failed: {fetched.stderr.strip()}")
    entry = load_entry_file(path)
    status, reason = classify(probe)
    measured = Compatibility(status=status, reason=reason[:600], date=today, hermes_tools=__version__,
                             contributes=contributes(probe))  # type: ignore[arg-type]
    header = path.read_text(encoding="utf-8").splitlines()[1]
    origin = re.search(r"from (.+?);", header)
    write_entry(layout, entry.model_copy(update={"compatibility": measured}),
                origin.group(1) if origin else requirement, force=True)
    return status


# -- the docs' table -----------------------------------------------------------------------------------------


def table() -> str:
    """The compatibility table, from the index records that hold a measurement (in :data:`PINNED` order)."""
    from hermes_core.index.build import find_layout, load_entry_file

    layout = find_layout(ROOT / "registry-index")
    rows = ["| plugin | what it contributes here | with Hermes | why not everything works |", "|---|---|---|---|"]
    for plugin_id, requirement in PINNED.items():
        path = layout.entry_path(plugin_id)
        measured = load_entry_file(path).compatibility if path.is_file() else None
        if measured is None:
            continue
        reason = measured.reason.replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `{requirement}` | {measured.contributes} | {measured.status} ({measured.date}) | {reason} |")
    return "\n".join(rows)


def write_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)
    DOC.write_text(text[:start] + "\n" + table() + "\n" + text[end:], encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", metavar="ID", help="Measure only these plugins.")
    parser.add_argument("--jobs", type=int, default=2, help="Plugins measured at once (default 2).")
    parser.add_argument("--table", action="store_true", help="Only regenerate the docs' table from the records.")
    options = parser.parse_args()
    if not options.table:
        unknown = sorted(set(options.only or ()) - set(PINNED))
        if unknown:
            parser.error(f"not pinned: {', '.join(unknown)}")
        chosen = {pid: req for pid, req in PINNED.items() if not options.only or pid in options.only}
        today = datetime.datetime.now(datetime.UTC).date().isoformat()
        with tempfile.TemporaryDirectory(prefix="hermes-compat-") as scratch:
            work = Path(scratch)
            wheels = build_wheels(work / "wheels")
            with concurrent.futures.ThreadPoolExecutor(max(1, options.jobs)) as pool:
                probes = dict(zip(chosen, pool.map(lambda item: measure(*item, wheels, work), chosen.items()),
                                  strict=True))
        counts: dict[str, int] = {}
        for plugin_id, probe in probes.items():
            status = record(plugin_id, chosen[plugin_id], probe, today)
            counts[status] = counts.get(status, 0) + 1
            print(f"{plugin_id:22} {status}: {classify(probe)[1]}".rstrip(": "))
        built = hermes("index", "build", "--root", str(ROOT / "registry-index"))
        if built.returncode:
            print(built.stdout + built.stderr, file=sys.stderr)
            return 1
        print(", ".join(f"{n} {status}" for status, n in sorted(counts.items())) + f" of {len(probes)} plugins")
    write_table()
    return 0


if __name__ == "__main__":
    sys.exit(main())
