"""docs/agent-loops.md runs as written: each loop, with the real SDK clients the page uses, against a fake
provider endpoint on 127.0.0.1 that the SDKs' own environment variables point at."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.authoring.testing import scaled_timeout

fakes = sys.modules["hermes_fake_provider"]  # loaded by conftest.py

PAGE = Path(__file__).resolve().parent.parent / "docs" / "agent-loops.md"
FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```$", re.S | re.M)
#: What each section's loop sends, in the order of the page: (section, endpoint, requests).
LOOPS = [("OpenAI Chat Completions", "/chat/completions", 2), ("OpenAI Responses", "/responses", 2),
         ("Anthropic", "/messages", 2), ("Gemini", ":generateContent", 2), ("Async", "/chat/completions", 2),
         ("Asking the user, asking a model", "/chat/completions", 2)]
SEPARATOR = "=== end of block ==="


def page_blocks() -> list[tuple[str, str, str]]:
    """(section heading, info string, body) of every fenced block of the page."""
    text = PAGE.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        headings = re.findall(r"^## (.+)$", text[:match.start()], re.M)
        found.append((headings[-1] if headings else "", match.group("info").strip(), match.group("body")))
    return found


@pytest.fixture(scope="module")
def page_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], list[tuple[str, dict]]]:
    """Every python block in order, in one namespace, in a subprocess (bounded) with its own HERMES_HOME;
    what each block printed, and every request the fake provider received."""
    home = tmp_path_factory.mktemp("agent-loops-home")
    work = tmp_path_factory.mktemp("agent-loops-work")
    code = [body for _, info, body in page_blocks() if info == "python"]
    script = "\n".join([
        "import contextlib, io, sys",
        f"blocks = {code!r}",
        "namespace = {'__name__': 'docs_agent_loops'}",
        "for block in blocks:",
        "    printed = io.StringIO()",
        "    with contextlib.redirect_stdout(printed):",
        "        exec(compile('from __future__ import annotations\\n' + block, 'agent-loops.md', 'exec'), namespace)",
        f"    print(printed.getvalue() + {SEPARATOR!r})",
    ])
    with fakes.fake_provider() as fake:
        env = {**os.environ, **fake.environment(), "HERMES_HOME": str(home)}
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=work,
                                timeout=scaled_timeout(300))
        requests = list(fake.requests)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.split(SEPARATOR + "\n")[:-1], requests


def test_every_loop_prints_what_the_page_shows(page_run):
    printed, _ = page_run
    blocks = page_blocks()
    python = [index for index, (_, info, _) in enumerate(blocks) if info == "python"]
    shown = {python.index(i): blocks[i + 1][2].strip() for i in python
             if i + 1 < len(blocks) and blocks[i + 1][1] == "text"}

    assert len(printed) == len(python)
    assert sorted(shown) == [1, 2, 3, 4, 5, 8]  # each loop shows its output (blocks 6 and 7 print nothing)
    for block, text in shown.items():
        assert printed[block].strip() == text, f"block {block} printed {printed[block]!r}, the page shows {text!r}"


def test_every_provider_section_has_a_loop_that_ran_one_round_of_tool_calls(page_run):
    _, requests = page_run
    sections = [section for section, info, _ in page_blocks() if info == "python"]

    assert [s for s, _, _ in LOOPS] == [s for s in sections if s in {s for s, _, _ in LOOPS}]
    assert [path.rsplit("/", 1)[-1].split(":")[-1] for path, _ in requests] == \
        ["completions", "completions", "responses", "responses", "messages", "messages", "generateContent",
         "generateContent", "completions", "completions", "completions", "completions"]


def test_the_loops_send_each_providers_definitions_and_replies(page_run):
    _, requests = page_run
    bodies = [body for _, body in requests]
    chat, chat_reply = bodies[0], bodies[1]
    responses_reply, anthropic_reply, gemini_reply = bodies[3], bodies[5], bodies[7]

    assert chat["tools"][0]["function"]["strict"] is True
    assert chat_reply["messages"][-1]["role"] == "tool" and chat_reply["messages"][-1]["tool_call_id"] == "call_1"
    assert responses_reply["input"][-1]["type"] == "function_call_output"
    assert anthropic_reply["messages"][-1]["content"][0]["type"] == "tool_result"
    assert "functionResponse" in gemini_reply["contents"][-1]["parts"][0]
    async_reply = bodies[9]["messages"]
    assert [m["tool_call_id"] for m in async_reply if m.get("role") == "tool"] == ["call_1", "call_2"]
    assert json.loads(async_reply[-1]["content"]) == {"city": "Paris", "tomorrow": "rain"}
    # the sub-agent's model callback: its own conversation, its goal in the system prompt, the weather tools
    sub_agent = bodies[10]
    assert "What is the weather in Paris today?" in sub_agent["messages"][0]["content"]
    assert {tool["function"]["name"] for tool in sub_agent["tools"]} == {"get_weather", "get_forecast"}
