"""OpenAI Agents SDK (real ``Runner.run_streamed`` and tools; the Responses model is scripted) -> real client."""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Agent, Runner, function_tool

from agents_a365.tooling.extensions.openai.ui_stream import (
    OpenAIUIStreamConverter,
    stream_openai_agent,
    stream_openai_run,
    ui_tool_error_function,
)
from agents_a365.tooling.ui_stream import DEFAULT_ERROR_TEXT
from support.scripted_openai import ScriptedResponsesModel, Turn
from support.ui_client import Validate, assert_clean, summarize

USER = [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "What is the weather?"}]}]


@function_tool
async def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    await asyncio.sleep(0)
    return {"city": city, "temperature": 21}


@function_tool
async def get_time(zone: str) -> str:
    """Current time in a time zone."""
    return f"12:00 in {zone}"


@function_tool(failure_error_function=ui_tool_error_function)
async def flaky_lookup(query: str) -> str:
    """A lookup whose backend is down."""
    raise ConnectionError("backend unavailable, password=hunter2")


@function_tool
async def default_failing(query: str) -> str:
    """Fails; the SDK's default failure function reports it to the model."""
    raise ConnectionError("down")


@function_tool(failure_error_function=None)
async def exploding(query: str) -> str:
    """A bug that aborts the run (no failure function)."""
    raise RuntimeError("boom in tool")


def agent_for(turns: list[Turn], tools: list[Any] | None = None) -> tuple[Agent[Any], ScriptedResponsesModel]:
    model = ScriptedResponsesModel(turns)
    return Agent(name="assistant", model=model, tools=tools or [get_weather, get_time]), model


async def run_agent(turns: list[Turn], tools: list[Any] | None = None, **kwargs: Any) -> str:
    agent, _ = agent_for(turns, tools)
    return "".join([frame async for frame in stream_openai_agent(agent, USER, **kwargs)])


async def test_plain_text(validate: Validate) -> None:
    sse = await run_agent([Turn().text("Hello", ", ", "world")])
    result = (await validate({"s": sse}))["s"]
    assert summarize(assert_clean(result)) == ["step", ("text", "Hello, world")]
    assert '"finishReason":"stop"' in sse


async def test_reasoning_then_text(validate: Validate) -> None:
    sse = await run_agent([Turn().reasoning("The user ", "wants weather.").text("Let me ", "think.")])
    message = assert_clean((await validate({"s": sse}))["s"])
    assert summarize(message) == ["step", ("reasoning", "The user wants weather."), ("text", "Let me think.")]


async def test_one_tool_call(validate: Validate) -> None:
    sse = await run_agent(
        [
            Turn().text("Checking.").call("call_w", "get_weather", '{"ci', 'ty": "Pa', 'ris"}'),
            Turn().text("It is 21 degrees."),
        ]
    )
    message = assert_clean((await validate({"s": sse}))["s"])
    assert summarize(message) == [
        "step",
        ("text", "Checking."),
        ("tool", "get_weather", "output-available", {"city": "Paris"}, {"city": "Paris", "temperature": 21}),
        "step",
        ("text", "It is 21 degrees."),
    ]


async def test_parallel_tool_calls(validate: Validate) -> None:
    sse = await run_agent(
        [
            Turn()
            .call("call_a", "get_weather", '{"city":', ' "Oslo"}')
            .call("call_b", "get_time", '{"zone": "UTC"}'),
            Turn().text("Done."),
        ]
    )
    message = assert_clean((await validate({"s": sse}))["s"])
    assert summarize(message) == [
        "step",
        ("tool", "get_weather", "output-available", {"city": "Oslo"}, {"city": "Oslo", "temperature": 21}),
        ("tool", "get_time", "output-available", {"zone": "UTC"}, "12:00 in UTC"),
        "step",
        ("text", "Done."),
    ]


async def test_tool_errors(validate: Validate) -> None:
    sse = await run_agent(
        [
            Turn()
            .call("call_f", "flaky_lookup", '{"query": "x"}')
            .call("call_d", "default_failing", '{"query": "y"}'),
            Turn().text("The lookups failed."),
        ],
        tools=[flaky_lookup, default_failing],
    )
    message = assert_clean((await validate({"s": sse}))["s"])
    generic = "An error occurred while running the tool. Please try again."
    assert summarize(message) == [
        "step",
        ("tool", "flaky_lookup", "output-error", {"query": "x"}, generic),
        ("tool", "default_failing", "output-error", {"query": "y"}, generic),
        "step",
        ("text", "The lookups failed."),
    ]
    assert "hunter2" not in sse


async def test_invalid_json_arguments(validate: Validate) -> None:
    sse = await run_agent([Turn().call("call_bad", "get_weather", '{"city": Paris}'), Turn().text("Sorry.")])
    result = (await validate({"s": sse}))["s"]
    message = assert_clean(result)
    assert "tool-input-error" in result["chunkTypes"]
    [part] = [p for p in message["parts"] if p["type"] == "tool-get_weather"]
    assert part["state"] == "output-error"
    assert part["rawInput"] == '{"city": Paris}'


async def test_model_exception_mid_run(validate: Validate) -> None:
    sse = await run_agent(
        [Turn().text("Partial ", "answer").fail(RuntimeError("provider exploded: key=sk-secret"))]
    )
    result = (await validate({"s": sse}))["s"]
    message = assert_clean(result)
    assert ("text", "Partial answer") in summarize(message)
    assert result["errorChunks"] == [DEFAULT_ERROR_TEXT]
    assert "sk-secret" not in sse
    assert result["chunkTypes"][-3:] == ["error", "finish-step", "finish"]
    assert '"finishReason":"error"' in sse


async def test_tool_exception_mid_run_fails_the_open_tool_part(validate: Validate) -> None:
    sse = await run_agent(
        [Turn().call("call_x", "exploding", '{"query": "q"}'), Turn().text("unreachable")],
        tools=[exploding],
        on_error=lambda e: type(e).__name__,
    )
    result = (await validate({"s": sse}))["s"]
    message = assert_clean(result)
    assert len(result["errorChunks"]) == 1
    [part] = [p for p in message["parts"] if p["type"] == "tool-exploding"]
    assert part["state"] == "output-error"
    assert part["input"] == {"query": "q"}


async def test_stream_openai_run_on_a_started_run(validate: Validate) -> None:
    agent, model = agent_for([Turn().text("Hi")])
    result = Runner.run_streamed(agent, "hello")
    sse = "".join([f async for f in stream_openai_run(result, message_id="msg_fixed")])
    message = assert_clean((await validate({"s": sse}))["s"])
    assert message["id"] == "msg_fixed"
    assert model.inputs == ["hello"] or model.inputs[0][0]["content"] == "hello"


async def test_converter_runs_on_a_synthetic_event_stream() -> None:
    """Benchmarks drive the converter directly; no run needed."""
    from agents import RawResponsesStreamEvent
    from openai.types.responses import ResponseTextDeltaEvent

    async def events() -> Any:
        for i in range(3):
            yield RawResponsesStreamEvent(
                data=ResponseTextDeltaEvent(
                    type="response.output_text.delta", item_id="m", output_index=0, content_index=0,
                    delta=str(i), logprobs=[], sequence_number=i,
                )
            )  # fmt: skip

    chunks = [c async for c in OpenAIUIStreamConverter().chunks(events())]
    assert [c["type"] for c in chunks] == [
        "start", "start-step", "text-start", "text-delta", "text-delta", "text-delta", "text-end",
        "finish-step", "finish",
    ]  # fmt: skip


async def test_run_items_announce_a_call_the_model_stream_did_not_show(validate: Validate) -> None:
    """A model whose stream carries no output items: the ``tool_called`` run item announces the call."""
    from agents import RunItemStreamEvent, ToolCallItem, ToolCallOutputItem
    from openai.types.responses import ResponseFunctionToolCall

    agent = Agent(name="assistant")
    call = ResponseFunctionToolCall(
        type="function_call", call_id="call_w", name="get_weather", arguments='{"city": "Oslo"}'
    )
    output = {"type": "function_call_output", "call_id": "call_w", "output": '{"t": 3}'}

    async def events() -> Any:
        yield RunItemStreamEvent(name="tool_called", item=ToolCallItem(agent=agent, raw_item=call))
        yield RunItemStreamEvent(
            name="tool_output",
            item=ToolCallOutputItem(agent=agent, raw_item=output, output='{"t": 3}'),  # type: ignore[arg-type]
        )

    sse = "".join([f async for f in OpenAIUIStreamConverter().frames(events())])
    message = assert_clean((await validate({"s": sse}))["s"])
    assert summarize(message) == [
        "step",
        ("tool", "get_weather", "output-available", {"city": "Oslo"}, {"t": 3}),
    ]
