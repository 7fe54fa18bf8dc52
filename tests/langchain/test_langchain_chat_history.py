"""Send chat history: the four levels, the error matrix, role mapping, content extraction, limit."""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from langchain_core.chat_history import BaseChatMessageHistory, InMemoryChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph import START, MessagesState, StateGraph

from agents_a365.emulator import Emulator, Fault
from agents_a365.tooling import ToolOptions
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService


class UnavailableHistory(BaseChatMessageHistory):
    """A message store whose backend is down (a third-party interface, not our code)."""

    def __init__(self) -> None:
        self.messages: list[BaseMessage] = []

    async def aget_messages(self) -> list[BaseMessage]:
        raise ConnectionError("history store unavailable")

    def add_message(self, message: BaseMessage) -> None:
        self.messages.append(message)

    def clear(self) -> None:
        self.messages = []


def _graph_without_checkpointer() -> Any:
    async def echo(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("echo")]}

    builder = StateGraph(MessagesState)
    builder.add_node("echo", echo)
    builder.add_edge(START, "echo")
    return builder.compile()  # no checkpointer: aget_state fails


def _history(emu: Emulator) -> list[dict[str, Any]]:
    [body] = emu.chat_messages
    return list(body["chatHistory"])


async def test_error_matrix(service: McpToolRegistrationService, turn: Any, emulator: Emulator) -> None:
    graph = _graph_without_checkpointer()
    config = {"configurable": {"thread_id": "t"}}
    cases = [
        (service.send_chat_history(None, graph, config), "turn_context is required"),  # type: ignore[arg-type]
        (service.send_chat_history(turn, None, config), "graph is required"),  # type: ignore[arg-type]
        (service.send_chat_history(turn, graph, None), "config is required"),  # type: ignore[arg-type]
        (service.send_chat_history_from_state(None, object()), "turn_context is required"),
        (service.send_chat_history_from_state(turn, None), "state_snapshot is required"),
        (service.send_chat_history_from_chat_history(turn, None), "chat_history is required"),  # type: ignore[arg-type]
        (
            service.send_chat_history_from_chat_history(None, UnavailableHistory()),
            "turn_context is required",
        ),  # type: ignore[arg-type]
        (service.send_chat_history_from_messages(turn, None), "messages is required"),  # type: ignore[arg-type]
        (service.send_chat_history_from_messages(None, []), "turn_context is required"),  # type: ignore[arg-type]
    ]
    for coroutine, message in cases:
        with pytest.raises(ValueError, match=rf"^{message}$"):
            await coroutine
    assert emulator.requests_for("rtp") == []


async def test_a_snapshot_without_messages_is_rejected(
    service: McpToolRegistrationService, turn: Any
) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    builder = StateGraph(MessagesState)
    builder.add_node("noop", lambda state: {})
    builder.add_edge(START, "noop")
    graph = builder.compile(checkpointer=InMemorySaver())
    snapshot = await graph.aget_state({"configurable": {"thread_id": "never-run"}})
    with pytest.raises(ValueError, match=r"^state_snapshot must contain messages$"):
        await service.send_chat_history_from_state(turn, snapshot)


async def test_failing_aget_state_gives_a_failed_result(
    service: McpToolRegistrationService, turn: Any, emulator: Emulator
) -> None:
    result = await service.send_chat_history(turn, _graph_without_checkpointer(), {"configurable": {}})
    assert not result.succeeded
    assert emulator.requests_for("rtp") == []


async def test_failing_aget_messages_gives_a_failed_result(
    service: McpToolRegistrationService, turn: Any, emulator: Emulator
) -> None:
    result = await service.send_chat_history_from_chat_history(turn, UnavailableHistory())
    assert not result.succeeded
    assert "history store unavailable" in str(result)
    assert emulator.requests_for("rtp") == []


async def test_level_two_sends_the_messages_of_a_state_snapshot(
    service: McpToolRegistrationService, turn: Any, emulator: Emulator
) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    builder = StateGraph(MessagesState)

    async def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("pong", id="a1")]}

    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    await graph.ainvoke({"messages": [HumanMessage("ping", id="h1")]}, config)
    result = await service.send_chat_history_from_state(turn, await graph.aget_state(config))
    assert result.succeeded
    assert [(m["id"], m["role"], m["content"]) for m in _history(emulator)] == [
        ("h1", "user", "ping"),
        ("a1", "assistant", "pong"),
    ]


@pytest.mark.filterwarnings("ignore:The class `InMemoryChatMessageHistory` was deprecated")
async def test_level_three_reads_any_chat_message_history(
    service: McpToolRegistrationService, turn: Any, emulator: Emulator
) -> None:
    history = InMemoryChatMessageHistory()
    await history.aadd_messages([HumanMessage("q", id="1"), AIMessage("a", id="2")])
    assert (await service.send_chat_history_from_chat_history(turn, history)).succeeded
    assert [m["content"] for m in _history(emulator)] == ["q", "a"]


async def test_role_mapping(service: McpToolRegistrationService, turn: Any, emulator: Emulator) -> None:
    messages = [
        HumanMessage("h"),
        AIMessage("a"),
        SystemMessage("s"),
        ToolMessage("t", tool_call_id="c1"),
        FunctionMessage("f", name="fn"),
        ChatMessage("c", role="critic"),
        AIMessageChunk(content="chunk"),
        RemoveMessage(id="gone"),  # no text: skipped
    ]
    assert (await service.send_chat_history_from_messages(turn, messages)).succeeded
    assert [(m["role"], m["content"]) for m in _history(emulator)] == [
        ("user", "h"),
        ("assistant", "a"),
        ("system", "s"),
        ("tool", "t"),
        ("function", "f"),
        ("critic", "c"),
        ("assistant", "chunk"),
    ]


async def test_content_extraction_ids_and_timestamps(
    service: McpToolRegistrationService, turn: Any, emulator: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    messages = [
        HumanMessage(
            content=[{"type": "text", "text": "part one"}, {"type": "image", "url": "x"}], id="keep-me"
        ),
        AIMessage(content="", tool_calls=[{"name": "x", "args": {}, "id": "c"}]),  # no text: skipped
        ToolMessage(content=[{"type": "text", "text": "from a tool"}], tool_call_id="c"),
        AIMessage(content="   "),  # whitespace only: skipped
    ]
    before = datetime.now(UTC)
    with caplog.at_level(logging.DEBUG, logger="agents_a365"):
        assert (await service.send_chat_history_from_messages(turn, messages)).succeeded
    history = _history(emulator)
    assert [(m["role"], m["content"]) for m in history] == [("user", "part one"), ("tool", "from a tool")]
    assert history[0]["id"] == "keep-me"
    assert uuid.UUID(history[1]["id"]).version == 4
    for message in history:
        assert message["timestamp"].endswith("Z")
        stamp = datetime.fromisoformat(message["timestamp"].replace("Z", "+00:00"))
        assert before - timedelta(seconds=1) <= stamp <= datetime.now(UTC) + timedelta(seconds=1)
    # The whitespace-only message is worth a warning; the tool-call-only one is normal (DEBUG only).
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "skipped 1 message(s) without text" in warning.getMessage()
    assert any("skipped 1 item(s) that carry no message text" in r.getMessage() for r in caplog.records)


async def test_a_message_that_fails_conversion_is_skipped_and_the_rest_sent(
    service: McpToolRegistrationService, turn: Any, emulator: Emulator
) -> None:
    class Exploding:
        @property
        def text(self) -> str:
            raise RuntimeError("boom")

        @property
        def content(self) -> str:
            raise RuntimeError("boom")

    messages = [HumanMessage("before"), Exploding(), 42, None, AIMessage("after")]
    assert (await service.send_chat_history_from_messages(turn, messages)).succeeded
    assert [m["content"] for m in _history(emulator)] == ["before", "after"]


async def test_limit_keeps_the_most_recent_messages_in_order(
    service: McpToolRegistrationService, turn: Any, emulator: Emulator
) -> None:
    messages = [HumanMessage(f"m{i}") for i in range(10)]
    assert (await service.send_chat_history_from_messages(turn, messages, limit=3)).succeeded
    assert [m["content"] for m in _history(emulator)] == ["m7", "m8", "m9"]


async def test_limit_zero_and_empty_lists_are_still_sent(
    service: McpToolRegistrationService, turn: Any, emulator: Emulator
) -> None:
    assert (await service.send_chat_history_from_messages(turn, [])).succeeded
    assert (await service.send_chat_history_from_messages(turn, [HumanMessage("x")], limit=0)).succeeded
    assert [body["chatHistory"] for body in emulator.chat_messages] == [[], []]
    with pytest.raises(ValueError, match="limit must be a non-negative integer"):
        await service.send_chat_history_from_messages(turn, [], limit=-1)


async def test_remote_failure_is_a_failed_result_and_the_orchestrator_is_named(
    service: McpToolRegistrationService, turn: Any, emulator: Emulator
) -> None:
    assert (await service.send_chat_history_from_messages(turn, [HumanMessage("x")])).succeeded
    [request] = emulator.requests_for("rtp")
    assert "LangChain" in request.headers["user-agent"]
    emulator.faults.set("rtp", Fault(status=400))
    result = await service.send_chat_history_from_messages(
        turn, [HumanMessage("x")], options=ToolOptions(orchestrator_name="Custom")
    )
    assert not result.succeeded
    assert "Custom" in emulator.requests_for("rtp")[-1].headers["user-agent"]
