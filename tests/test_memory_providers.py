"""Memory providers: a plugin written against Hermes Agent 0.19's ``MemoryProvider`` interface registers with
``ctx.register_memory_provider``; the one ``memory.provider`` selects adds its tools and its prompt block beside
the built-in file memory, is initialised with the session and the home, and hears the memory tool's writes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import hermes_plugin_agent
import pytest
import yaml

PROVIDER = textwrap.dedent('''
    import json
    from pathlib import Path

    from agent.memory_provider import MemoryProvider


    class NotesProvider(MemoryProvider):
        """A provider as Hermes Agent's plugin guide writes one: notes kept in a JSON file of the home."""

        def __init__(self):
            self.home = None
            self.session = None

        @property
        def name(self):
            return "notes"

        def is_available(self):
            return True

        def initialize(self, session_id, **kwargs):
            self.session, self.home = session_id, Path(kwargs["hermes_home"])

        def system_prompt_block(self):
            return "NOTES PROVIDER: recall earlier facts with notes_recall."

        def get_tool_schemas(self):
            return [{"type": "function", "function": {
                "name": "notes_recall", "description": "Recall notes that match a query.",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                               "required": ["query"]}}},
                    {"name": "memory", "description": "shadows the core tool", "parameters": {"type": "object"}}]

        def handle_tool_call(self, tool_name, args, **kwargs):
            notes = self._notes()
            return json.dumps({"matches": [n for n in notes if args["query"] in n["content"]],
                               "session": self.session})

        def prefetch(self, query, *, session_id=""):
            return "; ".join(n["content"] for n in self._notes() if query.split()[0] in n["content"])

        def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
            notes = self._notes()
            notes.append({"action": "turn", "target": "conversation", "content": user_content, "session": session_id})
            (self.home / "notes.json").write_text(json.dumps(notes))

        def on_memory_write(self, action, target, content, metadata=None):
            notes = self._notes()
            notes.append({"action": action, "target": target, "content": content,
                          "session": (metadata or {}).get("session_id")})
            (self.home / "notes.json").write_text(json.dumps(notes))

        def _notes(self):
            path = self.home / "notes.json"
            return json.loads(path.read_text()) if path.exists() else []


    def register(ctx):
        ctx.register_memory_provider(NotesProvider())
''')


@pytest.fixture
def provider_runtime(plugins, isolated_home: Path):
    plugins.folder("notes", init=PROVIDER)

    def make(selected: str | None):
        (isolated_home / "config.yaml").write_text(yaml.safe_dump({"memory": {"provider": selected or ""}}))
        runtime = plugins.runtime()
        runtime.load_plugins()
        runtime.load_plugin_from_path(Path(hermes_plugin_agent.__file__).parent, "agent")
        return runtime

    return make


def test_the_selected_provider_adds_its_tool_and_prompt_block(provider_runtime, isolated_home):
    runtime = provider_runtime("notes")
    record = runtime.plugin("notes")
    assert record.state == "loaded" and runtime.contributions.of_plugin("notes")["memory_providers"] == ["notes"]
    assert runtime.registry.get("notes_recall").toolset == "memory"
    assert runtime.registry.get("memory").plugin == "agent"  # a provider never takes a core tool's name
    assert any("memory provider 'notes': tool schema ignored" in warning for warning in record.warnings)
    runtime.memory.add("user", "Name: Ada")
    prompt = runtime.memory_prompt("s1")
    assert prompt.index("USER PROFILE") < prompt.index("NOTES PROVIDER: recall earlier facts")


def test_the_providers_tool_runs_initialised_with_the_session_and_hears_memory_writes(provider_runtime,
                                                                                    isolated_home):
    runtime = provider_runtime("notes")
    written = runtime.handle_function_call("memory", {"action": "add", "target": "memory",
                                                      "content": "the staging host is db-2"}, session_id="s7")
    assert json.loads(written)["success"]
    recalled = json.loads(runtime.handle_function_call("notes_recall", {"query": "staging"}, session_id="s7"))
    assert recalled == {"matches": [{"action": "add", "target": "memory", "content": "the staging host is db-2",
                                     "session": "s7"}], "session": "s7"}
    assert (isolated_home / "notes.json").exists()  # initialize() got the runtime's home


def test_hosts_reach_the_providers_recall_and_turn_sync(provider_runtime):
    runtime = provider_runtime("notes")
    runtime.memory_providers.sync_turn("the staging host is db-2", "noted", session_id="s9")
    recalled = runtime.memory_providers.prefetch("staging host?", session_id="s9")
    assert recalled.startswith("<memory-context>\n[System note: The following is recalled memory context")
    assert "the staging host is db-2" in recalled and recalled.endswith("</memory-context>")
    assert runtime.memory_providers.prefetch("nothing", session_id="s9") == ""


def test_a_provider_written_without_the_base_class_lacks_optional_hooks_quietly(plugins, isolated_home, caplog):
    plugins.folder("ducked", init=textwrap.dedent('''
        class Ducked:
            name = "ducked"
            def is_available(self): return True
            def initialize(self, session_id, **kwargs): pass
            def get_tool_schemas(self): return []
            def system_prompt_block(self): return "DUCKED"

        def register(ctx):
            ctx.register_memory_provider(Ducked())
    '''))
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"memory": {"provider": "ducked"}}))
    runtime = plugins.runtime()
    runtime.load_plugins()
    runtime.load_plugin_from_path(Path(hermes_plugin_agent.__file__).parent, "agent")
    assert json.loads(runtime.handle_function_call("memory", {"action": "add", "target": "user",
                                                              "content": "kept"}))["success"]
    assert runtime.memory_prompt().endswith("DUCKED") and runtime.memory_providers.prefetch("x") == ""
    assert "failed" not in caplog.text


def test_a_provider_that_is_not_selected_adds_nothing(provider_runtime):
    runtime = provider_runtime(None)
    assert runtime.plugin("notes").state == "loaded"
    assert runtime.registry.get("notes_recall") is None
    runtime.memory.add("memory", "plain")
    assert "NOTES PROVIDER" not in runtime.memory_prompt()


def test_a_failing_provider_never_breaks_the_prompt_or_the_memory_tool(plugins, isolated_home):
    plugins.folder("broken", init=textwrap.dedent('''
        from agent.memory_provider import MemoryProvider

        class Broken(MemoryProvider):
            name = "broken"
            def is_available(self): return True
            def initialize(self, session_id, **kwargs): pass
            def get_tool_schemas(self): return []
            def system_prompt_block(self): raise RuntimeError("backend down")
            def on_memory_write(self, *args, **kwargs): raise RuntimeError("backend down")

        def register(ctx):
            ctx.register_memory_provider(Broken())
            ctx.register_memory_provider(object())
    '''))
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"memory": {"provider": "broken"}}))
    runtime = plugins.runtime()
    runtime.load_plugins()
    runtime.load_plugin_from_path(Path(hermes_plugin_agent.__file__).parent, "agent")
    assert any("memory provider object ignored" in warning for warning in runtime.plugin("broken").warnings)
    assert json.loads(runtime.handle_function_call("memory", {"action": "add", "target": "user",
                                                              "content": "kept"}))["success"]
    assert "kept" in runtime.memory_prompt()


def test_plugins_probing_for_memory_providers_find_them(plugins):
    plugins.folder("probe", init="def register(ctx):\n"
                                 "    assert callable(getattr(ctx, 'register_memory_provider', None))\n")
    runtime = plugins.runtime()
    runtime.load_plugins()
    assert runtime.plugin("probe").state == "loaded"
