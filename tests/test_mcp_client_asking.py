"""An MCP server Hermes is a client of may ask: its elicitation goes to the user (``ask_user``, checked against
its form), its sampling to the model (``ask_model``, only when the user allowed it for that server, within its
limits), its progress to the calling tool's progress channel, its image is kept. Without a user, a decline; without
consent, a refusal with the reason; never a hang. Under ``hermes mcp serve`` the question goes on to Hermes' own
client (elicitation through a chain)."""

from __future__ import annotations

import json
import re
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from hermes_core.authoring.testing import scaled_timeout
from hermes_core.calls.asking import ModelReply, ModelRequest, UserQuestion
from hermes_core.calls.progress import Progress

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py
SERVER = Path(__file__).resolve().parent / "fixtures" / "mcp" / "asking_server.py"
WAIT = scaled_timeout(60.0)
ANSWERS = {"Your name": "Ada", "How many copies": "2", "Colour": "blue", "Are you sure": "yes"}


def asking_server(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER)], **extra}


class User:
    """A user callback answering each field of the form by its title (``None``: declines)."""

    def __init__(self, answers: dict[str, str | None]) -> None:
        self.answers = answers
        self.questions: list[UserQuestion] = []

    def __call__(self, question: UserQuestion) -> str | None:
        self.questions.append(question)
        label = question.question.splitlines()[-1]
        return next((answer for title, answer in self.answers.items() if label.startswith(title)), None)


class Model:
    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def __call__(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        return ModelReply("a short summary", model="test-model", stop_reason="stop")


def interview(runtime: Any) -> tuple[dict[str, Any], str]:
    text = runtime.handle_function_call("mcp__asking__interview", {})
    first, _, rest = text.partition("\n")
    return json.loads(first), rest


def capabilities(runtime: Any) -> dict[str, Any]:
    return json.loads(runtime.handle_function_call("mcp__asking__what_can_you_do", {}))


def test_with_the_callbacks_and_consent_the_server_gets_its_answers_and_the_progress_and_image_are_kept(
        hermes, isolated_home):
    user, model, progress = User(ANSWERS), Model(), []

    def before(runtime: Any) -> None:
        runtime.set_user_callback(user)
        runtime.set_model_callback(model)
        runtime.set_progress_callback(progress.append)

    runtime = hermes({"asking": asking_server(sampling="allow")}, before=before)
    assert {"elicitation", "sampling"} <= capabilities(runtime).keys()

    result, rest = interview(runtime)

    assert result["elicitation"] == {"action": "accept",
                                     "content": {"name": "Ada", "copies": 2, "colour": "blue", "sure": True}}
    assert result["sampling"] == {"text": "a short summary", "model": "test-model"}
    first = user.questions[0]
    assert first.question.startswith("MCP server 'asking' asks: Who is printing?")
    assert first.tool_name == "mcp__asking__interview"
    assert [q.choices for q in user.questions[2:]] == [("red", "blue"), ("yes", "no")]
    [request] = model.requests
    assert request.max_tokens == 4096  # the server asked for 50000: the cap wins
    assert request.model == "small-model"  # the server's hint
    assert request.messages == ({"role": "system", "content": "Be brief."},
                                {"role": "user", "content": "Summarise: the print job"})
    heard = [(p.done, p.total, p.message) for p in progress if p.tool_name == "mcp__asking__interview"]
    # (reports closer than 0.1 s to the previous one are dropped, but never the first nor the one reaching total)
    assert heard[0] == (1, 3, "asking the user") and heard[-1] == (3, 3, "done")
    [saved] = re.findall(r"\[image: (.+) \(image/png, \d+ bytes\)\]", rest)
    assert Path(saved).read_bytes().startswith(b"\x89PNG") and Path(saved).parent == isolated_home / "results" / \
        "media"
    log_text = (isolated_home / "logs").rglob("*asking*")
    assert any("sampling request: 2 messages" in path.read_text() for path in log_text)


def test_without_consent_sampling_is_refused_with_the_reason_and_not_declared(hermes):
    model = Model()

    def before(runtime: Any) -> None:
        runtime.set_user_callback(User(ANSWERS))
        runtime.set_model_callback(model)

    runtime = hermes({"asking": asking_server()}, before=before)
    assert "sampling" not in capabilities(runtime)

    result, _ = interview(runtime)

    assert "sampling is off for MCP server 'asking'" in result["sampling"]["error"]
    assert "mcp_servers.asking.sampling: allow" in result["sampling"]["error"]
    assert result["elicitation"]["action"] == "accept"
    assert model.requests == []


def test_hermes_agents_sampling_mapping_is_consent_and_its_cap_applies(hermes):
    model = Model()
    runtime = hermes({"asking": asking_server(sampling={"max_tokens_cap": 100, "model": "my-model"})},
                     before=lambda runtime: runtime.set_model_callback(model))

    result, _ = interview(runtime)

    assert result["sampling"]["text"] == "a short summary"
    assert (model.requests[0].max_tokens, model.requests[0].model) == (100, "my-model")
    disabled = hermes({"asking": asking_server(sampling={"enabled": False})},
                      before=lambda runtime: runtime.set_model_callback(model))
    assert "sampling is off" in interview(disabled)[0]["sampling"]["error"]


def test_without_ask_user_elicitation_is_declined_not_declared_and_nothing_hangs(hermes):
    runtime = hermes({"asking": asking_server()})
    assert "elicitation" not in capabilities(runtime)

    result, _ = interview(runtime)

    assert result["elicitation"] == {"action": "decline", "content": None}
    assert "sampling is off" in result["sampling"]["error"]


def test_a_user_who_declines_is_a_decline_and_an_answer_that_does_not_fit_the_form_a_cancel(hermes):
    runtime = hermes({"asking": asking_server()},
                     before=lambda runtime: runtime.set_user_callback(User({"Your name": None})))
    assert interview(runtime)[0]["elicitation"]["action"] == "decline"

    too_many = hermes({"asking": asking_server()},
                      before=lambda runtime: runtime.set_user_callback(User({**ANSWERS, "How many copies": "9"})))
    assert interview(too_many)[0]["elicitation"]["action"] == "cancel"  # maximum 5
    not_a_number = hermes({"asking": asking_server()},
                          before=lambda runtime: runtime.set_user_callback(User({**ANSWERS, "How many copies": "x"})))
    assert interview(not_a_number)[0]["elicitation"]["action"] == "cancel"


def test_a_url_request_shows_the_address_and_the_users_consent_is_the_answer(hermes):
    user = User({"Open this address": "open"})
    runtime = hermes({"asking": asking_server()}, before=lambda runtime: runtime.set_user_callback(user))

    assert runtime.handle_function_call("mcp__asking__open_page", {}) == "accept"
    assert "https://example.com/sign-in" in user.questions[0].question
    assert user.questions[0].choices == ("open", "decline")
    refusing = hermes({"asking": asking_server()},
                      before=lambda runtime: runtime.set_user_callback(User({"Open this address": "decline"})))
    assert refusing.handle_function_call("mcp__asking__open_page", {}) == "decline"


# -- through hermes mcp serve ------------------------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="stdio servers in a served home")
def test_a_question_of_a_server_hermes_uses_reaches_the_client_of_hermes_mcp_serve(tmp_path: Path):
    import mcp.types as types
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    home, workspace = tmp_path / "home", tmp_path / "workspace"
    home.mkdir()
    workspace.mkdir()
    (home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"asking": asking_server()}}))
    asked: list[types.ElicitRequestFormParams] = []
    progress: list[tuple[float, float | None, str | None]] = []
    replies = iter([{"answer": "Ada"}, {"answer": "3"}, {"choice": "red"}, {"choice": "no"}])

    async def elicit(context: Any, params: Any) -> Any:
        asked.append(params)
        return types.ElicitResult(action="accept", content=next(replies))

    async def heard(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def main() -> tuple[bool, str]:
        command = [*support.hermes_command(), "mcp", "serve", "--workspace", str(workspace)]
        params = StdioServerParameters(command=command[0], args=command[1:], env={"HERMES_HOME": str(home)},
                                       cwd=workspace)
        async with AsyncExitStack() as stack:
            errlog = stack.enter_context(open(home / "serve-stderr.log", "a"))  # noqa: SIM115
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            client = await stack.enter_async_context(ClientSession(read, write, elicitation_callback=elicit))
            with anyio.fail_after(WAIT):
                await client.initialize()
                result = await client.call_tool("asking__interview", {}, progress_callback=heard)
            return bool(result.is_error), "".join(b.text for b in result.content if isinstance(b, types.TextContent))

    error, text = anyio.run(main)

    assert not error, text
    answered = json.loads(text.partition("\n")[0])
    assert answered["elicitation"] == {"action": "accept",
                                       "content": {"name": "Ada", "copies": 3, "colour": "red", "sure": False}}
    assert asked[0].message.startswith("MCP server 'asking' asks: Who is printing?")
    assert asked[2].requested_schema["properties"]["choice"]["enum"] == ["red", "blue"]
    assert progress[0] == (1, 3, "asking the user") and progress[-1] == (3, 3, "done")


def test_progress_reports_reach_the_runtimes_callback_only_for_the_call_that_made_them(hermes):
    heard: list[Progress] = []
    runtime = hermes({"asking": asking_server()}, before=lambda rt: rt.set_progress_callback(heard.append))

    runtime.handle_function_call("mcp__asking__interview", {}, tool_call_id="call-7")

    assert {p.tool_call_id for p in heard} == {"call-7"} and heard[-1].message == "done"
