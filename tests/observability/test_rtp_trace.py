"""Threat-protection sends: one span per send, one HTTP client span per attempt, outcomes as metrics."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from agents_a365.emulator import Emulator, Fault
from agents_a365.tooling import ChatHistoryMessage, McpToolServerConfigurationService, ToolingConfiguration
from support.hostile_server import HostileServer, Request, behaviours
from support.platform import production_config
from support.telemetry import Telemetry, is_child
from support.turns import make_turn_context

HISTORY = [ChatHistoryMessage(id="m1", role="user", content="hi", timestamp=datetime(2026, 1, 1, tzinfo=UTC))]


@pytest.fixture
async def service(emulator: Emulator) -> AsyncIterator[McpToolServerConfigurationService]:
    async with McpToolServerConfigurationService(
        production_config(emulator, chat_history_max_attempts=2)
    ) as svc:
        yield svc


async def test_a_retried_send_has_one_span_per_attempt(
    emulator: Emulator, service: McpToolServerConfigurationService, telemetry: Telemetry
) -> None:
    emulator.faults.set("rtp", Fault(status=503, retry_after="0", times=1))
    turn = make_turn_context(conversation_id="conv-r")
    assert (await service.send_chat_history(turn, HISTORY)).succeeded

    send = telemetry.one("a365.tooling.send_chat_history")
    attributes = dict(send.attributes or {})
    assert (attributes["a365.rtp.outcome"], attributes["a365.rtp.attempts"]) == ("delivered", 2)
    assert attributes["gen_ai.conversation.id"] == "conv-r"
    assert send.status.is_ok
    first, second = sorted(telemetry.named("POST"), key=lambda s: s.start_time or 0)
    assert is_child(first, send)
    assert is_child(second, send)
    assert dict(first.attributes or {}) | {"server.port": 0, "url.full": ""} == {
        "http.request.method": "POST",
        "server.address": "127.0.0.1",
        "server.port": 0,
        "url.full": "",
        "http.response.status_code": 503,
        "error.type": "503",
        "a365.rtp.retryable": True,
        "a365.rtp.retry_after": 0.0,
    }
    assert not first.status.is_ok
    assert (second.attributes or {})["http.request.resend_count"] == 1
    assert (second.attributes or {})["http.response.status_code"] == 200
    assert telemetry.counts("a365.tooling.threat_protection.sends") == {
        (("a365.rtp.outcome", "delivered"),): 1
    }
    assert telemetry.counts("a365.tooling.threat_protection.retries") == {
        (("a365.rtp.retry_reason", "http_503"),): 1
    }


async def test_a_failed_send_is_an_error_span_with_its_cause(
    emulator: Emulator, service: McpToolServerConfigurationService, telemetry: Telemetry
) -> None:
    emulator.faults.set("rtp", Fault(status=500, retry_after="0"))
    result = await service.send_chat_history(make_turn_context(), HISTORY)
    assert not result.succeeded  # a failed result, never an exception

    send = telemetry.one("a365.tooling.send_chat_history")
    assert not send.status.is_ok
    assert "answered HTTP 500" in str(send.status.description)
    assert dict(send.attributes or {})["error.type"] == "http_500"
    assert dict(send.attributes or {})["a365.rtp.outcome"] == "failed"
    assert [(a.attributes or {})["http.response.status_code"] for a in telemetry.named("POST")] == [500, 500]
    assert telemetry.counts("a365.tooling.threat_protection.sends") == {
        (("a365.rtp.outcome", "failed"), ("error.type", "http_500")): 1
    }
    (duration,) = telemetry.points("a365.tooling.threat_protection.duration")
    assert duration[0] == {"a365.rtp.outcome": "failed", "error.type": "http_500"}


async def test_a_refused_send_is_not_retried(
    emulator: Emulator, service: McpToolServerConfigurationService, telemetry: Telemetry
) -> None:
    emulator.faults.set("rtp", Fault(status=400))
    assert not (await service.send_chat_history(make_turn_context(), HISTORY)).succeeded
    (attempt,) = telemetry.named("POST")
    assert (attempt.attributes or {})["a365.rtp.retryable"] is False
    assert telemetry.counts("a365.tooling.threat_protection.retries") == {}


async def test_an_unreachable_endpoint_is_recorded_by_exception_type(telemetry: Telemetry) -> None:
    with socket.socket() as probe:  # a port nobody listens on: connections are refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cfg = ToolingConfiguration(
        mcp_platform_endpoint=f"http://127.0.0.1:{port}",
        use_tooling_manifest=False,
        chat_history_max_attempts=1,
    )
    async with McpToolServerConfigurationService(cfg) as svc:
        assert not (await svc.send_chat_history(make_turn_context(), HISTORY)).succeeded
    (attempt,) = telemetry.named("POST")
    assert (attempt.attributes or {})["error.type"] == "ConnectError"
    assert [e.name for e in attempt.events] == ["exception"]
    assert (
        dict(telemetry.one("a365.tooling.send_chat_history").attributes or {})["error.type"] == "ConnectError"
    )


async def test_a_send_that_then_waits_too_long_for_a_slot_fails_by_queue_timeout(
    telemetry: Telemetry,
) -> None:
    # Its first attempt was answered 503; its retry found the one slot taken past its queue deadline.
    answered = asyncio.Event()

    async def first_503_then_hold(request: Request, writer: asyncio.StreamWriter) -> None:
        if answered.is_set():
            await asyncio.Event().wait()  # the other send holds the slot
        await release.wait()
        answered.set()
        await behaviours.respond(503, {}, {"Retry-After": "0"})(request, writer)

    release = asyncio.Event()
    async with HostileServer() as server:
        server.route("/chat-message", first_503_then_hold)
        cfg = ToolingConfiguration(
            mcp_platform_endpoint=server.base_url,
            use_tooling_manifest=False,
            chat_history_concurrency=1,
            chat_history_queue_timeout=1.0,  # the second send gets the slot well within it, under load too
            chat_history_drain_timeout=0,
        )
        async with McpToolServerConfigurationService(cfg) as svc:
            first = asyncio.create_task(svc.send_chat_history(make_turn_context(activity_id="a1"), HISTORY))
            await server.wait_for_requests()
            second = asyncio.create_task(svc.send_chat_history(make_turn_context(activity_id="a2"), HISTORY))
            for _ in range(5):  # the second send reaches the slot queue (no await suspends it before)
                await asyncio.sleep(0)
            release.set()
            result = await first
        await second
    assert result.errors[0].exception.cause == "queue_timeout"  # type: ignore[attr-defined]
    (send, _) = sorted(telemetry.named("a365.tooling.send_chat_history"), key=lambda s: s.start_time or 0)
    assert dict(send.attributes or {})["error.type"] == "queue_timeout"
    assert dict(send.attributes or {})["a365.rtp.attempts"] == 1
    assert ((("a365.rtp.outcome", "failed"), ("error.type", "queue_timeout")), 1) in telemetry.counts(
        "a365.tooling.threat_protection.sends"
    ).items()
