"""send_chat_history against the emulator's threat-protection endpoint."""

from __future__ import annotations

import asyncio
import socket
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from agents_a365.emulator import Emulator, Fault
from agents_a365.runtime import get_user_agent_header
from agents_a365.tooling import (
    ChatHistoryMessage,
    ChatHistorySendError,
    McpToolServerConfigurationService,
    ToolingConfiguration,
    ToolOptions,
)
from support.platform import production_config
from support.turns import make_turn_context

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
HISTORY = [
    ChatHistoryMessage(id="m1", role="user", content="Book a meeting", timestamp=NOW),
    ChatHistoryMessage(id="m2", role="assistant", content="Done", timestamp=NOW),
]


async def test_sends_the_chat_message_request(
    emulator: Emulator, service: McpToolServerConfigurationService
) -> None:
    turn = make_turn_context(text="Book a meeting", activity_id="act-1", conversation_id="conv-1")
    result = await service.send_chat_history(turn, HISTORY, ToolOptions(orchestrator_name="LangChain"))
    assert result.succeeded, str(result)
    assert emulator.chat_messages == [
        {
            "conversationId": "conv-1",
            "messageId": "act-1",
            "userMessage": "Book a meeting",
            "chatHistory": [
                {
                    "id": "m1",
                    "role": "user",
                    "content": "Book a meeting",
                    "timestamp": "2026-11-21T12:00:00Z",
                },
                {"id": "m2", "role": "assistant", "content": "Done", "timestamp": "2026-11-21T12:00:00Z"},
            ],
        }
    ]
    [request] = emulator.requests_for("rtp")
    assert request.headers["user-agent"] == get_user_agent_header(
        "LangChain", distribution="agents-a365-tooling"
    )
    assert request.headers["x-ms-channel-id"] == "msteams"
    assert request.headers["x-ms-subchannel-id"] == "email"
    assert request.headers["content-type"] == "application/json"
    assert "authorization" not in request.headers


async def test_an_empty_history_is_still_sent(
    emulator: Emulator, service: McpToolServerConfigurationService
) -> None:
    result = await service.send_chat_history(make_turn_context(), [])
    assert result.succeeded
    assert [m["chatHistory"] for m in emulator.chat_messages] == [[]]


@pytest.mark.parametrize(
    ("turn_kwargs", "messages", "message"),
    [
        (None, HISTORY, "turn_context is required"),
        ({}, None, "chat_history_messages is required"),
        ({"conversation_id": None}, HISTORY, r"turn_context\.activity\.conversation\.id is required"),
        ({"activity_id": None}, HISTORY, r"turn_context\.activity\.id is required"),
        ({"text": None}, HISTORY, r"turn_context\.activity\.text is required"),
        ({"text": "   "}, HISTORY, r"turn_context\.activity\.text is required"),
    ],
)
async def test_bad_arguments_raise_value_error(
    emulator: Emulator,
    service: McpToolServerConfigurationService,
    turn_kwargs: dict[str, Any] | None,
    messages: Any,
    message: str,
) -> None:
    turn = None if turn_kwargs is None else make_turn_context(**turn_kwargs)
    with pytest.raises(ValueError, match=message):
        await service.send_chat_history(turn, messages)  # type: ignore[arg-type]
    assert emulator.requests_for("rtp") == []


async def test_turn_without_activity_raises(service: McpToolServerConfigurationService) -> None:
    class NoActivity:
        activity = None

    with pytest.raises(ValueError, match=r"turn_context\.activity is required"):
        await service.send_chat_history(NoActivity(), HISTORY)


def _error(result: Any) -> ChatHistorySendError:
    assert not result.succeeded
    error = result.errors[0].exception
    assert isinstance(error, ChatHistorySendError)
    return error


async def test_server_error_is_a_failed_result_after_bounded_retries(emulator: Emulator) -> None:
    emulator.faults.set("rtp", Fault(status=500))
    async with McpToolServerConfigurationService(
        production_config(emulator, chat_history_max_attempts=3)
    ) as svc:
        result = await svc.send_chat_history(make_turn_context(), HISTORY)
    error = _error(result)
    assert (error.cause, error.status_code) == ("http_status", 500)
    assert error.attempts == 3
    assert "HTTP 500" in str(result)
    assert len(emulator.requests_for("rtp")) == 3


async def test_429_is_retried_honouring_retry_after(
    emulator: Emulator, service: McpToolServerConfigurationService
) -> None:
    emulator.faults.set("rtp", Fault(status=429, retry_after="0", times=2))
    result = await service.send_chat_history(make_turn_context(), HISTORY)
    assert result.succeeded
    assert [r.status for r in emulator.requests_for("rtp")] == [429, 429, 200]
    assert len(emulator.chat_messages) == 1


async def test_retry_after_beyond_the_deadline_stops_retrying(emulator: Emulator) -> None:
    emulator.faults.set("rtp", Fault(status=503, retry_after="30"))
    async with McpToolServerConfigurationService(production_config(emulator, chat_history_timeout=2)) as svc:
        started = time.monotonic()
        result = await svc.send_chat_history(make_turn_context(), HISTORY)
    assert _error(result).attempts == 1
    assert time.monotonic() - started < 2


async def test_client_errors_are_not_retried(
    emulator: Emulator, service: McpToolServerConfigurationService
) -> None:
    emulator.faults.set("rtp", Fault(status=400))
    result = await service.send_chat_history(make_turn_context(), HISTORY)
    assert _error(result).status_code == 400
    assert len(emulator.requests_for("rtp")) == 1


async def test_timeout_is_a_failed_result_within_the_deadline(emulator: Emulator) -> None:
    emulator.faults.set("rtp", Fault(latency_ms=5_000))
    async with McpToolServerConfigurationService(
        production_config(emulator, chat_history_timeout=0.5)
    ) as svc:
        started = time.monotonic()
        result = await svc.send_chat_history(make_turn_context(), HISTORY)
    assert "did not answer within 0.5 s" in str(_error(result))
    assert _error(result).cause == "timeout"
    assert time.monotonic() - started < 0.5 + 1.0


async def test_dropped_connection_is_retried_then_reported(emulator: Emulator) -> None:
    emulator.faults.set("rtp", Fault(drop=True))
    async with McpToolServerConfigurationService(
        production_config(emulator, chat_history_max_attempts=2)
    ) as svc:
        result = await svc.send_chat_history(make_turn_context(), HISTORY)
    assert "unreachable" in str(_error(result))
    assert (_error(result).cause, _error(result).attempts) == ("unreachable", 2)


async def test_refused_connection_is_a_failed_result() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = ToolingConfiguration(mcp_platform_endpoint=f"http://127.0.0.1:{port}", chat_history_timeout=2)
    async with McpToolServerConfigurationService(config) as svc:
        result = await svc.send_chat_history(make_turn_context(), HISTORY)
    assert "unreachable" in str(_error(result))


async def test_one_http_client_is_reused(
    emulator: Emulator, service: McpToolServerConfigurationService
) -> None:
    client = service.http_client
    await asyncio.gather(*(service.send_chat_history(make_turn_context(), HISTORY) for _ in range(5)))
    assert service.http_client is client
    assert len(emulator.chat_messages) == 5
    await service.aclose()
    assert client.is_closed


async def test_lone_surrogates_are_replaced_not_fatal(
    emulator: Emulator, service: McpToolServerConfigurationService
) -> None:
    broken = ChatHistoryMessage(id="s1", role="user", content="bad \ud800 text", timestamp=NOW)
    result = await service.send_chat_history(make_turn_context(), [broken])
    assert result.succeeded, str(result)
    assert emulator.chat_messages[0]["chatHistory"][0]["content"] == "bad \ufffd text"
    assert emulator.chat_messages[0]["chatHistory"][0]["timestamp"] == "2026-11-21T12:00:00Z"


async def test_sends_in_flight_are_bounded(emulator: Emulator) -> None:
    emulator.faults.set("rtp", Fault(latency_ms=100))
    config = production_config(emulator, chat_history_concurrency=2)
    async with McpToolServerConfigurationService(config) as svc:
        started = time.monotonic()
        results = await asyncio.gather(
            *(svc.send_chat_history(make_turn_context(), HISTORY) for _ in range(6))
        )
        elapsed = time.monotonic() - started
    assert all(r.succeeded for r in results)
    assert len(emulator.chat_messages) == 6
    assert elapsed >= 0.3  # three waves of two: the bound held (a lower bound, never flaky under load)
