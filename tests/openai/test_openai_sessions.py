"""The OpenAI servers' MCP session: parallel calls, session expiry, a sibling's failed request.

Why the Agents SDK's own ``MCPServerStreamableHttp`` serialises requests (issue 27): openai-agents PR
#2682 ("serialize streamable-http MCP requests per session") works around ``mcp``'s v1 streamable HTTP
client, where every request's POST runs in the transport's task group: one request failing on the wire
(an HTTP 5xx, a dropped connection) ends that task group, so every request in flight on the session
fails with it. That is a defect for failures only; here calls run concurrently and a sibling caught by
it fails with a typed error (never sent twice: the server may have run it), as the last test shows.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest
from agents import Agent
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator, EmulatorConfig, Fault
from agents_a365.tooling import McpServerConnectionError, ToolingConfiguration
from agents_a365.tooling.extensions.openai import McpToolRegistrationService
from support.hostile_mcp import HostileMcp, _answer
from support.hostile_server import HostileServer, Request, behaviours
from support.jwt import make_jwt
from support.leaks import leaked_tasks, other_tasks
from support.platform import AUTH_HANDLER, production_config

SAFETY = 10.0


def _initializes(emulator: Emulator) -> int:
    return sum(1 for r in emulator.requests_for("mcp", server="mail") if r.jsonrpc_method == "initialize")


async def test_ten_concurrent_calls_to_one_server_are_in_flight_together(
    emulator: Emulator, service: McpToolRegistrationService, turn: TurnContext
) -> None:
    # Each tools/call is held until all ten are in flight (released alone after the hold timeout
    # otherwise): the emulator records how many were held together, a count, not a timing.
    emulator.faults.set("mcp:mail", Fault(hold_until_concurrent=10, mcp_method="tools/call", times=10))
    async with service.connected_agent(
        Agent(name="a"), emulator.authorization(), AUTH_HANDLER, turn
    ) as agent:
        mail = next(s for s in agent.mcp_servers if s.name == "mail")
        async with asyncio.timeout(SAFETY):
            results = await asyncio.gather(*(mail.call_tool("list_emails", {}) for _ in range(10)))
    assert not any(r.isError for r in results)
    calls = [r for r in emulator.requests_for("mcp", server="mail") if r.jsonrpc_method == "tools/call"]
    assert [r.held_together for r in calls] == [10] * 10
    assert _initializes(emulator) == 1  # one session: the core listed on it, the ten calls share it


async def test_an_expired_session_is_initialized_again_once_then_fails_typed(turn: TurnContext) -> None:
    async with (
        Emulator(EmulatorConfig(mcp_stateless=False)) as emulator,
        McpToolRegistrationService(configuration=production_config(emulator)) as service,
    ):
        tasks_before = other_tasks()
        async with service.connected_agent(
            Agent(name="a"), emulator.authorization(), AUTH_HANDLER, turn
        ) as agent:
            mail = next(s for s in agent.mcp_servers if s.name == "mail")
            await mail.call_tool("list_emails", {})
            opened = _initializes(emulator)
            # The server forgot the session: 404 on its mcp-session-id, as the MCP spec says.
            emulator.faults.set("mcp:mail", Fault(status=404, mcp_method="tools/call", times=1))
            assert not (await mail.call_tool("list_emails", {})).isError
            assert _initializes(emulator) == opened + 1  # a new session, once
            emulator.faults.set("mcp:mail", Fault(status=404, mcp_method="tools/call", times=2))
            with pytest.raises(McpServerConnectionError, match="'mail'") as caught:
                await mail.call_tool("list_emails", {})
            assert caught.value.server_name == "mail"
            assert _initializes(emulator) == opened + 2  # one more attempt, not more
            assert not (await mail.call_tool("list_emails", {})).isError  # the fault is spent
        assert not await leaked_tasks(tasks_before)


@dataclass
class _SlowAndFailing(HostileMcp):
    """``slow`` answers once ``fail`` was answered with an HTTP 500 while ``slow`` was in flight."""

    def __post_init__(self) -> None:
        self.slow_arrived = asyncio.Event()
        self.failed = asyncio.Event()
        self.calls: list[str] = []

    async def __call__(self, request: Request, writer: asyncio.StreamWriter) -> None:
        message = json.loads(request.body) if request.method == "POST" else {}
        if message.get("method") == "tools/list":
            tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("slow", "fail")]
            _answer(writer, 200, {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": tools}})
            await writer.drain()
            return
        if message.get("method") == "tools/call":
            name = message["params"]["name"]
            self.calls.append(name)
            if name == "fail":
                await asyncio.wait_for(self.slow_arrived.wait(), SAFETY)
                _answer(writer, 500, {"error": "boom"})
                await writer.drain()
                self.failed.set()
                return
            self.slow_arrived.set()
            await asyncio.wait_for(self.failed.wait(), SAFETY)
        await super().__call__(request, writer)


async def test_a_call_failing_on_the_wire_fails_alone_typed_and_its_siblings_go_on(
    turn: TurnContext,
) -> None:
    mcp = _SlowAndFailing()
    async with HostileServer() as server:
        server.route("/mcp", mcp)
        entry = {"mcpServerName": "odd", "url": f"{server.base_url}/mcp"}
        server.route("/mcpServers", behaviours.respond(200, {"mcpServers": [entry]}))
        config = ToolingConfiguration(
            mcp_platform_endpoint=server.base_url, use_tooling_manifest=False, request_timeout=5.0
        )
        token = make_jwt(appid=DEFAULT_AGENT_ID)
        async with (
            McpToolRegistrationService(configuration=config) as service,
            service.connected_agent(Agent(name="a"), None, None, turn, auth_token=token) as agent,
        ):
            (odd,) = agent.mcp_servers
            async with asyncio.timeout(SAFETY):
                outcomes: list[Any] = await asyncio.gather(
                    odd.call_tool("slow", {}), odd.call_tool("fail", {}), return_exceptions=True
                )
                # The HTTP 500 fails its own call only (typed, transient); the sibling in flight on the same
                # session gets its answer (mcp's transport ended the session under both).
                slow, failed = outcomes
                assert isinstance(failed, McpServerConnectionError), outcomes
                assert failed.transient
                assert not slow.isError, outcomes
                assert sorted(mcp.calls) == ["fail", "slow"]  # not sent again (the tool may have run)
                assert not (await odd.call_tool("slow", {})).isError  # the same session goes on
            methods = [json.loads(r.body).get("method") for r in server.requests if r.method == "POST"]
            assert methods.count("initialize") == 1
