"""A host's turns and the memory provider, as Hermes Agent's loop calls it: ``runtime.begin_turn(message, session)``
records the message, calls ``on_turn_start`` then ``prefetch`` (fenced into ``turn.message``, never into what is
stored); ``turn.end(reply)`` records the reply and hands the turn to ``sync_turn`` and ``queue_prefetch`` in the
background. Around ``answer_tool_calls`` and around a pydantic-ai run alike."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

import hermes_core.state.providers as providers_module
from hermes_core.authoring.testing import scaled_timeout

PROVIDER = textwrap.dedent('''
    import json
    import threading
    import time
    from pathlib import Path

    from agent.memory_provider import MemoryProvider


    class JournalProvider(MemoryProvider):
        """Writes each hook call to journal.json in the home; recalls what earlier turns said."""

        def __init__(self):
            self.home = None
            self.lock = threading.Lock()

        @property
        def name(self):
            return "journal"

        def is_available(self):
            return True

        def initialize(self, session_id, **kwargs):
            self.home = Path(kwargs["hermes_home"])

        def get_tool_schemas(self):
            return []

        def on_turn_start(self, turn_number, message, **kwargs):
            self._log("on_turn_start", turn_number, message)

        def prefetch(self, query, *, session_id=""):
            self._log("prefetch", query, session_id)
            if "slowly" in query:
                time.sleep(30)
            said = [entry[1] for entry in self._entries() if entry[0] == "sync_turn"]
            return "earlier: " + " | ".join(said) if said else ""

        def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
            self._log("sync_turn", user_content, assistant_content, session_id, len(messages or []))

        def queue_prefetch(self, query, *, session_id=""):
            self._log("queue_prefetch", query, session_id)

        def _entries(self):
            path = self.home / "journal.json"
            return json.loads(path.read_text()) if path.exists() else []

        def _log(self, *entry):
            with self.lock:
                (self.home / "journal.json").write_text(json.dumps(self._entries() + [list(entry)]))


    def register(ctx):
        ctx.register_memory_provider(JournalProvider())
''')


@pytest.fixture
def runtime(plugins, isolated_home: Path):
    plugins.folder("journal", init=PROVIDER)
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"memory": {"provider": "journal"}}))
    made = plugins.runtime()
    made.load_plugins()
    made.register_tool("lookup", "x", {"description": "Look something up.",
                                        "parameters": {"type": "object", "properties": {}}},
                       lambda args, **kwargs: "db-2")
    yield made
    made.close()


def journal(home: Path, entries: int) -> list[list[Any]]:
    """The provider's journal once it holds ``entries`` entries (its end-of-turn work runs in the background)."""
    deadline = time.monotonic() + scaled_timeout(10)
    found: list[list[Any]] = []
    while time.monotonic() < deadline:
        path = home / "journal.json"
        try:
            found = json.loads(path.read_text()) if path.exists() else []
        except ValueError:  # read while the provider rewrites it
            continue
        if len(found) >= entries:
            return found
        time.sleep(0.02)
    return found


def test_a_turn_around_answer_tool_calls_calls_the_providers_hooks_in_hermes_agents_order(runtime, isolated_home):
    turn = runtime.begin_turn("Which host is staging?", "s1")
    assert turn.message == "Which host is staging?"  # nothing recalled yet
    runtime.answer_tool_calls([{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}],
                              session_id="s1")
    turn.end("Staging is db-2.", messages=[{"role": "user", "content": "Which host is staging?"},
                                           {"role": "assistant", "content": "Staging is db-2."}])

    assert journal(isolated_home, 4) == [
        ["on_turn_start", 1, "Which host is staging?"], ["prefetch", "Which host is staging?", "s1"],
        ["sync_turn", "Which host is staging?", "Staging is db-2.", "s1", 2],
        ["queue_prefetch", "Which host is staging?", "s1"]]
    stored = [(m["role"], m["content"]) for m in runtime.sessions.messages("s1")]
    assert stored[0] == ("user", "Which host is staging?") and stored[-1] == ("assistant", "Staging is db-2.")
    assert [role for role, _ in stored] == ["user", "assistant", "tool", "assistant"]

    second = runtime.begin_turn("And production?", "s1")
    assert second.number == 2
    assert second.message.startswith("And production?\n\n<memory-context>\n[System note:")
    assert "earlier: Which host is staging?" in second.message
    assert runtime.sessions.messages("s1")[-1]["content"] == "And production?"  # stored without the recall


def test_a_slow_recall_is_left_out_of_the_turn(runtime, isolated_home, monkeypatch, caplog):
    monkeypatch.setattr(providers_module, "PREFETCH_TIMEOUT", 0.2)

    turn = runtime.begin_turn("answer slowly please", "s2")

    assert turn.message == "answer slowly please"
    assert "prefetch() took over 0.2 s" in caplog.text


def test_an_unfinished_turn_is_not_synced_and_ending_twice_syncs_once(runtime, isolated_home):
    runtime.begin_turn("never answered", "s3")
    turn = runtime.begin_turn("answered", "s3")
    turn.end("yes")
    turn.end("yes again")
    runtime.memory_providers.drain()

    synced = [entry for entry in journal(isolated_home, 6) if entry[0] == "sync_turn"]
    assert synced == [["sync_turn", "answered", "yes", "s3", 0]]


def test_a_pydantic_ai_run_inside_a_turn(runtime, isolated_home):
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from hermes_core.adapters.pydantic_ai import HermesToolset

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("lookup", {}, tool_call_id="p1")])
        return ModelResponse(parts=[TextPart("Staging is db-2.")])

    turn = runtime.begin_turn("Which host is staging?", "s4")
    result = Agent(FunctionModel(model), toolsets=[HermesToolset(runtime, session_id="s4")]).run_sync(turn.message)
    turn.end(result.output)

    assert ["sync_turn", "Which host is staging?", "Staging is db-2.", "s4", 0] in journal(isolated_home, 4)
    assert [m["role"] for m in runtime.sessions.messages("s4")] == ["user", "assistant", "tool", "assistant"]


def test_without_a_provider_a_turn_only_records(plugins, isolated_home):
    made = plugins.runtime()
    turn = made.begin_turn("hello", "s5")
    turn.end("hi")

    assert turn.message == "hello"
    assert [(m["role"], m["content"]) for m in made.sessions.messages("s5")] == [("user", "hello"),
                                                                                ("assistant", "hi")]
    made.close()
