"""Warm turns (issue 9, target 2): cached tool definitions, lazy connection, never shared across users.

Every check reads what the emulator saw: which MCP requests came, and with whose token.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agents import Agent, Runner, Tool
from agents.mcp import MCPServer
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator, EmulatorAuthorization, Fault
from agents_a365.runtime import decode_token_payload
from agents_a365.tooling import McpToolServerConfigurationService
from agents_a365.tooling.extensions.openai import McpToolRegistrationService
from support.clock import FakeClock
from support.leaks import leaked_tasks, other_tasks
from support.platform import AUTH_HANDLER, production_config
from support.scripted_openai import ScriptedModel, assistant_message, function_call, tool_outputs
from support.turns import make_turn_context
from support.waiting import until


def _mcp_methods(emulator: Emulator, since: int = 0) -> list[str | None]:
    return [r.jsonrpc_method for r in emulator.requests_for("mcp")[since:]]


def _users(emulator: Emulator, since: int = 0) -> set[str]:
    """The user (``oid``) of every token the MCP servers received since request ``since``."""
    users = set()
    for request in emulator.requests_for("mcp")[since:]:
        token = request.headers["authorization"].removeprefix("Bearer ")
        users.add(decode_token_payload(token)["oid"])
    return users


def _server(agent: Agent[Any], name: str) -> MCPServer:
    return next(s for s in agent.mcp_servers if s.name == name)


async def test_warm_turn_registers_without_any_request_and_calls_on_the_pooled_session(
    emulator: Emulator,
    service: McpToolRegistrationService,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
) -> None:
    async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn) as agent:
        cold_tools = {s.name: [t.name for t in await s.list_tools()] for s in agent.mcp_servers}
    assert "tools/list" in _mcp_methods(emulator)
    gateway, exchanges, mcp = (
        len(emulator.requests_for("gateway")),
        authorization.exchange_count,
        len(emulator.requests_for("mcp")),
    )

    tasks_before = other_tasks()
    async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn) as agent:
        warm_tools = {s.name: [t.name for t in await s.list_tools()] for s in agent.mcp_servers}
        # Registered and listed from the caches: no gateway, no token exchange, no MCP request.
        assert (len(emulator.requests_for("gateway")), authorization.exchange_count) == (gateway, exchanges)
        assert _mcp_methods(emulator, mcp) == []
        assert warm_tools == cold_tools

        result = await _server(agent, "mail").call_tool("list_emails", {})
        assert not result.isError
        # The call went to that one server, on the session the cold turn listed on, with this user's token.
        assert {r.server for r in emulator.requests_for("mcp")[mcp:]} == {"mail"}
        assert _mcp_methods(emulator, mcp) == ["tools/call"]
        assert _users(emulator, mcp) == {"user-1"}
    assert not await leaked_tasks(tasks_before)  # nothing of the turn's own is left


async def test_two_users_never_share_tool_definitions_or_tokens(
    emulator: Emulator, service: McpToolRegistrationService, authorization: EmulatorAuthorization
) -> None:
    alice = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, user_id="alice")
    bob = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, user_id="bob")

    async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, alice):
        pass
    mark = len(emulator.requests_for("mcp"))
    async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, bob) as agent:
        # Bob's first turn is a miss: Alice's cached definitions are not his.
        assert _mcp_methods(emulator, mark).count("tools/list") == 2
        await _server(agent, "calendar").call_tool("list_events", {"date": "2026-11-21"})
    assert _users(emulator, mark) == {"bob"}

    for user, context in [("alice", alice), ("bob", bob), ("alice", alice)]:
        mark = len(emulator.requests_for("mcp"))
        async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, context) as agent:
            assert _mcp_methods(emulator, mark) == []  # warm for each of them
            await _server(agent, "mail").call_tool("list_emails", {})
        assert _users(emulator, mark) == {user}


async def test_tool_cache_ttl_zero_lists_on_every_turn(
    emulator: Emulator, authorization: EmulatorAuthorization, turn: TurnContext
) -> None:
    config = production_config(emulator, tool_cache_ttl=0)
    async with McpToolRegistrationService(configuration=config) as service:
        for _ in range(2):
            mark = len(emulator.requests_for("mcp"))
            async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn):
                assert _mcp_methods(emulator, mark).count("tools/list") == 2


async def test_tool_cache_entries_expire_after_the_ttl(
    emulator: Emulator, authorization: EmulatorAuthorization, turn: TurnContext
) -> None:
    clock = FakeClock()
    core = McpToolServerConfigurationService(production_config(emulator, tool_cache_ttl=60), clock=clock)
    async with core, McpToolRegistrationService(core) as service:
        async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn):
            pass
        clock.advance(59)
        mark = len(emulator.requests_for("mcp"))
        async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn):
            assert _mcp_methods(emulator, mark).count("tools/list") == 0  # still cached
        clock.advance(2)
        mark = len(emulator.requests_for("mcp"))
        async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn) as agent:
            # Expired less than a TTL ago: the turn has its servers at once, each refreshed in the background.
            assert len(agent.mcp_servers) == 2
        servers = await core.list_tool_servers(
            turn, authorization, AUTH_HANDLER, None, service.tool_options(None)
        )
        await until(lambda: all(core.tool_definitions.get(s.url, s.headers) is not None for s in servers))
        assert _mcp_methods(emulator, mark).count("tools/list") == 2  # one refresh per server
        clock.advance(121)  # two TTLs after the refresh: the turn lists them itself
        mark = len(emulator.requests_for("mcp"))
        async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn):
            assert _mcp_methods(emulator, mark).count("tools/list") == 2


async def test_a_cached_server_failing_transiently_on_first_use_keeps_its_definitions(
    emulator: Emulator,
    service: McpToolRegistrationService,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
) -> None:
    async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn):
        pass
    emulator.faults.set("mcp:mail", Fault(status=503, mcp_method="tools/call"))
    async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn) as agent:
        with pytest.raises(Exception, match=r"'mail'"):
            await _server(agent, "mail").call_tool("list_emails", {})
    emulator.faults.clear()

    mark = len(emulator.requests_for("mcp"))
    async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn) as agent:
        listed = [r.server for r in emulator.requests_for("mcp")[mark:] if r.jsonrpc_method == "tools/list"]
        result = await _server(agent, "mail").call_tool("list_emails", {})
    assert listed == []  # an HTTP 503 says nothing about the definitions: both servers' stay cached
    assert not result.isError


async def test_lazy_connection_opened_by_another_task_closes_cleanly(
    emulator: Emulator,
    service: McpToolRegistrationService,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
) -> None:
    async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn):
        pass
    service.configuration.set_overrides(mcp_session_idle_timeout=0)  # no session kept: opened by a call
    tasks_before = other_tasks()
    async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn) as agent:
        # The SDK's runner calls tools from its own tasks; the turn closes from this one.
        calls = [asyncio.create_task(_server(agent, "mail").call_tool("list_emails", {})) for _ in range(3)]
        results = await asyncio.gather(*calls)
    assert all(not r.isError for r in results)
    assert _mcp_methods(emulator).count("initialize") == 3  # cold mail + cold calendar + one lazy connect
    assert not await leaked_tasks(tasks_before, pooled=True)  # closed once its last call returned


async def test_runner_uses_a_warm_agent_end_to_end(
    emulator: Emulator,
    service: McpToolRegistrationService,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
) -> None:
    def call_send_email(items: list[Any], tools: list[Tool]) -> list[Any]:
        assert {"send_email", "list_events"} <= {t.name for t in tools}
        return [function_call("send_email", {"to": "bob@contoso.example", "subject": "Hi", "body": "Lunch?"})]

    def answer(items: list[Any], tools: list[Tool]) -> list[Any]:
        (output,) = tool_outputs(items)
        return [assistant_message(f"sent {json.loads(output)['id']}")]

    async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn):
        pass
    mark = len(emulator.requests_for("mcp"))
    template = Agent(name="assistant", model=ScriptedModel([call_send_email, answer]))
    async with service.connected_agent(template, authorization, AUTH_HANDLER, turn) as agent:
        result = await Runner.run(agent, "Email Bob about lunch")
    (email,) = emulator.servers["mail"].state.sent
    assert result.final_output == f"sent {email.id}"
    # Only the server whose tool ran was connected, and tools/list never went out.
    assert {r.server for r in emulator.requests_for("mcp")[mark:]} == {"mail"}
    assert "tools/list" not in _mcp_methods(emulator, mark)


async def test_using_cached_definitions_does_not_extend_their_ttl(
    emulator: Emulator, authorization: EmulatorAuthorization, turn: TurnContext
) -> None:
    clock = FakeClock()
    core = McpToolServerConfigurationService(production_config(emulator, tool_cache_ttl=60), clock=clock)
    async with core, McpToolRegistrationService(core) as service:
        async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn):
            pass  # listed (and cached) now
        clock.advance(35)
        async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn) as agent:
            mail = _server(agent, "mail")
            await mail.call_tool("list_emails", {})  # connects lazily
            await mail.list_tools()  # answered from the seeded definitions, not re-cached
        clock.advance(35)  # past the TTL of the first listing
        mark = len(emulator.requests_for("mcp"))
        async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn):
            pass  # expired (not extended at 35 s): served while both servers are refreshed in the background
        servers = await core.list_tool_servers(
            turn, authorization, AUTH_HANDLER, None, service.tool_options(None)
        )
        await until(lambda: all(core.tool_definitions.get(s.url, s.headers) is not None for s in servers))
        assert _mcp_methods(emulator, mark).count("tools/list") == 2
