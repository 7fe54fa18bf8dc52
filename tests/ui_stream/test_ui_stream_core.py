"""The orchestrator-neutral core: framing, the part state machine, bounded memory, request conversion."""

from __future__ import annotations

import datetime
import json
import logging
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel

from agents_a365.tooling.extensions.langchain.ui_stream import (
    LangChainUIStreamConverter,
    ui_messages_to_langchain,
)
from agents_a365.tooling.extensions.openai.ui_stream import ui_messages_to_openai_input
from agents_a365.tooling.ui_stream import (
    DEFAULT_ERROR_TEXT,
    SSE_DONE,
    UIMessageStreamState,
    UIStreamConverter,
    encode_sse,
    json_text,
    ui_message_stream_response,
)
from support.ui_client import Validate, assert_clean, summarize


def test_sse_frame_is_one_data_line_even_with_newlines() -> None:
    frame = encode_sse({"type": "text-delta", "id": "t", "delta": "line 1\nline 2\r\n\u2028é"})
    assert frame.startswith("data: ")
    assert frame.endswith("\n\n")
    assert frame.count("\n") == 2
    assert json.loads(frame[len("data: ") :])["delta"] == "line 1\nline 2\r\n\u2028é"
    assert SSE_DONE == "data: [DONE]\n\n"


def test_values_json_cannot_encode_never_break_a_frame() -> None:
    """Tool outputs are whatever a tool returned: models, dataclasses, sets, bytes, arbitrary objects."""

    class Weather(BaseModel):
        city: str
        tags: set[str]

    @dataclass
    class Reading:
        at: datetime.date

    class Opaque:
        def __str__(self) -> str:
            return "opaque"

    output = [Weather(city="Oslo", tags={"cold"}), Reading(datetime.date(2026, 1, 2)), b"\xff\x00", Opaque()]
    frame = encode_sse({"type": "tool-output-available", "toolCallId": "c", "output": output})
    assert json.loads(frame[len("data: ") :])["output"] == [
        {"city": "Oslo", "tags": ["cold"]},
        {"at": "2026-01-02"},
        "_wA=",  # bytes as (URL-safe) base64: lossless, whatever they hold
        "opaque",
    ]
    assert json_text({"o": Opaque()}) == '{"o": "opaque"}'


async def test_state_machine_only_emits_chunks_the_real_client_accepts(validate: Validate) -> None:
    state = UIMessageStreamState("m")
    state.delta("reasoning", "r")
    state.delta("text", "t")
    state.tool_input_chunk(0, tool_call_id="c", tool_name="f", delta='{"a":')
    state.tool_input_chunk(0, delta="1}")
    state.tool_result("c", '{"ok": true}')
    state.tool_call("d", "g", "not json")
    state.error("x")
    state.finish()
    chunks = state.drain()
    result = (await validate({"s": "".join(map(encode_sse, chunks)) + SSE_DONE}))["s"]
    assert_clean(result)  # the client's closed ``uiMessageChunkSchema`` and its state machine
    assert next(c for c in chunks if c["type"] == "tool-output-available")["output"] == {"ok": True}
    assert next(c for c in chunks if c["type"] == "tool-input-error")["input"] == "not json"
    assert chunks[-1] == {"type": "finish", "finishReason": "error"}


def test_output_for_an_unannounced_call_announces_it_and_duplicates_are_dropped() -> None:
    state = UIMessageStreamState("m")
    state.tool_result("late", "plain text", tool_name="search")
    state.tool_result("late", "plain text", tool_name="search")  # e.g. ``messages`` and ``updates`` mode
    types = [c["type"] for c in state.drain()]
    assert types == [
        "start",
        "start-step",
        "tool-input-start",
        "tool-input-available",
        "tool-output-available",
    ]


def test_finish_reason_is_tool_calls_only_when_the_last_step_holds_a_tool_call() -> None:
    def finish_reason(*steps: list[str]) -> str:
        state = UIMessageStreamState("m")
        for number, step in enumerate(steps):
            state.model_message(f"r{number}")
            for call_id in step:
                state.tool_call(call_id, "f", "{}")
                state.tool_result(call_id, "ok")
            state.delta("text", "answer")
        state.finish()
        return str(state.drain()[-1]["finishReason"])

    assert finish_reason(["a"]) == "tool-calls"  # e.g. the run stopped after the tools ran
    assert finish_reason(["a", "b"], []) == "stop"
    assert finish_reason([]) == "stop"


async def test_twenty_thousand_text_chunks_keep_the_buffers_empty(validate: Validate) -> None:
    """Per-chunk work is constant and nothing accumulates: only open tool-call buffers hold data."""
    converter = LangChainUIStreamConverter()
    peaks: dict[str, int] = {}

    async def tokens() -> Any:
        for i in range(20_000):
            yield (AIMessageChunk(content=f"{i % 10}", id="run-1"), {"langgraph_node": "model"})
            for key, value in converter.state.buffer_sizes.items():
                peaks[key] = max(peaks.get(key, 0), value)

    frames = [frame async for frame in converter.frames(tokens())]
    assert peaks == {
        "tool_inputs": 0,
        "tool_input_pieces": 0,
        "awaiting_outputs": 0,
        "step_seen": 0,  # a text-only stream holds no id at all
        "pending_chunks": 0,
    }
    assert (
        len(frames) == 20_000 + 7
    )  # start, start-step, text-start ... text-end, finish-step, finish, [DONE]
    result = (await validate({"s": "".join(frames)}))["s"]
    message = assert_clean(result)
    assert summarize(message) == ["step", ("text", "0123456789" * 2_000)]


async def test_long_agent_runs_stay_bounded_by_what_is_open() -> None:
    converter = LangChainUIStreamConverter()
    peaks: dict[str, int] = {}

    async def run() -> Any:
        for step in range(2_000):
            run_id = f"run-{step}"
            yield (
                "messages",
                (
                    AIMessageChunk(
                        content="",
                        id=run_id,
                        tool_call_chunks=[{"index": 0, "id": f"c{step}", "name": "f", "args": '{"n": '}],
                    ),
                    {},
                ),
            )
            yield (
                "messages",
                (
                    AIMessageChunk(
                        content="",
                        id=run_id,
                        tool_call_chunks=[{"index": 0, "id": None, "name": None, "args": f"{step}}}"}],
                    ),
                    {},
                ),
            )
            yield ("messages", (AIMessageChunk(content="", id=run_id, chunk_position="last"), {}))
            yield (
                "updates",
                {
                    "model": {
                        "messages": [
                            AIMessage(
                                content="",
                                id=run_id,
                                tool_calls=[{"id": f"c{step}", "name": "f", "args": {"n": step}}],
                            )
                        ]
                    }
                },
            )
            tool_message = ToolMessage(content=str(step), tool_call_id=f"c{step}", id=f"t{step}")
            yield ("messages", (tool_message, {}))
            yield ("updates", {"tools": {"messages": [tool_message]}})
            for key, value in converter.state.buffer_sizes.items():
                peaks[key] = max(peaks.get(key, 0), value)

    chunks = [chunk async for chunk in converter.chunks(run())]
    assert peaks["tool_inputs"] <= 1
    assert peaks["tool_input_pieces"] <= 2
    assert peaks["awaiting_outputs"] <= 1
    assert peaks["step_seen"] <= 3
    assert sum(c["type"] == "tool-output-available" for c in chunks) == 2_000  # duplicates dropped
    assert sum(c["type"] == "start-step" for c in chunks) == 2_000


async def test_error_text_is_masked_unless_the_app_opts_in() -> None:
    class Failing(UIStreamConverter[int]):
        def handle(self, event: int) -> None:
            self.state.delta("text", str(event))

    async def events() -> Any:
        yield 1
        raise ValueError("db password=hunter2")

    def broken_formatter(exc: BaseException) -> str:
        raise RuntimeError("formatter bug")

    masked = [c async for c in Failing().chunks(events())]
    shown = [c async for c in Failing(on_error=str).chunks(events())]
    fallback = [c async for c in Failing(on_error=broken_formatter).chunks(events())]
    assert {"type": "error", "errorText": DEFAULT_ERROR_TEXT} in masked
    assert {"type": "error", "errorText": "db password=hunter2"} in shown
    assert {"type": "error", "errorText": DEFAULT_ERROR_TEXT} in fallback


async def test_closing_the_frames_closes_the_source() -> None:
    closed = []

    async def source() -> Any:
        try:
            while True:
                yield (AIMessageChunk(content="x", id="r"), {})
        finally:
            closed.append(True)

    frames = LangChainUIStreamConverter().frames(source())
    assert (await anext(frames)).startswith('data: {"type":"start"')
    await anext(frames)
    await frames.aclose()
    assert closed == [True]


async def test_an_early_close_is_logged_once_and_a_finished_run_is_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def source() -> Any:
        yield AIMessageChunk(content="x", id="r")

    closing = "closed before the run finished"
    with caplog.at_level(logging.INFO, logger="agents_a365.tooling.ui_stream"):
        early = LangChainUIStreamConverter().chunks(source())
        await anext(early)  # start: the run is still going
        await early.aclose()
        assert len([r for r in caplog.records if closing in r.getMessage()]) == 1
        caplog.clear()
        late = LangChainUIStreamConverter().chunks(source())
        while (await anext(late))["type"] != "finish":  # the run is over; only the last chunks are unread
            pass
        await late.aclose()
        assert [c async for c in LangChainUIStreamConverter().chunks(source())][-1]["type"] == "finish"
        assert not [r for r in caplog.records if closing in r.getMessage()]


def test_response_helper_sets_the_protocol_headers() -> None:
    async def frames() -> Any:
        yield SSE_DONE

    response = ui_message_stream_response(frames(), headers={"X-Request-Id": "r1"})
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-request-id"] == "r1"


def test_tooling_core_imports_no_orchestrator_and_starlette_lazily() -> None:
    code = (
        "import sys, agents_a365.tooling\n"
        "before = set(sys.modules)\n"
        "import agents_a365.tooling.ui_stream\n"
        "added = set(sys.modules) - before\n"
        "bad = [m for m in ('langchain', 'langchain_core', 'langgraph', 'agents') if m in sys.modules]\n"
        "assert not bad, bad\n"
        "assert not [m for m in added if m.startswith('starlette')], 'starlette imported eagerly'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


HISTORY: list[dict[str, Any]] = [
    {"id": "s", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
    {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Weather and mail?"}]},
    {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {"type": "reasoning", "text": "hidden", "state": "done"},
            {"type": "text", "text": "Checking.", "state": "done"},
            {
                "type": "tool-get_weather",
                "toolCallId": "c1",
                "state": "output-available",
                "input": {"city": "Oslo"},
                "output": {"t": 3},
            },
            {
                "type": "dynamic-tool",
                "toolName": "send_email",
                "toolCallId": "c2",
                "state": "output-error",
                "input": {"to": "x"},
                "errorText": "invalid address",
            },
            {"type": "tool-get_time", "toolCallId": "c3", "state": "input-available", "input": {}},
            {"type": "step-start"},
            {"type": "text", "text": "Done.", "state": "done"},
            {"type": "data-weather", "data": {"x": 1}},
        ],
    },
    {
        "id": "u2",
        "role": "user",
        "parts": [
            {"type": "text", "text": "Thanks"},
            {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,AAAA"},
        ],
    },
]


def test_ui_messages_to_langchain() -> None:
    messages = ui_messages_to_langchain(HISTORY)
    assert [type(m) for m in messages] == [
        SystemMessage,
        HumanMessage,
        AIMessage,
        ToolMessage,
        ToolMessage,
        AIMessage,
        HumanMessage,
    ]
    first = messages[2]
    assert first.content == "Checking."
    assert [c["id"] for c in first.tool_calls] == ["c1", "c2"]  # the unfinished c3 is not replayed
    assert messages[3].content == '{"t": 3}'
    assert messages[3].status == "success"
    assert messages[4].content == "invalid address"
    assert messages[4].status == "error"
    assert messages[4].name == "send_email"
    assert messages[5].content == "Done."
    assert messages[6].content == [
        {"type": "text", "text": "Thanks"},
        {"type": "image", "url": "data:image/png;base64,AAAA", "mime_type": "image/png"},
    ]


def test_ui_messages_to_openai_input() -> None:
    items: list[Any] = ui_messages_to_openai_input(HISTORY)
    assert items[0] == {"role": "system", "content": "Be brief."}
    assert items[1] == {"role": "user", "content": "Weather and mail?"}
    assert items[2] == {"role": "assistant", "content": "Checking."}
    assert items[3] == {
        "type": "function_call",
        "call_id": "c1",
        "name": "get_weather",
        "arguments": '{"city": "Oslo"}',
    }
    assert items[4] == {"type": "function_call_output", "call_id": "c1", "output": '{"t": 3}'}
    assert items[5]["name"] == "send_email"
    assert items[6]["output"] == "invalid address"
    assert items[7] == {"role": "assistant", "content": "Done."}
    assert items[8]["content"][1] == {
        "type": "input_image",
        "image_url": "data:image/png;base64,AAAA",
        "detail": "auto",
    }
    assert len(items) == 9
