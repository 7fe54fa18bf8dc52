"""LangGraph agents (real ``create_agent`` graph, real tools; the chat model is scripted) -> real AI SDK client."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessageChunk
from langchain_core.tools import ToolException, tool

from agents_a365.tooling.extensions.langchain.ui_stream import (
    LangChainUIStreamConverter,
    stream_langgraph,
    stream_langgraph_agent,
)
from agents_a365.tooling.ui_stream import DEFAULT_ERROR_TEXT
from support.scripted_langchain import ScriptedChatModel, ScriptError, reasoning, text, tool_call
from support.ui_client import Validate, assert_clean, summarize

USER = [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "What is the weather?"}]}]


@tool
async def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    await asyncio.sleep(0)
    return {"city": city, "temperature": 21}


@tool
async def get_time(zone: str) -> str:
    """Current time in a time zone."""
    return f"12:00 in {zone}"


@tool
async def flaky_lookup(query: str) -> str:
    """A lookup whose backend is down."""
    raise ToolException(f"backend unavailable for {query!r}")


flaky_lookup.handle_tool_error = True


@tool
async def exploding(query: str) -> str:
    """A tool with a bug (the error is not handled by the tool)."""
    raise RuntimeError("boom in tool")


async def collect(frames: Any) -> str:
    return "".join([frame async for frame in frames])


async def run_agent(turns: list[list[Any]], tools: list[Any] | None = None, **kwargs: Any) -> str:
    agent = create_agent(ScriptedChatModel(script=turns), tools=tools or [get_weather, get_time])
    return await collect(stream_langgraph_agent(agent, USER, **kwargs))


async def test_plain_text(validate: Validate) -> None:
    sse = await run_agent([text("Hello", ", ", "world")])
    result = (await validate({"s": sse}))["s"]
    assert summarize(assert_clean(result)) == ["step", ("text", "Hello, world")]
    assert result["chunkTypes"] == [
        "start", "start-step", "text-start", "text-delta", "text-delta", "text-delta", "text-end",
        "finish-step", "finish",
    ]  # fmt: skip
    assert '"finishReason":"stop"' in sse


async def test_reasoning_then_text(validate: Validate) -> None:
    sse = await run_agent([reasoning("The user ", "wants weather.") + text("Let me ", "think.")])
    message = assert_clean((await validate({"s": sse}))["s"])
    assert summarize(message) == ["step", ("reasoning", "The user wants weather."), ("text", "Let me think.")]


async def test_one_tool_call(validate: Validate) -> None:
    sse = await run_agent(
        [
            text("Checking.") + tool_call(0, "call_w", "get_weather", '{"ci', 'ty": "Pa', 'ris"}'),
            text("It is 21 degrees."),
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
    # The JSON text of the ToolMessage is sent as JSON, and the id is the provider's id everywhere.
    assert sse.count('"toolCallId":"call_w"') == 6  # start, 3 deltas, input-available, output-available


async def test_parallel_tool_calls_interleaved(validate: Validate) -> None:
    a = tool_call(0, "call_a", "get_weather", '{"city":', ' "Oslo"}')
    b = tool_call(1, "call_b", "get_time", '{"zone":', ' "UTC"}')
    interleaved = [a[0], b[0], a[1], b[1], a[2], b[2]]  # chunks correlate by index, not by order
    sse = await run_agent([interleaved, text("Done.")])
    message = assert_clean((await validate({"s": sse}))["s"])
    assert summarize(message) == [
        "step",
        ("tool", "get_weather", "output-available", {"city": "Oslo"}, {"city": "Oslo", "temperature": 21}),
        ("tool", "get_time", "output-available", {"zone": "UTC"}, "12:00 in UTC"),
        "step",
        ("text", "Done."),
    ]


async def test_tool_error(validate: Validate) -> None:
    sse = await run_agent(
        [tool_call(0, "call_f", "flaky_lookup", '{"query": "x"}'), text("The lookup failed.")],
        tools=[flaky_lookup],
    )
    message = assert_clean((await validate({"s": sse}))["s"])
    assert summarize(message) == [
        "step",
        ("tool", "flaky_lookup", "output-error", {"query": "x"}, "backend unavailable for 'x'"),
        "step",
        ("text", "The lookup failed."),
    ]


async def test_invalid_json_arguments_are_a_tool_input_error(validate: Validate) -> None:
    """LangChain does not run a call whose arguments do not parse: the part ends in ``output-error``."""
    sse = await run_agent([text("Calling.") + tool_call(0, "call_bad", "get_weather", '{"city": Paris}')])
    result = (await validate({"s": sse}))["s"]
    message = assert_clean(result)
    assert "tool-input-error" in result["chunkTypes"]
    [part] = [p for p in message["parts"] if p["type"] == "tool-get_weather"]
    assert part["state"] == "output-error"
    assert part["rawInput"] == '{"city": Paris}'
    assert "Invalid JSON" in part["errorText"]


async def test_model_exception_mid_run(validate: Validate) -> None:
    sse = await run_agent([[*text("Partial ", "answer"), ScriptError("provider exploded: key=sk-secret")]])
    result = (await validate({"s": sse}))["s"]
    message = assert_clean(result)
    assert summarize(message) == ["step", ("text", "Partial answer")]
    assert result["errorChunks"] == [DEFAULT_ERROR_TEXT]  # masked: exception text can carry secrets
    assert "sk-secret" not in sse
    assert '"finishReason":"error"' in sse
    assert result["chunkTypes"][-3:] == ["error", "finish-step", "finish"]


async def test_tool_exception_mid_run_fails_the_open_tool_part(validate: Validate) -> None:
    sse = await run_agent(
        [tool_call(0, "call_x", "exploding", '{"query": "q"}')], tools=[exploding], on_error=lambda e: str(e)
    )
    result = (await validate({"s": sse}))["s"]
    message = assert_clean(result)
    assert result["errorChunks"] == ["boom in tool"]
    [part] = [p for p in message["parts"] if p["type"] == "tool-exploding"]
    assert part["state"] == "output-error"
    assert part["input"] == {"query": "q"}


@pytest.mark.parametrize("shape", ["messages+updates", "messages", "updates", "events", "subgraphs"])
async def test_every_stream_shape_gives_the_same_message(validate: Validate, shape: str) -> None:
    turns = [
        reasoning("Need weather.") + tool_call(0, "call_w", "get_weather", '{"city": "Rome"}'),
        text("Sunny."),
    ]
    agent = create_agent(ScriptedChatModel(script=turns), tools=[get_weather])
    inputs = {"messages": [{"role": "user", "content": "Weather in Rome?"}]}
    if shape == "messages+updates":
        stream = agent.astream(inputs, stream_mode=["messages", "updates"])
    elif shape == "messages":
        stream = agent.astream(inputs, stream_mode="messages")
    elif shape == "updates":
        stream = agent.astream(inputs, stream_mode="updates")
    elif shape == "subgraphs":
        stream = agent.astream(inputs, stream_mode=["messages", "updates"], subgraphs=True)
    else:
        stream = agent.astream_events(inputs, version="v2")
    message = assert_clean((await validate({"s": await collect(stream_langgraph(stream))}))["s"])
    assert summarize(message) == [
        "step",
        ("reasoning", "Need weather."),
        ("tool", "get_weather", "output-available", {"city": "Rome"}, {"city": "Rome", "temperature": 21}),
        "step",
        ("text", "Sunny."),
    ]


async def test_tool_call_without_id_on_first_chunk_gets_one_stable_id() -> None:
    """Some providers send the id late: pieces are buffered until id and name are known."""

    async def chunks() -> Any:
        yield AIMessageChunk(
            content="", id="m1", tool_call_chunks=[{"index": 0, "args": '{"a"', "id": None, "name": None}]
        )
        yield AIMessageChunk(
            content="", id="m1", tool_call_chunks=[{"index": 0, "args": ": 1}", "id": "c9", "name": "f"}]
        )
        yield AIMessageChunk(content="", id="m1", chunk_position="last")

    converter = LangChainUIStreamConverter()
    out = [chunk async for chunk in converter.chunks(chunks())]
    tool_chunks = [c for c in out if c["type"].startswith("tool-")]
    assert tool_chunks[0] == {"type": "tool-input-start", "toolCallId": "c9", "toolName": "f"}
    assert tool_chunks[1] == {"type": "tool-input-delta", "toolCallId": "c9", "inputTextDelta": '{"a": 1}'}
    assert tool_chunks[2]["input"] == {"a": 1}


async def test_a_model_inside_a_tool_is_hidden_by_langgraphs_nostream_tag(validate: Validate) -> None:
    """LangGraph's own ``nostream`` tag keeps a model called inside a tool out of the UI stream."""
    inner = ScriptedChatModel(script=[text("inner ", "draft")])

    @tool
    async def brief(topic: str) -> str:
        """Summarize a topic with a second model."""
        draft = await inner.with_config(tags=["nostream"]).ainvoke(topic)
        return f"summary of {topic} ({len(draft.text)} characters)"

    sse = await run_agent([tool_call(0, "call_b", "brief", '{"topic": "x"}'), text("Done.")], tools=[brief])
    message = assert_clean((await validate({"s": sse}))["s"])
    assert summarize(message) == [
        "step",
        ("tool", "brief", "output-available", {"topic": "x"}, "summary of x (11 characters)"),
        "step",
        ("text", "Done."),
    ]
    assert "inner" not in sse


async def test_text_and_reasoning_in_every_provider_format(validate: Validate) -> None:
    """Text blocks, Anthropic ``thinking``, OpenAI reasoning summaries and ``reasoning_content`` kwargs."""

    async def chunks() -> Any:
        yield AIMessageChunk(content="", id="m", additional_kwargs={"reasoning_content": "Plan. "})
        yield AIMessageChunk(content=[{"type": "thinking", "thinking": "Think. "}], id="m")
        yield AIMessageChunk(content=[{"type": "reasoning", "summary": [{"text": "Sum."}, "odd"]}], id="m")
        yield AIMessageChunk(content=[{"type": "text", "text": "Hi"}, {"type": "text", "text": None}], id="m")
        yield AIMessageChunk(content=["!"], id="m", chunk_position="last")

    sse = await collect(LangChainUIStreamConverter().frames(chunks()))
    message = assert_clean((await validate({"s": sse}))["s"])
    assert summarize(message) == ["step", ("reasoning", "Plan. Think. Sum."), ("text", "Hi!")]
