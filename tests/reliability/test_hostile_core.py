"""The core against hostile peers: total deadlines, size caps, odd Retry-After, slow endpoints.

Each peer is a real socket on 127.0.0.1 (``hostile_server``); the SDK talks to it through its public
API only. Each test fails on the code before the fix (see docs/reliability.md, "Hostile peers").
"""

from __future__ import annotations

import asyncio
import gzip
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID
from agents_a365.tooling import (
    ChatHistoryMessage,
    ChatHistorySendError,
    McpToolServerConfigurationService,
    ToolingConfiguration,
    ToolServerDiscoveryError,
)
from support.hostile_server import HostileServer, Request, behaviours
from support.jwt import make_jwt
from support.turns import make_turn_context

TIMEOUT = 0.5
# A safety net only: the bound under test is TIMEOUT; this catches "hangs" without timing anything.
SAFETY = 10.0
HISTORY = [ChatHistoryMessage(id="m1", role="user", content="hi", timestamp=datetime(2026, 1, 1, tzinfo=UTC))]
TOKEN = make_jwt(appid=DEFAULT_AGENT_ID)
RTP = "/chat-message"
GATEWAY = "/mcpServers"


def _config(server: HostileServer, **overrides: Any) -> ToolingConfiguration:
    values: dict[str, Any] = {
        "mcp_platform_endpoint": server.base_url,
        "use_tooling_manifest": False,
        # Generous by default (a loaded machine must not turn "malformed" into "timed out"); the
        # tests of the deadlines themselves set short ones.
        "request_timeout": SAFETY / 2,
        "chat_history_timeout": SAFETY / 2,
    }
    values.update(overrides)
    return ToolingConfiguration(**values)


def _turn(**kwargs: Any) -> TurnContext:
    return make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, **kwargs)


async def _discover(server: HostileServer, **overrides: Any) -> ToolServerDiscoveryError:
    async with McpToolServerConfigurationService(_config(server, **overrides)) as svc:
        with pytest.raises(ToolServerDiscoveryError) as caught:
            async with asyncio.timeout(SAFETY):
                await svc.list_tool_servers(_turn(), None, None, auth_token=TOKEN)
    return caught.value


# -- total deadline and size caps on discovery ---------------------------------------------------


async def test_gateway_trickling_its_answer_byte_by_byte_is_cut_at_the_total_deadline() -> None:
    # ~120 bytes at 0.1 s each: every read gets a byte well within any per-read timeout.
    async with HostileServer() as server:
        server.route(GATEWAY, behaviours.trickle(200, b"[]", interval=0.1))
        error = await _discover(server, request_timeout=TIMEOUT)
    assert f"did not answer within {TIMEOUT} s" in str(error)


async def test_gateway_body_that_never_ends_stops_at_the_size_cap() -> None:
    async with HostileServer() as server:
        server.route(GATEWAY, behaviours.endless(b"[" * 8192, interval=0.001))
        error = await _discover(server, request_timeout=SAFETY * 2)  # the default cap: 4 MiB
    assert "larger than 4194304 bytes" in str(error)


async def test_gateway_body_declared_larger_than_the_cap_is_not_read() -> None:
    async with HostileServer() as server:
        server.route(GATEWAY, behaviours.respond(200, [{"mcpServerName": "x" * 2_000_000}]))
        error = await _discover(server, max_gateway_response_bytes=1024 * 1024)  # the setting is honoured
    assert "larger than 1048576 bytes" in str(error)


async def test_a_compressed_gateway_body_is_capped_as_it_decompresses() -> None:
    # 48 KiB on the wire, 48 MiB once inflated: the cap applies to the body the service would parse.
    bomb = gzip.compress(b"[" * (48 * 2**20))
    async with HostileServer() as server:
        server.route(GATEWAY, behaviours.respond(200, bomb, {"Content-Encoding": "gzip"}))
        error = await _discover(server, max_gateway_response_bytes=1024 * 1024)
    assert "larger than 1048576 bytes" in str(error)


async def test_gateway_json_nested_100000_levels_is_a_discovery_error() -> None:
    async with HostileServer() as server:
        server.route(GATEWAY, behaviours.respond(200, b"[" * 100_000 + b"]" * 100_000))
        error = await _discover(server)
    assert "malformed JSON" in str(error)


async def test_gateway_listing_two_different_servers_under_one_name_is_a_clear_error() -> None:
    twice = [
        {"mcpServerName": "mail", "url": "http://127.0.0.1:1/a"},
        {"mcpServerName": "mail", "url": "http://127.0.0.1:1/b"},
    ]
    async with HostileServer() as server:
        server.route(GATEWAY, behaviours.respond(200, {"mcpServers": twice}))
        error = await _discover(server)
    assert "two different MCP servers are named 'mail'" in str(error)


async def test_gateway_listing_the_same_server_twice_keeps_it_once() -> None:
    entry = {"mcpServerName": "mail", "url": "http://127.0.0.1:1/a"}
    async with HostileServer() as server:
        server.route(GATEWAY, behaviours.respond(200, {"mcpServers": [entry, entry]}))
        async with McpToolServerConfigurationService(_config(server)) as svc:
            servers = await svc.list_tool_servers(_turn(), None, None, auth_token=TOKEN)
    assert [s.mcp_server_name for s in servers] == ["mail"]


# -- threat protection: caps, Retry-After, slow endpoints ------------------------------------------


async def _send(svc: McpToolServerConfigurationService, turn: TurnContext | None = None) -> Any:
    async with asyncio.timeout(SAFETY):
        return await svc.send_chat_history(turn or _turn(), HISTORY)


async def test_rtp_answer_larger_than_its_cap_is_a_failed_result() -> None:
    async with HostileServer() as server:
        server.route(RTP, behaviours.endless(b"x" * 4096, interval=0.001))
        async with McpToolServerConfigurationService(
            _config(server, chat_history_timeout=SAFETY * 2)  # the default cap: 8 KiB
        ) as svc:
            result = await _send(svc)
    assert not result.succeeded
    assert "larger than 8192 bytes" in str(result.errors[0])
    assert result.errors[0].exception.cause == "response_too_large"  # type: ignore[attr-defined]


RETRY_AFTER = [
    "²",
    "¹",
    "garbage",
    "9" * 400,
    "-5",
    "1e309",
    "Sun, 99 Foo 99999 99:99:99 GMT",
    "Wed, 21 Oct 2015",
]


@pytest.mark.parametrize("value", RETRY_AFTER)
async def test_any_retry_after_text_ends_in_an_operation_result(value: str) -> None:
    async with HostileServer() as server:
        server.route(RTP, behaviours.respond(503, {"error": "busy"}, {"Retry-After": value}))
        cfg = _config(server, chat_history_max_attempts=2)
        async with McpToolServerConfigurationService(cfg) as svc:
            result = await _send(svc)
    assert not result.succeeded
    assert "answered HTTP 503" in str(result.errors[0])


async def test_every_attempt_carries_the_same_message_id() -> None:
    answers = iter([behaviours.respond(503, {}, {"Retry-After": "0"}), behaviours.respond(200, {})])

    async def first_503_then_200(request: Request, writer: asyncio.StreamWriter) -> None:
        await next(answers)(request, writer)

    async with HostileServer() as server:
        server.route(RTP, first_503_then_200)
        cfg = _config(server, chat_history_max_attempts=3)
        async with McpToolServerConfigurationService(cfg) as svc:
            result = await _send(svc)
    assert result.succeeded
    ids = [json.loads(r.body)["messageId"] for r in server.requests]
    assert ids == ["activity-1", "activity-1"]


async def test_slow_but_healthy_endpoint_loses_no_queued_record() -> None:
    # 8 sends, 2 at a time, each answered after 0.3 s within a 0.5 s wire deadline: the last ones
    # wait ~0.9 s for a slot, which must not be charged to their wire deadline.
    async with HostileServer() as server:
        server.route(RTP, behaviours.respond(200, {}, delay=0.3))
        cfg = _config(
            server, chat_history_timeout=0.5, chat_history_concurrency=2, chat_history_max_attempts=1
        )
        async with McpToolServerConfigurationService(cfg) as svc:
            results = await asyncio.gather(*(_send(svc, _turn(activity_id=f"a{i}")) for i in range(8)))
    assert [r.succeeded for r in results] == [True] * 8
    assert sorted(json.loads(r.body)["messageId"] for r in server.requests) == sorted(
        f"a{i}" for i in range(8)
    )


async def test_errors_say_whether_a_send_queued_too_long_or_was_not_answered() -> None:
    async with HostileServer() as server:
        server.route(RTP, behaviours.hold())
        cfg = _config(
            server,
            chat_history_timeout=0.3,
            chat_history_queue_timeout=0.1,
            chat_history_concurrency=1,
            chat_history_max_attempts=1,
        )
        async with McpToolServerConfigurationService(cfg) as svc:
            first = asyncio.create_task(_send(svc, _turn(activity_id="a1")))
            await server.wait_for_requests()
            second = await _send(svc, _turn(activity_id="a2"))
            first_result = await first
    errors = [x for r in (first_result, second) for x in r.errors]
    assert all(isinstance(e.exception, ChatHistorySendError) for e in errors), errors
    assert "did not answer within 0.3 s" in str(first_result.errors[0])
    assert "queued too long" in str(second.errors[0])
    assert [e.exception.cause for e in errors] == ["timeout", "queue_timeout"]  # type: ignore[attr-defined]
    assert [json.loads(r.body)["messageId"] for r in server.requests] == ["a1"]


# -- header values ----------------------------------------------------------------------------------


async def test_non_ascii_sub_channel_and_blueprint_are_sent_percent_encoded_without_losing_the_record() -> (
    None
):
    turn = _turn(channel_id="msteams:é-mail", blueprint_id="bleu-ü")
    async with HostileServer() as server:
        server.route(RTP, behaviours.respond(200, {}))
        async with McpToolServerConfigurationService(_config(server)) as svc:
            result = await _send(svc, turn)
    assert result.succeeded
    headers = server.requests[0].headers
    assert headers["x-ms-subchannel-id"] == "%C3%A9-mail"
    assert headers["x-ms-agentid"] == "bleu-%C3%BC"
