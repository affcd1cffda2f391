"""run_tool_calls and answer_tool_calls take every provider's tool calls, as dicts or as the SDKs' own objects,
and answer each in its provider's format; whole loops run with the real SDK clients against a fake provider."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import anthropic
import openai
import pydantic
import pytest
from anthropic.types import TextBlock, ThinkingBlock, ToolResultBlockParam, ToolUseBlock
from google import genai
from google.genai import types as gemini
from openai.types.chat import ChatCompletionMessageFunctionToolCall
from openai.types.responses import ResponseFunctionToolCall, ResponseReasoningItem

from hermes_core import Runtime
from hermes_core.tools.toolcalls import read_tool_call

fakes = sys.modules["hermes_fake_provider"]  # loaded by conftest.py

WEATHER = {"description": "Today's weather in a city", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string",
                                                                          "enum": ["celsius", "fahrenheit"]}},
    "required": ["city"]}}


def get_weather(args: dict[str, Any], **kwargs: Any) -> str:
    return json.dumps({"city": args["city"], "forecast": "sunny", "unit": args.get("unit", "celsius")})


@pytest.fixture
def runtime() -> Runtime:
    runtime = Runtime(entry_points=[])
    runtime.register_tool("get_weather", "weather", WEATHER, get_weather)
    return runtime


@pytest.fixture
def seen(runtime: Runtime) -> list[tuple[str, dict[str, Any], str | None]]:
    """(tool, args, tool_call_id) of every call, as a pre_tool_call hook sees it."""
    calls: list[tuple[str, dict[str, Any], str | None]] = []
    runtime.context("spy").register_hook("pre_tool_call", lambda tool_name, args, tool_call_id:
                                         calls.append((tool_name, args, tool_call_id)))
    return calls


ARGS = '{"city": "Paris"}'
SDK_CALLS = {
    "openai": ChatCompletionMessageFunctionToolCall(id="call_1", type="function",
                                                    function={"name": "get_weather", "arguments": ARGS}),
    "openai-responses": ResponseFunctionToolCall(type="function_call", id="fc_1", call_id="call_1",
                                                 name="get_weather", arguments=ARGS, status="completed"),
    "anthropic": ToolUseBlock(type="tool_use", id="call_1", name="get_weather", input={"city": "Paris"}),
    "gemini": gemini.FunctionCall(id="call_1", name="get_weather", args={"city": "Paris"}),
}


@pytest.mark.parametrize("provider", sorted(SDK_CALLS))
@pytest.mark.parametrize("as_dict", [False, True], ids=["sdk-object", "model_dump"])
def test_each_providers_call_runs_with_its_arguments_and_id(runtime, seen, provider, as_dict):
    call = SDK_CALLS[provider].model_dump() if as_dict else SDK_CALLS[provider]

    [result] = runtime.run_tool_calls([call])

    assert json.loads(result) == {"city": "Paris", "forecast": "sunny", "unit": "celsius"}
    assert seen == [("get_weather", {"city": "Paris"}, "call_1")]
    assert read_tool_call(call).provider == provider


def test_the_plain_shape_still_runs(runtime, seen):
    assert json.loads(runtime.run_tool_calls([{"name": "get_weather", "arguments": {"city": "Oslo"}}])[0])["city"] \
        == "Oslo"
    assert seen == [("get_weather", {"city": "Oslo"}, None)]


def test_responses_calls_are_answered_by_call_id_not_item_id(runtime, seen):
    [reply] = runtime.answer_tool_calls([SDK_CALLS["openai-responses"]])

    assert reply == {"type": "function_call_output", "call_id": "call_1", "output": get_weather({"city": "Paris"})}
    assert seen[0][2] == "call_1"


def test_anthropic_input_reaches_the_tool(runtime):
    """The bug this replaces: a tool_use block's ``input`` was dropped and the model told an argument is missing."""
    block = ToolUseBlock(type="tool_use", id="toolu_1", name="get_weather", input={"city": "Lima"}).model_dump()

    assert json.loads(runtime.run_tool_calls([block])[0])["city"] == "Lima"


def test_a_mixed_list_is_answered_in_call_order_each_in_its_providers_format(runtime):
    calls = [SDK_CALLS["gemini"], SDK_CALLS["openai"], {"name": "get_weather", "arguments": ARGS},
             SDK_CALLS["anthropic"], SDK_CALLS["openai-responses"]]
    result = get_weather({"city": "Paris"})

    replies = runtime.answer_tool_calls(calls)

    assert replies == [
        {"function_response": {"id": "call_1", "name": "get_weather", "response": json.loads(result)}},
        {"role": "tool", "tool_call_id": "call_1", "content": result},
        {"role": "tool", "tool_call_id": None, "content": result},
        {"type": "tool_result", "tool_use_id": "call_1", "content": result, "is_error": False},
        {"type": "function_call_output", "call_id": "call_1", "output": result},
    ]


def test_anthropic_replies_flag_hermes_errors(runtime):
    [reply] = runtime.answer_tool_calls([ToolUseBlock(type="tool_use", id="t", name="get_weather", input={})])

    assert reply["is_error"] is True
    assert "missing required argument 'city'" in json.loads(reply["content"])["error"]


def test_gemini_replies_are_parts_the_sdk_accepts(runtime):
    runtime.register_tool("shout", "text", {"description": "Upper-case", "parameters": {
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
        lambda args, **kw: args["text"].upper())
    calls = [gemini.FunctionCall(name="shout", args={"text": "hi"}),  # no id: the Gemini API often sends none
             gemini.Part(function_call=gemini.FunctionCall(name="get_weather", args={"city": "Rome"}, id="g2")),
             {"functionCall": {"name": "get_weather", "args": {}}}]

    replies = runtime.answer_tool_calls(calls)
    parts = [gemini.Part.model_validate(reply) for reply in replies]

    assert parts[0].function_response == gemini.FunctionResponse(name="shout", response={"output": "HI"})
    assert parts[1].function_response.id == "g2" and parts[1].function_response.response["city"] == "Rome"
    assert "missing required argument 'city'" in parts[2].function_response.response["error"]


@pytest.mark.parametrize("call, expected_reply", [
    ({"type": "tool_use", "id": "toolu_9", "input": {}}, {"type": "tool_result", "tool_use_id": "toolu_9"}),
    ({"type": "function_call", "call_id": "c9", "arguments": "{}"}, {"type": "function_call_output", "call_id": "c9"}),
    ({"type": "custom", "id": "call_9", "custom": {"name": "x", "input": "y"}}, {"role": "tool",
                                                                                 "tool_call_id": "call_9"}),
    (42, {"role": "tool", "tool_call_id": None}),
    (None, {"role": "tool", "tool_call_id": None}),
    ({}, {"role": "tool", "tool_call_id": None}),
], ids=["tool_use-without-name", "function_call-without-name", "custom-tool-call", "number", "none",
        "empty-dict"])
def test_a_call_that_cannot_be_read_becomes_an_error_in_its_place(runtime, call, expected_reply):
    good = {"name": "get_weather", "arguments": ARGS}

    results = runtime.run_tool_calls([good, call, good])
    replies = runtime.answer_tool_calls([call])

    assert json.loads(results[0])["city"] == json.loads(results[2])["city"] == "Paris"
    error = json.loads(results[1])["error"]
    assert error.startswith(("Not a tool call Hermes can run", "The tool call has no tool name")), error
    assert "an Anthropic tool_use block" in error
    assert replies[0].items() >= expected_reply.items()


def test_a_whole_anthropic_response_content_is_answered_tool_use_by_tool_use(runtime):
    """``answer_tool_calls(response.content)``: the text and thinking blocks among the tool uses need no answer;
    each tool use gets its tool_result and nothing else comes back (no OpenAI-shaped item among them)."""
    content = [TextBlock(type="text", text="Let me check both."),
               ToolUseBlock(type="tool_use", id="toolu_1", name="get_weather", input={"city": "Paris"}),
               ThinkingBlock(type="thinking", thinking="and Oslo", signature="sig"),
               ToolUseBlock(type="tool_use", id="toolu_2", name="get_weather", input={"city": "Oslo"})]

    replies = runtime.answer_tool_calls(content)
    results = runtime.run_tool_calls(block.model_dump() for block in content)

    assert [(reply["type"], reply["tool_use_id"]) for reply in replies] == [("tool_result", "toolu_1"),
                                                                             ("tool_result", "toolu_2")]
    assert [json.loads(reply["content"])["city"] for reply in replies] == ["Paris", "Oslo"]
    assert [json.loads(result)["city"] for result in results] == ["Paris", "Oslo"]
    for reply in replies:  # each is the SDK's own type of a block of the next user message
        assert pydantic.TypeAdapter(ToolResultBlockParam).validate_python(reply) == reply


def test_a_whole_responses_output_is_answered_call_by_call(runtime):
    output = [ResponseReasoningItem(type="reasoning", id="rs_1", summary=[]), SDK_CALLS["openai-responses"]]

    assert runtime.answer_tool_calls(output) == [
        {"type": "function_call_output", "call_id": "call_1", "output": get_weather({"city": "Paris"})}]


def test_the_calls_may_be_any_iterable(runtime):
    results = runtime.run_tool_calls(call for call in [SDK_CALLS["openai"], SDK_CALLS["anthropic"]])

    assert [json.loads(r)["city"] for r in results] == ["Paris", "Paris"]


def test_the_blocking_batch_api_inside_a_running_loop_warns_to_await_the_async_one(runtime):
    async def main() -> list[str]:
        return runtime.run_tool_calls([SDK_CALLS["openai"]])

    with pytest.warns(RuntimeWarning, match=r"await arun_tool_calls\(\)"):
        assert json.loads(asyncio.run(main())[0])["city"] == "Paris"


def test_the_module_level_functions_use_the_default_runtime():
    import hermes_core

    hermes_core.default_runtime().register_tool("get_weather", "weather", WEATHER, get_weather)

    [reply] = hermes_core.answer_tool_calls([SDK_CALLS["anthropic"]])
    [result] = asyncio.run(hermes_core.arun_tool_calls([SDK_CALLS["gemini"]]))

    assert reply["tool_use_id"] == "call_1" and json.loads(result)["city"] == "Paris"


# -- whole loops with the SDK clients ------------------------------------------------------------------------


def test_openai_chat_completions_loop(runtime):
    with fakes.fake_provider() as fake:
        client = openai.OpenAI(base_url=f"{fake.url}/v1", api_key="test", max_retries=0, timeout=30)
        messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
        tools = runtime.get_tool_definitions(strict=True)
        while True:
            message = client.chat.completions.create(model="m", messages=messages, tools=tools).choices[0].message
            messages.append(message)
            if not message.tool_calls:
                break
            messages += runtime.answer_tool_calls(message.tool_calls)

        first, second = fake.bodies("/chat/completions")
    assert first["tools"][0]["function"]["strict"] is True
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_1",
                                      "content": get_weather({"city": "Paris"})}
    assert message.content == "Tool results: " + get_weather({"city": "Paris"})


def test_openai_responses_loop(runtime):
    with fakes.fake_provider() as fake:
        client = openai.OpenAI(base_url=f"{fake.url}/v1", api_key="test", max_retries=0, timeout=30)
        items: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
        tools = runtime.get_tool_definitions(format="openai-responses")
        while True:
            response = client.responses.create(model="m", input=items, tools=tools)
            items += response.output
            calls = [item for item in response.output if item.type == "function_call"]
            if not calls:
                break
            items += runtime.answer_tool_calls(calls)

        first, second = fake.bodies("/responses")
    assert first["tools"][0] == {"type": "function", "name": "get_weather", "description": WEATHER["description"],
                                 "parameters": WEATHER["parameters"], "strict": False}
    assert second["input"][-1] == {"type": "function_call_output", "call_id": "call_1",
                                   "output": get_weather({"city": "Paris"})}
    assert response.output_text.endswith('"unit": "celsius"}')


def test_anthropic_loop(runtime):
    with fakes.fake_provider() as fake:
        client = anthropic.Anthropic(base_url=fake.url, api_key="test", max_retries=0, timeout=30)
        messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
        tools = runtime.get_tool_definitions(format="anthropic")
        while True:
            response = client.messages.create(model="m", max_tokens=100, tools=tools, messages=messages)
            messages.append({"role": "assistant", "content": response.content})
            calls = [block for block in response.content if block.type == "tool_use"]
            if not calls:
                break
            messages.append({"role": "user", "content": runtime.answer_tool_calls(calls)})

        first, second = fake.bodies("/messages")
    assert first["tools"] == [{"name": "get_weather", "description": WEATHER["description"],
                               "input_schema": WEATHER["parameters"]}]
    assert second["messages"][-1]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                  "content": get_weather({"city": "Paris"}), "is_error": False}]
    assert response.content[0].text.startswith("Tool results: ")


@pytest.mark.parametrize("gemini_ids", [False, True], ids=["without-ids", "with-ids"])
def test_gemini_loop(runtime, gemini_ids):
    with fakes.fake_provider(gemini_ids=gemini_ids) as fake:
        client = genai.Client(api_key="test", http_options=gemini.HttpOptions(base_url=fake.url, timeout=30_000))
        config = gemini.GenerateContentConfig(tools=[gemini.Tool(
            function_declarations=runtime.get_tool_definitions(format="gemini"))])
        contents: list[Any] = [gemini.Content(role="user", parts=[gemini.Part(text="Weather in Paris?")])]
        while True:
            response = client.models.generate_content(model="m", contents=contents, config=config)
            if not response.function_calls:
                break
            contents.append(response.candidates[0].content)
            contents.append(gemini.Content(role="user", parts=runtime.answer_tool_calls(response.function_calls)))

        first, second = fake.bodies(":generateContent")
    [declaration] = first["tools"][0]["functionDeclarations"]
    assert declaration["name"] == "get_weather" and declaration["parameters_json_schema"] == WEATHER["parameters"]
    [part] = second["contents"][-1]["parts"]
    assert part["functionResponse"]["response"] == json.loads(get_weather({"city": "Paris"}))
    assert ("id" in part["functionResponse"]) is gemini_ids
    assert response.text.startswith("Tool results: ")
