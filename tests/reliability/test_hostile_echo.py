"""Servers that echo the request's headers (the bearer token included) into their error answers.

The gateway and threat protection answering an HTTP error whose text carries every request header:
the token must not reach the raised error, the failed result or any log record. (Regression guards:
the core never copies an error body into its errors; the MCP tool errors, which do carry the
server's text, are scrubbed: see test_hostile_openai.py and test_hostile_langchain.py.)
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

import pytest

from agents_a365.emulator import DEFAULT_AGENT_ID
from agents_a365.tooling import (
    ChatHistoryMessage,
    McpToolServerConfigurationService,
    ToolingConfiguration,
    ToolServerDiscoveryError,
)
from support.hostile_server import HostileServer, behaviours
from support.jwt import make_jwt
from support.turns import make_turn_context

SAFETY = 10.0
TOKEN = make_jwt(appid=DEFAULT_AGENT_ID)
PAYLOAD = TOKEN.split(".")[1]  # make_jwt's signature is a constant: look for the payload
HISTORY = [ChatHistoryMessage(id="m1", role="user", content="hi", timestamp=datetime(2026, 1, 1, tzinfo=UTC))]


def _leaks(texts: list[str]) -> list[str]:
    return [t[:200] for t in texts if PAYLOAD in t]


async def test_gateway_echoing_the_token_in_its_error_text_gets_it_nowhere(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    async with HostileServer() as server:
        server.route("/mcpServers", behaviours.echo_headers(401))
        cfg = ToolingConfiguration(mcp_platform_endpoint=server.base_url, use_tooling_manifest=False)
        async with McpToolServerConfigurationService(cfg) as svc:
            with pytest.raises(ToolServerDiscoveryError) as caught:
                async with asyncio.timeout(SAFETY):
                    await svc.list_tool_servers(
                        make_turn_context(agentic_app_id=DEFAULT_AGENT_ID), None, None, auth_token=TOKEN
                    )
    assert PAYLOAD in server.requests[0].headers["authorization"]  # the token did go out, and came back
    error = caught.value
    assert "answered HTTP 401" in str(error)
    texts = [str(error), repr(error), repr(error.__cause__), repr(error.__context__), caplog.text]
    assert not _leaks(texts)


async def test_threat_protection_echoing_the_headers_in_its_error_text_gets_them_nowhere(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    async with HostileServer() as server:
        server.route("/chat-message", behaviours.echo_headers(500))
        cfg = ToolingConfiguration(
            mcp_platform_endpoint=server.base_url, use_tooling_manifest=False, chat_history_max_attempts=1
        )
        async with McpToolServerConfigurationService(cfg) as svc:
            async with asyncio.timeout(SAFETY):
                result = await svc.send_chat_history(
                    make_turn_context(agentic_app_id=DEFAULT_AGENT_ID), HISTORY
                )
    assert not result.succeeded
    error = result.errors[0].exception
    assert "answered HTTP 500" in str(error)
    # The server's text (whatever it echoes) is not copied into the error or the log.
    assert "you sent" not in str(error)
    assert "you sent" not in caplog.text
