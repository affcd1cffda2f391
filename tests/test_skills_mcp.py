"""``hermes mcp serve`` offers skills as MCP prompts when it serves the skills pack: the MCP SDK's own client lists
them, gets their bodies over stdio and is told when they change."""

from __future__ import annotations

import shutil
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_core.authoring.testing import scaled_timeout

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py
#: The longest a test waits for a notification; the server re-reads the skill folders every few seconds.
WAIT = scaled_timeout(30.0)
PACK = Path(__file__).resolve().parent.parent / "hermes_plugins" / "skills"


def serve_home(tmp_path: Path, *, with_pack: bool) -> Path:
    """A home with a user skill and a plugin shipping one; with the skills pack's manifest as a plugin folder when
    ``with_pack`` (its handlers import ``hermes_plugin_skills`` from the repository: the pack need not be
    installed in the test environment)."""
    home = tmp_path / "server-home"
    skill = home / "skills" / "brew"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: brew\ndescription: How to brew coffee\n---\n"
                                    "# Brew\nGrind, then pour.\n")
    (skill / "references").mkdir()
    (skill / "references" / "beans.md").write_text("# Beans\n")
    shipper = home / "plugins" / "howto"
    (shipper / "skills" / "tea").mkdir(parents=True)
    (shipper / "plugin.yaml").write_text("manifest_version: 1\nname: howto\ntools: []\nskills: [skills/tea]\n")
    (shipper / "skills" / "tea" / "SKILL.md").write_text("---\nname: tea\ndescription: Steep tea\n---\nSteep.\n")
    if with_pack:
        (home / "plugins" / "skills").mkdir()
        shutil.copy(PACK / "hermes_plugin_skills" / "plugin.yaml", home / "plugins" / "skills" / "plugin.yaml")
    return home


async def session_on(stack: AsyncExitStack, home: Path, inbox: Any = None) -> Any:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = [*support.hermes_command(), "mcp", "serve"]
    params = StdioServerParameters(command=command[0], args=command[1:],
                                   env={"HERMES_HOME": str(home), "PYTHONPATH": str(PACK)})
    errlog = stack.enter_context(open(home / "serve-stderr.log", "a"))  # noqa: SIM115
    read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    session = await stack.enter_async_context(ClientSession(read, write, message_handler=inbox))
    await session.initialize()
    return session


def test_skills_are_prompts_and_their_tools_are_tools(tmp_path: Path) -> None:
    home = serve_home(tmp_path, with_pack=True)

    async def main() -> Any:
        async with AsyncExitStack() as stack:
            session = await session_on(stack, home)
            tools = sorted(tool.name for tool in (await session.list_tools()).tools)
            prompts = {p.name: p.description for p in (await session.list_prompts()).prompts}
            brew = await session.get_prompt("brew")
            tea = await session.get_prompt("howto:tea")
            called = await session.call_tool("skill_view", {"name": "brew", "file_path": "references/beans.md"})
            return tools, prompts, brew, tea, called

    tools, prompts, brew, tea, called = anyio.run(main)
    assert tools == ["skill_manage", "skill_view", "skills_list"]
    assert prompts == {"brew": "How to brew coffee", "howto:tea": "Steep tea"}
    [message] = brew.messages
    assert message.role == "user" and message.content.text.startswith("# Brew\nGrind, then pour.\n")
    assert "references/beans.md" in message.content.text and brew.description == "How to brew coffee"
    assert tea.messages[0].content.text.strip() == "Steep."
    assert "# Beans" in called.content[0].text and not called.is_error


def test_an_unknown_prompt_is_an_error_not_a_crash(tmp_path: Path) -> None:
    from mcp.shared.exceptions import MCPError

    home = serve_home(tmp_path, with_pack=True)

    async def main() -> Any:
        async with AsyncExitStack() as stack:
            session = await session_on(stack, home)
            with pytest.raises(MCPError, match="no skill 'nothing'"):
                await session.get_prompt("nothing")
            return [p.name for p in (await session.list_prompts()).prompts]

    assert anyio.run(main) == ["brew", "howto:tea"]  # the server is still there


def test_without_the_skills_pack_no_prompts_are_offered(tmp_path: Path) -> None:
    home = serve_home(tmp_path, with_pack=False)

    async def main() -> Any:
        async with AsyncExitStack() as stack:
            session = await session_on(stack, home)
            return (await session.list_prompts()).prompts

    assert anyio.run(main) == []


class _PromptChanges:
    """Collects a session's ``notifications/prompts/list_changed``."""

    def __init__(self) -> None:
        self.event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        import mcp.types as types

        if isinstance(message, types.PromptListChangedNotification):
            self.event.set()

    async def next_change(self) -> None:
        with anyio.fail_after(WAIT):
            await self.event.wait()
        self.event = anyio.Event()


SOUP = "---\nname: soup\ndescription: Make soup\n---\n# Soup\nSimmer for an hour.\n"


def test_a_client_is_told_when_skill_manage_changes_the_prompts(tmp_path: Path) -> None:
    home = serve_home(tmp_path, with_pack=True)

    async def main() -> Any:
        changes = _PromptChanges()
        async with AsyncExitStack() as stack:
            session = await session_on(stack, home, inbox=changes)
            advertised = session.server_capabilities.prompts.list_changed
            created = await session.call_tool("skill_manage", {"action": "create", "name": "soup", "content": SOUP})
            await changes.next_change()
            after_create = {p.name: p.description for p in (await session.list_prompts()).prompts}
            soup = await session.get_prompt("soup")
            await session.call_tool("skill_manage", {"action": "delete", "name": "soup"})
            await changes.next_change()
            after_delete = [p.name for p in (await session.list_prompts()).prompts]
            return advertised, created, after_create, soup, after_delete

    advertised, created, after_create, soup, after_delete = anyio.run(main)
    assert advertised is True
    assert not created.is_error, created.content[0].text
    assert after_create == {"brew": "How to brew coffee", "howto:tea": "Steep tea", "soup": "Make soup"}
    assert soup.messages[0].content.text == "# Soup\nSimmer for an hour.\n"
    assert after_delete == ["brew", "howto:tea"]


def test_a_skill_edited_on_disk_is_noticed_without_a_call(tmp_path: Path) -> None:
    """No call goes through the server: its periodic re-read (every few seconds) sees the new SKILL.md stamp."""
    home = serve_home(tmp_path, with_pack=True)
    document = home / "skills" / "brew" / "SKILL.md"

    async def main() -> Any:
        changes = _PromptChanges()
        async with AsyncExitStack() as stack:
            session = await session_on(stack, home, inbox=changes)
            await session.list_prompts()
            document.write_text("---\nname: brew\ndescription: How to brew tea instead\n---\nSteep.\n")
            await changes.next_change()
            return {p.name: p.description for p in (await session.list_prompts()).prompts}

    assert anyio.run(main)["brew"] == "How to brew tea instead"


def test_a_2026_client_hears_prompt_changes_through_subscriptions_listen(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.shared.subscriptions import PromptsListChanged
    from mcp.types.version import MODERN_PROTOCOL_VERSIONS

    home = serve_home(tmp_path, with_pack=True)
    command = [*support.hermes_command(), "mcp", "serve"]
    params = StdioServerParameters(command=command[0], args=command[1:],
                                   env={"HERMES_HOME": str(home), "PYTHONPATH": str(PACK)})

    async def main() -> Any:
        async with Client(params) as client:
            assert client.protocol_version in MODERN_PROTOCOL_VERSIONS
            async with client.listen(prompts_list_changed=True) as subscription:
                await client.call_tool("skill_manage", {"action": "create", "name": "soup", "content": SOUP})
                with anyio.fail_after(WAIT):
                    event = await subscription.__anext__()
            return event, [p.name for p in (await client.list_prompts()).prompts]

    event, names = anyio.run(main)
    assert isinstance(event, PromptsListChanged)
    assert names == ["brew", "howto:tea", "soup"]


LEARNER = '''
from pathlib import Path

_ctx = None


def learn(args, **kwargs):
    _ctx.register_skill("extra", Path(__file__).parent / "extra")
    _ctx.register_tool("learned", "learner", {"description": "Came with the new skill",
                                              "parameters": {"type": "object", "properties": {}}},
                       lambda a, **k: "learned")
    return "learnt"


def register(ctx):
    global _ctx
    _ctx = ctx
    ctx.register_tool("learn", "learner", {"description": "Add a skill and a tool",
                                           "parameters": {"type": "object", "properties": {}}}, learn,
                      annotations={"read_only": True})
'''


def test_a_plugin_that_changes_its_contributions_changes_the_prompts(tmp_path: Path) -> None:
    """The call is declared read-only, so the registry's new generation (a tool came) is what sends the re-read."""
    home = serve_home(tmp_path, with_pack=True)
    plugin = home / "plugins" / "learner"
    (plugin / "extra").mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("manifest_version: 1\nname: learner\n")
    (plugin / "__init__.py").write_text(LEARNER)
    (plugin / "extra" / "SKILL.md").write_text("---\nname: extra\ndescription: Learnt at run time\n---\nMore.\n")

    async def main() -> Any:
        changes = _PromptChanges()
        async with AsyncExitStack() as stack:
            session = await session_on(stack, home, inbox=changes)
            before = [p.name for p in (await session.list_prompts()).prompts]
            learnt = await session.call_tool("learn", {})
            await changes.next_change()
            return before, learnt, {p.name: p.description for p in (await session.list_prompts()).prompts}

    before, learnt, after = anyio.run(main)
    assert not learnt.is_error, learnt.content[0].text
    assert before == ["brew", "howto:tea"]
    assert after == {"brew": "How to brew coffee", "howto:tea": "Steep tea", "learner:extra": "Learnt at run time"}
