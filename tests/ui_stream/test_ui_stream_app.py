"""The example app over real HTTP (uvicorn on 127.0.0.1): headers, useChat bodies, history, disconnects."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from agents import Agent, function_tool
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from ui_stream_app.__main__ import build_app
from ui_stream_app.app import create_langchain_app, create_openai_app

from support.scripted_langchain import ScriptedChatModel, text, tool_call
from support.scripted_openai import ScriptedResponsesModel, Turn
from support.ui_client import Validate, assert_clean, summarize
from support.ui_server import serve

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
        script=[
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
    history = model.seen[2]
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
    model = ScriptedChatModel(script=[])
    app = create_langchain_app(create_agent(model, tools=[]))
    async with serve(app) as base_url, httpx.AsyncClient(timeout=TIMEOUT) as client:
        response = await client.post(f"{base_url}/agent/stream", content=body)
    assert response.status_code == 400
    assert model.seen == []


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

    model = ScriptedChatModel(script=[tool_call(0, "call_s", "slow_report", '{"topic": "x"}'), text("never")])
    app = create_langchain_app(create_agent(model, tools=[slow_report]))
    async with serve(app) as base_url:
        await _disconnect_mid_tool(base_url, started)
        await asyncio.wait_for(cancelled.wait(), 10)
    assert len(model.seen) == 1  # the model was not called again after the disconnect


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


# -- running as shipped: scripted model without a key, CORS, keep-alive ------------------------------------


@pytest.mark.parametrize("orchestrator", ["langchain", "openai"])
async def test_the_example_runs_without_a_model_key(orchestrator: str, validate: Validate) -> None:
    app = build_app(orchestrator, real_model=False)
    async with serve(app) as base_url:
        _, sse = await post_stream(base_url, chat_body([user("Weather in Oslo?", "u1")]))
        page = await _get(f"{base_url}/")
    summary = summarize(assert_clean((await validate({"s": sse}))["s"]))
    output = {"city": "Oslo", "forecast": "sunny", "temperature": 21}
    assert ("tool", "get_weather", "output-available", {"city": "Oslo"}, output) in summary
    assert ("reasoning", "The user asks about Oslo; I will call get_weather.") in summary
    assert summary[-1] == ("text", "It is sunny and 21 °C in Oslo.")
    assert f'data-orchestrator="{orchestrator}"' in page.text


async def _get(url: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:
        return await client.get(url)


async def test_the_scripted_model_failure_reaches_the_client_as_an_error_chunk(validate: Validate) -> None:
    async with serve(build_app("langchain", real_model=False)) as base_url:
        _, sse = await post_stream(base_url, chat_body([user("please fail", "u1")]))
    result = (await validate({"s": sse}))["s"]
    assert "error" in result["chunkTypes"]


async def test_cors_preflight_is_answered_for_configured_origins_only() -> None:
    app = create_langchain_app(
        create_agent(ScriptedChatModel(script=[]), tools=[]),
        app_options={"cors_origins": ["http://localhost:3000"]},
    )
    preflight = {"access-control-request-method": "POST", "access-control-request-headers": "content-type"}
    async with serve(app) as base_url, httpx.AsyncClient(timeout=TIMEOUT) as client:
        allowed = await client.options(
            f"{base_url}/agent/stream", headers={"origin": "http://localhost:3000", **preflight}
        )
        refused = await client.options(
            f"{base_url}/agent/stream", headers={"origin": "http://evil.example", **preflight}
        )
        bad = await client.post(
            f"{base_url}/agent/stream", content=b"{}", headers={"origin": "http://localhost:3000"}
        )
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "http://localhost:3000"
    assert "POST" in allowed.headers["access-control-allow-methods"]
    assert "content-type" in allowed.headers["access-control-allow-headers"].lower()
    assert refused.status_code == 400
    assert "access-control-allow-origin" not in refused.headers
    # The actual (cross-origin) response carries the header too, so the browser lets the page read it.
    assert bad.headers["access-control-allow-origin"] == "http://localhost:3000"


async def test_keep_alive_comments_flow_while_a_tool_runs(validate: Validate) -> None:
    """A tool that waits until the client has seen keep-alives: no sleeping for time to pass."""
    release = asyncio.Event()

    @tool
    async def long_lookup(topic: str) -> str:
        """Takes a while."""
        await asyncio.wait_for(release.wait(), 10)
        return "found"

    model = ScriptedChatModel(
        script=[tool_call(0, "call_l", "long_lookup", '{"topic": "x"}'), text("Found it.")]
    )
    app = create_langchain_app(
        create_agent(model, tools=[long_lookup]), app_options={"keepalive_interval": 0.01}
    )
    lines: list[str] = []
    async with (
        serve(app) as base_url,
        httpx.AsyncClient(timeout=TIMEOUT) as client,
        client.stream("POST", f"{base_url}/agent/stream", json=chat_body([user("Look", "u1")])) as response,
    ):
        keepalives_during_tool = 0
        async for line in response.aiter_lines():
            lines.append(line)
            if (
                line == ": keep-alive"
                and not release.is_set()
                and any("tool-input-available" in x for x in lines)
            ):
                keepalives_during_tool += 1
                if keepalives_during_tool == 3:
                    release.set()
    assert keepalives_during_tool >= 3
    sse = "\n".join(lines) + "\n"
    summary = summarize(assert_clean((await validate({"s": sse}))["s"]))  # the real parser ignores them
    assert ("tool", "long_lookup", "output-available", {"topic": "x"}, "found") in summary
    assert summary[-1] == ("text", "Found it.")


def test_keep_alive_interval_must_be_positive() -> None:
    with pytest.raises(ValueError, match="keepalive_interval"):
        create_langchain_app(
            create_agent(ScriptedChatModel(script=[]), tools=[]), app_options={"keepalive_interval": 0}
        )
