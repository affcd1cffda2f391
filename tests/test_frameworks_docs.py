"""docs/frameworks.md runs as written, in a venv of the hermes-tools and hermes-tools-file wheels: each example
with its first paragraph (the model) replaced by the offline one the page shows after it — each framework's own
test model, or for the Agents SDK a fake endpoint on 127.0.0.1 that the SDK's environment variables point at."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

support = pytest.importorskip("hermes_adapter_test_support")
fakes = sys.modules["hermes_fake_provider"]  # loaded by conftest.py
for framework in ("pydantic_ai", "agents", "langgraph", "llm_echo"):
    pytest.importorskip(framework)

PAGE = Path(__file__).resolve().parent.parent / "docs" / "frameworks.md"
FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```$", re.S | re.M)
SEPARATOR = "=== end of block ==="
#: What the Agents SDK's fake endpoint calls, of the tools each request offers.
CALLS = [("plan", {"input": "Summarize notes.txt"}),
         ("read_file", {"path": "notes.txt", "offset": None, "limit": None})]
#: What the run prints after the page's blocks, for the checks the printed text cannot show.
AFTER = 'print(json.dumps({"langchain_tool_result": result["messages"][-2].content}))'


def examples() -> list[tuple[str, str]]:
    """(section, code) of each python example, its first paragraph replaced by the offline block after it."""
    text = PAGE.read_text(encoding="utf-8")
    blocks = [(match.group("info").strip(), match.group("body"), match.start()) for match in FENCE.finditer(text)]
    found = []
    for index, (info, body, start) in enumerate(blocks):
        if info != "python":
            continue
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        if following is not None and following[0] == "python offline":
            body = following[1] + body.split("\n\n", 1)[1]
        headings = re.findall(r"^##+ (.+)$", text[:start], re.M)
        found.append((headings[-1], body))
    return found


@pytest.fixture(scope="module")
def page_run(make_venv: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Any]:
    """Every example in order, in one namespace, in a subprocess of the venv (bounded); what each printed, and
    the fake endpoint's requests."""
    env_venv = make_venv("frameworks-docs")
    env_venv.install("hermes-tools-file", extra=("--no-deps",))
    home, work = tmp_path_factory.mktemp("docs-home"), tmp_path_factory.mktemp("docs-work")
    (work / "notes.txt").write_text(support.NOTE + "\n")
    code = [body for _, body in examples()] + [AFTER]
    script = "\n".join([
        "import contextlib, io, json",
        f"blocks = {code!r}",
        "namespace = {'__name__': 'docs_frameworks', 'json': json}",
        "for block in blocks:",
        "    printed = io.StringIO()",
        "    with contextlib.redirect_stdout(printed):",
        "        exec(compile(block, 'frameworks.md', 'exec'), namespace)",
        f"    print(printed.getvalue() + {SEPARATOR!r})",
    ])
    with fakes.fake_provider(CALLS) as fake:
        environment = {**fake.environment(), "HERMES_HOME": str(home), "HERMES_WORKSPACE": str(work),
                       "OPENAI_AGENTS_DISABLE_TRACING": "1", "LLM_USER_PATH": str(home / "llm")}
        result = env_venv.run(env_venv.python, "-c", script, env=environment, cwd=work, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.split(SEPARATOR + "\n")[:-1], fake


def test_the_page_has_an_example_per_framework_and_a_planner_sub_agent_in_pydantic_ai_and_the_agents_sdk():
    sections = [section for section, _ in examples()]
    assert sections == ["Sessions and memory", "pydantic-ai", "A read-only planner sub-agent", "OpenAI Agents SDK",
                        "A read-only planner sub-agent", "LangChain and LangGraph", "llm"]


def test_every_example_ran_the_file_packs_read_file_and_its_result_reached_the_model(page_run: Any):
    printed, _ = page_run
    sessions, pydantic_ai, pydantic_ai_planner, agents, agents_planner, langchain, llm, after = printed

    assert sessions == ""  # it only makes the toolset and the instructions

    assert support.NOTE in json.loads(pydantic_ai)["content"]
    assert support.NOTE in json.loads(pydantic_ai_planner)["content"]  # the planner read it; the parent said so
    assert agents.startswith("Tool results: ") and support.NOTE in agents
    assert support.NOTE in agents_planner
    assert langchain.strip() == "It says hello."
    assert support.NOTE in json.loads(json.loads(after)["langchain_tool_result"])["content"]
    assert support.NOTE in llm and '"tool_results"' in llm


def test_the_agents_sdk_planner_was_offered_only_read_only_tools_and_its_parent_every_tool(page_run: Any):
    _, fake = page_run
    offered = [sorted(tool["name"] for tool in body["tools"]) for body in fake.bodies("/responses")
               if not any(item.get("type") == "function_call_output" for item in body["input"]
                          if isinstance(item, dict))]
    assert ["read_file", "search_files"] in offered  # the planner
    assert any({"plan", "write_file", "patch"} <= set(names) for names in offered)  # its parent
