"""Servers echoing the bearer token, with telemetry on: the token reaches no span, event or attribute.

The ``guard`` fixture records every span of a reliability scenario (tool arguments and results
included) and searches them for tokens like it searches logs and errors; here the servers put the
token in their answers on purpose, and the spans that describe those failures are checked too.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID
from agents_a365.tooling import (
    ChatHistoryMessage,
    McpToolServerConfigurationService,
    ToolingConfiguration,
    ToolServerDiscoveryError,
)
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService as LangChainService
from support.guard import Guard
from support.hostile_mcp import HostileMcp
from support.hostile_server import HostileServer, behaviours
from support.jwt import make_jwt

SAFETY = 10.0
TOKEN = make_jwt(appid=DEFAULT_AGENT_ID)
PAYLOAD = TOKEN.split(".")[1]  # make_jwt's signature is a constant: look for the payload
HISTORY = [ChatHistoryMessage(id="m1", role="user", content="hi", timestamp=datetime(2026, 1, 1, tzinfo=UTC))]


def _span_leaks(guard: Guard) -> list[str]:
    texts = []
    for span in guard.spans.spans():
        texts.append(f"{span.name} {dict(span.attributes or {})} {span.status.description}")
        texts.extend(f"{e.name} {dict(e.attributes or {})}" for e in span.events)
    return [t[:200] for t in texts if PAYLOAD in t]


async def test_echoed_tokens_reach_no_span(guard: Guard, turn: TurnContext) -> None:
    guard.tokens.add(TOKEN)
    async with HostileServer() as server:
        server.route("/mcp", HostileMcp(echo_headers_on_call=True))
        server.route("/chat-message", behaviours.echo_headers(500))
        server.route(
            "/mcpServers",
            behaviours.respond(
                200, {"mcpServers": [{"mcpServerName": "echo", "url": f"{server.base_url}/mcp"}]}
            ),
        )
        cfg = ToolingConfiguration(
            mcp_platform_endpoint=server.base_url,
            use_tooling_manifest=False,
            request_timeout=2,
            chat_history_max_attempts=1,
        )
        async with (
            LangChainService(configuration=cfg) as svc,
            asyncio.timeout(SAFETY),
            svc.mcp_tools(None, None, turn, auth_token=TOKEN) as toolset,
        ):
            for tool in toolset.tools():
                try:
                    await tool.ainvoke({})
                except Exception as exc:
                    guard.error(exc)
        async with McpToolServerConfigurationService(cfg) as core, asyncio.timeout(SAFETY):
            sent = await core.send_chat_history(turn, HISTORY)
    assert not sent.succeeded
    assert server.requests
    assert any(PAYLOAD in r.headers.get("authorization", "") for r in server.requests)
    names = {s.name for s in guard.spans.spans()}
    assert {"a365.tooling.discovery", "execute_tool echo", "a365.tooling.send_chat_history", "POST"} <= names
    (tool_span,) = [s for s in guard.spans.spans() if s.name == "execute_tool echo"]
    assert not tool_span.status.is_ok  # the echoed error was recorded, scrubbed
    assert "<redacted" in str(tool_span.status.description) or "<redacted" in str(
        [dict(e.attributes or {}) for e in tool_span.events]
    )
    assert not _span_leaks(guard)
    await guard.assert_clean()


async def test_a_gateway_echoing_the_token_reaches_no_span(guard: Guard, turn: TurnContext) -> None:
    guard.tokens.add(TOKEN)
    async with HostileServer() as server:
        server.route("/mcpServers", behaviours.echo_headers(401))
        cfg = ToolingConfiguration(mcp_platform_endpoint=server.base_url, use_tooling_manifest=False)
        async with McpToolServerConfigurationService(cfg) as svc:
            with guard.raises(ToolServerDiscoveryError):
                async with asyncio.timeout(SAFETY):
                    await svc.list_tool_servers(turn, None, None, auth_token=TOKEN)
    (discovery,) = [s for s in guard.spans.spans() if s.name == "a365.tooling.discovery"]
    assert not discovery.status.is_ok
    assert (discovery.attributes or {})["error.type"] == "ToolServerDiscoveryError"
    assert not _span_leaks(guard)
    await guard.assert_clean()


async def test_the_guard_finds_a_token_in_a_span(guard: Guard) -> None:
    # The control: the span search is real (a token put in an attribute is found).
    guard.tokens.add(TOKEN)
    with guard.spans.tracer.start_as_current_span("careless") as span:
        span.set_attribute("header", f"Bearer {TOKEN}")
    assert _span_leaks(guard)
    assert guard.token_leaks()
    await guard.assert_clean(check_tokens=False)
