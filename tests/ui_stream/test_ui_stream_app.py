"""The example app over real HTTP (uvicorn on 127.0.0.1): headers, useChat bodies, history, disconnects."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from _client import Validate, assert_clean, summarize
from _scripted_langchain import ScriptedChatModel, text, tool_call
from _scripted_openai import ScriptedResponsesModel, Turn
from _server import serve
from agents import Agent, function_tool
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from ui_stream_app.app import create_langchain_app, create_openai_app

TIMEOUT = httpx.Timeout(30.0)


def chat_body(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """What ``DefaultChatTransport`` posts for ``sendMessage``."""
    return {"id": "chat-1", "messages": messages, "trigger": "submit-message", "messageId": None}


def user(text_: str, id_: str) -> dict[str, Any]:
    return {"id": id_, "role": "user", "parts": [{"type": "text", "text": text_}]}


@tool
async def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    return {"city": city, "temperature": 21}


async def post_stream(base_url: str, body: dict[str, Any]) -> tuple[httpx.Headers, str]:
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:
        response = await client.post(f"{base_url}/agent/stream", json=body)
        assert response.status_code == 200, response.text
        return response.headers, response.text


async def test_langchain_endpoint_and_history_round_trip(validate: Validate) -> None:
    model = ScriptedChatModel(
        turns=[
            text("Checking.") + tool_call(0, "call_w", "get_weather", '{"city": "Paris"}'),
            text("21 degrees in Paris."),
            text("You asked about Paris."),
        ]
    )
    app = create_langchain_app(create_agent(model, tools=[get_weather]))
    async with serve(app) as base_url:
        headers, sse = await post_stream(base_url, chat_body([user("Weather in Paris?", "u1")]))
        assert headers["content-type"] == "text/event-stream"
        assert headers["x-vercel-ai-ui-message-stream"] == "v1"
        assistant = assert_clean((await validate({"s": sse}))["s"])

        # Second turn: useChat sends the whole chat back, including the assistant message it assembled.
        _, sse2 = await post_stream(
            base_url, chat_body([user("Weather in Paris?", "u1"), assistant, user("What did I ask?", "u2")])
        )
    assert summarize(assert_clean((await validate({"s": sse2}))["s"])) == [
        "step",
        ("text", "You asked about Paris."),
    ]
    history = model.seen_inputs[2]
    assert [type(m) for m in history] == [HumanMessage, AIMessage, ToolMessage, AIMessage, HumanMessage]
    assert history[1].tool_calls[0]["id"] == "call_w"
    assert history[1].tool_calls[0]["args"] == {"city": "Paris"}
    assert json.loads(history[2].content) == {"city": "Paris", "temperature": 21}
    assert history[2].tool_call_id == "call_w"
    assert history[3].content == "21 degrees in Paris."


async def test_openai_endpoint_and_history_round_trip(validate: Validate) -> None:
    @function_tool
    async def get_time(zone: str) -> str:
        """Current time in a time zone."""
        return f"12:00 in {zone}"

    model = ScriptedResponsesModel(
        [
            Turn().reasoning("Time zone lookup.").call("call_t", "get_time", '{"zone": "UTC"}'),
            Turn().text("It is noon."),
            Turn().text("You asked for the time."),
        ]
    )
    app = create_openai_app(Agent(name="assistant", model=model, tools=[get_time]))
    async with serve(app) as base_url:
        headers, sse = await post_stream(base_url, chat_body([user("Time?", "u1")]))
        assert headers["x-vercel-ai-ui-message-stream"] == "v1"
        assistant = assert_clean((await validate({"s": sse}))["s"])
        assert summarize(assistant)[1:3] == [
            ("reasoning", "Time zone lookup."),
            ("tool", "get_time", "output-available", {"zone": "UTC"}, "12:00 in UTC"),
        ]
        _, sse2 = await post_stream(
            base_url, chat_body([user("Time?", "u1"), assistant, user("Again?", "u2")])
        )
    assert_clean((await validate({"s": sse2}))["s"])
    replayed = model.inputs[2]
    kinds = [item.get("type", item.get("role")) for item in replayed]
    assert kinds == ["user", "function_call", "function_call_output", "assistant", "user"]
    assert replayed[1]["call_id"] == replayed[2]["call_id"] == "call_t"
    assert replayed[2]["output"] == "12:00 in UTC"


@pytest.mark.parametrize(
    "body",
    [b"not json", b'{"messages": "nope"}', b'{"messages": []}', json.dumps(chat_body([])).encode()],
)
async def test_bad_requests_are_rejected_before_any_run(body: bytes) -> None:
    model = ScriptedChatModel(turns=[])
    app = create_langchain_app(create_agent(model, tools=[]))
    async with serve(app) as base_url, httpx.AsyncClient(timeout=TIMEOUT) as client:
        response = await client.post(f"{base_url}/agent/stream", content=body)
    assert response.status_code == 400
    assert model.seen_inputs == []


async def _disconnect_mid_tool(base_url: str, tool_started: asyncio.Event) -> None:
    async with (
        httpx.AsyncClient(timeout=TIMEOUT) as client,
        client.stream(
            "POST", f"{base_url}/agent/stream", json=chat_body([user("Slow please", "u1")])
        ) as response,
    ):
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if '"tool-input-available"' in line:
                break
        await asyncio.wait_for(tool_started.wait(), 10)
    # Leaving the block closes the connection while the tool is still running.


async def test_client_disconnect_cancels_the_langgraph_run() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    @tool
    async def slow_report(topic: str) -> str:
        """Takes long."""
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "done"

    model = ScriptedChatModel(turns=[tool_call(0, "call_s", "slow_report", '{"topic": "x"}'), text("never")])
    app = create_langchain_app(create_agent(model, tools=[slow_report]))
    async with serve(app) as base_url:
        await _disconnect_mid_tool(base_url, started)
        await asyncio.wait_for(cancelled.wait(), 10)
    assert len(model.seen_inputs) == 1  # the model was not called again after the disconnect


async def test_client_disconnect_cancels_the_openai_run() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    @function_tool
    async def slow_report(topic: str) -> str:
        """Takes long."""
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "done"

    model = ScriptedResponsesModel(
        [Turn().call("call_s", "slow_report", '{"topic": "x"}'), Turn().text("never")]
    )
    app = create_openai_app(Agent(name="assistant", model=model, tools=[slow_report]))
    async with serve(app) as base_url:
        await _disconnect_mid_tool(base_url, started)
        await asyncio.wait_for(cancelled.wait(), 10)
    assert model.calls == 1
