"""A plugin's state in a runtime (``tool_context().state``): closed with the runtime, told when sessions end."""

from __future__ import annotations

from pathlib import Path

from hermes_core import Runtime


class Resource:
    def __init__(self) -> None:
        self.closed = 0
        self.ended: list[str | None] = []

    def close(self) -> None:
        self.closed += 1

    def end_session(self, session_id: str | None) -> None:
        self.ended.append(session_id)


class Broken:
    def close(self) -> None:
        raise RuntimeError("cannot close")


def test_runtime_close_closes_state_objects_even_after_one_fails(tmp_path: Path) -> None:
    runtime = Runtime(home=tmp_path, entry_points=())
    context = runtime.tool_context("pack")
    context.state("broken", Broken)
    resource = context.state("resource", Resource)

    runtime.close()

    assert resource.closed == 1
    assert context.state("resource", Resource) is not resource  # forgotten: a later use makes a new one


def test_state_objects_hear_the_end_of_sessions_however_it_is_fired(tmp_path: Path) -> None:
    runtime = Runtime(home=tmp_path, entry_points=())
    resource = runtime.tool_context("pack").state("resource", Resource)

    with runtime.session("test", session_id="s1"):
        pass
    runtime.tool_context("other").invoke_hook("on_session_end", session_id="s2")
    runtime.close()

    assert resource.ended == ["s1", "s2"]


def test_no_session_hook_is_added_until_a_state_object_needs_it(tmp_path: Path) -> None:
    runtime = Runtime(home=tmp_path, entry_points=())
    before = runtime.hooks.generation
    runtime.tool_context("pack").state("plain", dict)
    assert runtime.hooks.generation == before

    runtime.tool_context("pack").state("resource", Resource)
    runtime.tool_context("pack").state("again", Resource)

    assert runtime.hooks.generation == before + 1  # one implementation, however many objects
    runtime.close()
