"""Refuse answers that would not make an installable Hermes plugin, before any file is rendered.

Cookiecutter runs this file (rendered) before it writes the project; ``hermes plugins new`` imports it
unrendered and calls :func:`problems` before it touches the disk, so both refuse the same names.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from collections.abc import Mapping
from typing import Any

PLUGIN_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
DISTRIBUTION = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
PACKAGE = re.compile(r"[a-z_][a-z0-9_]*")
TOOLSET = re.compile(r"[a-z][a-z0-9_-]*")
TOOL = re.compile(r"[a-z][a-z0-9_]*")
EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")

#: Ids of the first-party plugins (hermes-tools-<id> on PyPI).
FIRST_PARTY = frozenset({"file", "terminal", "web", "code", "agent", "ssh", "skills", "browser", "vision", "image",
                         "tts", "cron", "docker", "homeassistant"})
#: The agent's own tools (hermes-tools-agent): a plugin's tool of one of these names would clash.
AGENT_TOOLS = frozenset({"todo", "memory", "session_search", "delegate_task", "clarify"})
#: Toolset names with a meaning of their own: everything, and Hermes Agent's legacy names.
RESERVED_TOOLSETS = frozenset({"all", "web_tools", "terminal_tools", "vision_tools", "image_tools", "skills_tools",
                               "browser_tools", "cronjob_tools", "file_tools", "tts_tools"})
#: Packages a plugin's package must not shadow.
RESERVED_PACKAGES = frozenset({"hermes_core", "hermes_plugins", "tests"})


def problems(answers: Mapping[str, Any]) -> list[str]:
    """What is wrong with the answers given, one sentence each; empty when they make an installable plugin."""
    found: list[str] = []
    if "plugin_name" in answers:
        found += _plugin_name(str(answers["plugin_name"]))
    if "project_slug" in answers:
        slug = str(answers["project_slug"])
        if not DISTRIBUTION.fullmatch(slug):
            found.append(f"invalid project slug {slug!r}: the distribution (and folder) name takes letters, digits, "
                         "'-', '_' and '.', and starts and ends with a letter or digit")
        elif re.sub(r"[-_.]+", "-", slug).lower().startswith("hermes-tools"):
            found.append(f"project slug {slug!r} is in the family of the first-party distributions (hermes-tools, "
                         "hermes-tools-<pack>); choose another, e.g. the default hermes-plugin-<id>")
    if "package_name" in answers:
        package = str(answers["package_name"])
        if not PACKAGE.fullmatch(package) or keyword.iskeyword(package):
            found.append(f"invalid package name {package!r}: it must be a lowercase Python identifier "
                         "such as 'hermes_plugin_weather'")
        elif package in RESERVED_PACKAGES or package in sys.stdlib_module_names:
            found.append(f"package name {package!r} would shadow the module of that name; choose another")
    if "toolset" in answers:
        toolset = str(answers["toolset"])
        if not TOOLSET.fullmatch(toolset) or len(toolset) > 64:
            found.append(f"invalid toolset {toolset!r}: use up to 64 lowercase letters, digits, '-' and '_', "
                         "starting with a letter")
        elif toolset in RESERVED_TOOLSETS or toolset.startswith(("hermes-", "mcp-")):
            found.append(f"toolset {toolset!r} is reserved (special, legacy, preset 'hermes-*' or MCP 'mcp-*' "
                         "names); choose another")
    if "tool_name" in answers:
        tool = str(answers["tool_name"])
        if not TOOL.fullmatch(tool) or len(tool) > 64 or keyword.iskeyword(tool):
            found.append(f"invalid tool name {tool!r}: use up to 64 lowercase letters, digits and '_', starting "
                         "with a letter (it names the handler function too)")
        elif tool in AGENT_TOOLS:
            found.append(f"tool name {tool!r} is one of the agent's own tools (hermes-tools-agent); choose another")
    for field in ("description", "author"):
        if field in answers and ("\n" in str(answers[field]) or "\r" in str(answers[field])):
            found.append(f"the {field} must fit on one line")
    email = str(answers.get("email", ""))
    if email and not EMAIL.fullmatch(email):
        found.append(f"invalid email {email!r}: leave it empty or give an address such as 'you@example.com'")
    return found


def _plugin_name(name: str) -> list[str]:
    if name.startswith("hermes-plugin-") and PLUGIN_NAME.fullmatch(name):
        return [f"plugin name {name!r} is a distribution name: give the plugin's own id, "
                f"e.g. {name.removeprefix('hermes-plugin-')!r} (the project becomes {name!r})"]
    if not PLUGIN_NAME.fullmatch(name) or len(name) > 50:
        return [f"invalid plugin name {name!r}: use up to 50 lowercase letters, digits and single hyphens, "
                "starting with a letter (e.g. 'weather' or 'github-issues')"]
    if name in FIRST_PARTY:
        return [f"plugin name {name!r} is taken by the first-party plugin hermes-tools-{name}; choose another"]
    return []


def main() -> int:
    # cookiecutter renders the next line into a string literal holding its answers as JSON
    answers = json.loads({{ cookiecutter | tojson | tojson }})  # noqa: F821
    found = problems(answers)
    for problem in found:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
