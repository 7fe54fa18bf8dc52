"""The seed-form tools (``get_mcp_tools`` / ``add_tool_servers_to_agent``) reuse pooled MCP sessions.

Counted at the real emulator: the ``initialize`` requests a server receives are the sessions opened. One
session per (server, user token) for the registration's listing and every call of every turn, in the
tooling service's pool, until idle, token expiry, the bound, a dropped session or the service's ``aclose()``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agents_a365.emulator import Emulator, EmulatorConfig, Fault
from agents_a365.tooling import McpToolServerConfigurationService
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService
from support.clock import FakeClock
from support.leaks import leaked_tasks
from support.platform import AUTH_HANDLER, production_config
from support.scripted_langchain import ScriptedChatModel, call, calls
from support.turns import make_turn_context


def _sessions(emu: Emulator, server: str = "mail") -> int:
    return sum(1 for r in emu.requests_for("mcp", server=server) if r.jsonrpc_method == "initialize")


def _deletes(emu: Emulator, server: str = "mail") -> int:
    return sum(1 for r in emu.requests_for("mcp", server=server) if r.method == "DELETE")


@pytest.fixture
async def emulator() -> AsyncIterator[Emulator]:
    # Stateful MCP servers: sessions have ids (Mcp-Session-Id) and end with a DELETE, as in production.
    async with Emulator(EmulatorConfig(mcp_stateless=False)) as emu:
        yield emu


async def _ended(emu: Emulator, count: int, *servers: str) -> None:
    """Wait (bounded) until the servers saw ``count`` DELETEs: closing a session ends it in the background."""
    async with asyncio.timeout(5):
        while sum(_deletes(emu, s) for s in servers) < count:  # noqa: ASYNC110 - polling the recorder
            await asyncio.sleep(0.005)


@pytest.fixture
async def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def pooled(emulator: Emulator, clock: FakeClock) -> AsyncIterator[McpToolRegistrationService]:
    core = McpToolServerConfigurationService(production_config(emulator), clock=clock)
    async with core, McpToolRegistrationService(core) as service:
        yield service


async def _tools(service: McpToolRegistrationService, emu: Emulator, user: str = "user-1") -> dict[str, Any]:
    turn = make_turn_context(user_id=user, agentic_app_id=emu.config.agent_id)
    return {t.name: t for t in await service.get_mcp_tools(emu.authorization(), AUTH_HANDLER, turn)}


async def test_calls_of_a_turn_and_of_later_turns_share_one_session(
    emulator: Emulator, pooled: McpToolRegistrationService
) -> None:
    tools = await _tools(pooled, emulator)
    assert _sessions(emulator) == 1  # the registration's listing session ...
    for _ in range(5):
        await tools["list_emails"].ainvoke({})
    assert _sessions(emulator) == 1  # ... is the one the five calls use
    for _ in range(3):  # later turns: warm registration, same user token, same session
        tools = await _tools(pooled, emulator)
        await tools["list_emails"].ainvoke({})
    assert _sessions(emulator) == 1
    assert len(pooled.session_pool) == 2  # mail's and calendar's (listed), nothing per turn


async def test_the_seed_form_agent_reuses_the_session_across_turns(
    emulator: Emulator, pooled: McpToolRegistrationService
) -> None:
    turn = make_turn_context(agentic_app_id=emulator.config.agent_id)
    model = ScriptedChatModel(script=[calls(call("list_emails")), calls(text="done")], repeat_last=False)
    for _ in range(2):
        model.seen.clear()
        agent = await pooled.add_tool_servers_to_agent(
            emulator.authorization(), AUTH_HANDLER, turn, agent_options={"model": model, "tools": []}
        )
        await agent.ainvoke({"messages": [{"role": "user", "content": "mail?"}]})
    calls_made = [r for r in emulator.requests_for("mcp", server="mail") if r.jsonrpc_method == "tools/call"]
    assert len(calls_made) == 2
    assert _sessions(emulator) == 1  # one pooled session: the listing and both turns' calls


async def test_sessions_are_never_shared_between_users(
    emulator: Emulator, pooled: McpToolRegistrationService
) -> None:
    await _tools(pooled, emulator, "alice"), await _tools(pooled, emulator, "bob")
    listed = _sessions(emulator)
    for user in ("alice", "bob", "alice"):  # a turn each: registered (warm) then called, as a host does
        await (await _tools(pooled, emulator, user))["list_emails"].ainvoke({})
    assert _sessions(emulator) == listed == 2  # each user's listing session serves their calls
    calls_made = [r for r in emulator.requests_for("mcp", server="mail") if r.jsonrpc_method == "tools/call"]
    sessions_by_token: dict[str, set[str]] = {}
    for r in calls_made:
        sessions_by_token.setdefault(r.headers["authorization"], set()).add(r.headers["mcp-session-id"])
    assert len(sessions_by_token) == 2  # two users' tokens ...
    assert all(len(ids) == 1 for ids in sessions_by_token.values())  # ... each on its own session
    assert set.isdisjoint(*sessions_by_token.values())


async def test_aclose_closes_every_session_and_leaves_no_task(emulator: Emulator, clock: FakeClock) -> None:
    before = set(asyncio.all_tasks())
    core = McpToolServerConfigurationService(production_config(emulator), clock=clock)
    async with core:
        service = McpToolRegistrationService(core)
        tools = await _tools(service, emulator)
        await tools["list_emails"].ainvoke({})
        await tools["list_events"].ainvoke({})
        assert len(service.session_pool) == 2
        deletes = _deletes(emulator, "mail") + _deletes(emulator, "calendar")
        await service.aclose()  # the extension's: the sessions are the tooling service's
        assert len(service.session_pool) == 2
        await core.aclose()
        assert (
            _deletes(emulator, "mail") + _deletes(emulator, "calendar") == deletes + 2
        )  # ended at the server
        assert await leaked_tasks(before) == set()
        with pytest.raises(RuntimeError, match="closed"):
            await tools["list_emails"].ainvoke({})


async def test_an_idle_session_is_closed_and_the_next_call_opens_a_new_one(
    emulator: Emulator, pooled: McpToolRegistrationService, clock: FakeClock
) -> None:
    tools = await _tools(pooled, emulator)
    await tools["list_emails"].ainvoke({})
    opened, deletes = _sessions(emulator), _deletes(emulator)
    clock.advance(pooled.configuration.mcp_session_idle_timeout - 1)
    await tools["list_emails"].ainvoke({})  # still warm
    assert _sessions(emulator) == opened
    clock.advance(pooled.configuration.mcp_session_idle_timeout + 1)
    pooled.session_pool.prune()  # what the idle timer does
    assert len(pooled.session_pool) == 0
    await tools["list_emails"].ainvoke({})
    assert _sessions(emulator) == opened + 1
    await _ended(emulator, deletes + 1, "mail")  # the idle one was ended at the server


async def test_a_session_is_closed_when_its_token_expires(emulator: Emulator, clock: FakeClock) -> None:
    config = production_config(emulator, mcp_session_idle_timeout=100_000)
    core = McpToolServerConfigurationService(config, clock=clock)
    async with core, McpToolRegistrationService(core) as service:
        tools = await _tools(service, emulator)
        await tools["list_emails"].ainvoke({})
        assert len(service.session_pool) == 2  # mail's and calendar's
        clock.advance(3600)  # the emulator's tokens live one hour (minus the expiry skew)
        service.session_pool.prune()
        assert len(service.session_pool) == 0


async def test_a_dropped_session_is_reopened_once(
    emulator: Emulator, pooled: McpToolRegistrationService
) -> None:
    tools = await _tools(pooled, emulator)
    await tools["list_emails"].ainvoke({})
    opened = _sessions(emulator)
    # The server forgets the session: a 404 on the session id, as the MCP spec says.
    emulator.faults.set("mcp:mail", Fault(status=404, mcp_method="tools/call", times=1))
    result = await tools["list_emails"].ainvoke({})
    assert "error" not in str(result).lower()
    assert _sessions(emulator) == opened + 1


async def test_a_session_dropped_twice_fails_the_call_as_a_tool_error(
    emulator: Emulator, pooled: McpToolRegistrationService
) -> None:
    tools = await _tools(pooled, emulator)
    await tools["list_emails"].ainvoke({})
    opened = _sessions(emulator)
    emulator.faults.set("mcp:mail", Fault(status=404, mcp_method="tools/call", times=2))
    # A transient failure: the model hears it and the turn goes on (issue 38).
    assert "Session terminated" in str(await tools["list_emails"].ainvoke({}))
    assert _sessions(emulator) == opened + 1  # one reconnect, not more
    await tools["list_emails"].ainvoke({})  # the fault is spent: the pool serves again


async def test_the_pool_keeps_at_most_max_mcp_sessions_open(emulator: Emulator, clock: FakeClock) -> None:
    config = production_config(emulator, max_mcp_sessions=1)
    core = McpToolServerConfigurationService(config, clock=clock)
    async with core, McpToolRegistrationService(core) as service:
        tools = await _tools(service, emulator)  # two listings at once: over the bound while busy
        assert len(service.session_pool) == 1  # back under it once idle
        for _ in range(2):
            await tools["list_emails"].ainvoke({})
            assert len(service.session_pool) == 1
            await tools["list_events"].ainvoke({})
            assert len(service.session_pool) == 1  # the idle mail session made room


async def test_cancelling_one_call_leaves_the_shared_session_to_the_others(
    emulator: Emulator, pooled: McpToolRegistrationService
) -> None:
    tools = await _tools(pooled, emulator)
    await tools["list_emails"].ainvoke({})
    opened = _sessions(emulator)
    emulator.faults.set("mcp:mail", Fault(latency_ms=300, mcp_method="tools/call", times=2))
    slow = asyncio.create_task(tools["list_emails"].ainvoke({}))
    other = asyncio.create_task(tools["list_emails"].ainvoke({}))
    async with asyncio.timeout(10):
        while sum(1 for r in emulator.requests_for("mcp", server="mail") if r.fault) < 2:  # noqa: ASYNC110
            await asyncio.sleep(0.005)
    slow.cancel()
    with pytest.raises(asyncio.CancelledError):
        await slow
    assert "error" not in str(await other).lower()
    await tools["list_emails"].ainvoke({})
    assert _sessions(emulator) == opened  # the same session served all of them


async def test_an_idle_timeout_of_zero_turns_reuse_off(emulator: Emulator, clock: FakeClock) -> None:
    config = production_config(emulator, mcp_session_idle_timeout=0)
    core = McpToolServerConfigurationService(config, clock=clock)
    async with core, McpToolRegistrationService(core) as service:
        tools = await _tools(service, emulator)
        listed = _sessions(emulator)
        await tools["list_emails"].ainvoke({})
        await tools["list_emails"].ainvoke({})
        assert _sessions(emulator) == listed + 2
        assert len(service.session_pool) == 0
