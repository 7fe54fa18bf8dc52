"""Issue 27: settings changed between turns of a long-lived service apply to the next turn."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import Emulator, Fault
from agents_a365.tooling import ChatHistoryMessage, McpToolServerConfigurationService, ToolingConfiguration
from support.clock import FakeClock
from support.guard import Guard
from support.platform import AUTH_HANDLER
from support.turns import make_turn_context

HISTORY = [ChatHistoryMessage(id="h1", role="user", content="hi", timestamp=datetime(2026, 1, 1, tzinfo=UTC))]


async def test_chat_history_concurrency_changed_at_run_time_applies_to_the_next_sends(
    emu: Emulator, guard: Guard, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("A365_CHAT_HISTORY_CONCURRENCY", "64")
    config = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
    async with McpToolServerConfigurationService(config) as service:

        async def burst(tag: str) -> None:
            turns = [make_turn_context(activity_id=f"{tag}-{i}") for i in range(6)]
            results = await asyncio.gather(*(service.send_chat_history(t, HISTORY) for t in turns))
            assert all(r.succeeded for r in results)

        # A barrier of 6: released only when six sends are on the wire at once (counted, not timed).
        emu.faults.set("rtp", Fault(hold_until_concurrent=6, times=6))
        await burst("wide")
        assert [r.held_together for r in emu.requests_for("rtp")] == [6] * 6

        monkeypatch.setenv("A365_CHAT_HISTORY_CONCURRENCY", "2")
        emu.recorder.clear()
        # A barrier of 3 that never fills with two sends in flight: each wave goes on after 150 ms.
        emu.faults.set("rtp", Fault(hold_until_concurrent=3, hold_timeout_ms=150))
        await burst("narrow")
        held = [r.held_together for r in emu.requests_for("rtp")]
        assert len(held) == 6
        assert max(held) == 2, held  # never three on the wire (with 64 slots: three at once)
    await guard.assert_clean(check_tokens=False)


async def test_tool_cache_ttl_changed_at_run_time_applies_to_the_next_lookup(
    emu: Emulator, turn: TurnContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("A365_TOOL_CACHE_TTL", "300")
    clock = FakeClock()
    config = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
    async with McpToolServerConfigurationService(config, clock=clock) as service:
        [mail] = [
            s
            for s in await service.list_tool_servers(turn, emu.authorization(), AUTH_HANDLER)
            if s.mcp_server_name == "mail"
        ]

        def listings() -> int:
            return sum(r.jsonrpc_method == "tools/list" for r in emu.requests_for("mcp", server="mail"))

        await service.list_mcp_tools(mail)
        await service.list_mcp_tools(mail)
        assert listings() == 1  # cached

        monkeypatch.setenv("A365_TOOL_CACHE_TTL", "0")  # off: every turn lists again
        await service.list_mcp_tools(mail)
        await service.list_mcp_tools(mail)
        assert listings() == 3

        monkeypatch.setenv("A365_TOOL_CACHE_TTL", "300")
        await service.list_mcp_tools(mail)
        clock.advance(20)
        monkeypatch.setenv("A365_TOOL_CACHE_TTL", "10")  # shortened: an entry older than 10 s is stale now
        await service.list_mcp_tools(mail)
        assert listings() == 5


async def test_tool_cache_ttl_changed_at_run_time_applies_to_the_extensions_too(
    emu: Emulator, turn: TurnContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents_a365.tooling.extensions.langchain import McpToolRegistrationService

    monkeypatch.setenv("A365_TOOL_CACHE_TTL", "300")
    config = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
    async with McpToolRegistrationService(configuration=config) as service:

        def listings() -> int:
            return sum(r.jsonrpc_method == "tools/list" for r in emu.requests_for("mcp", server="mail"))

        for _ in range(2):
            await service.get_mcp_tools(emu.authorization(), AUTH_HANDLER, turn)
        assert listings() == 1
        monkeypatch.setenv("A365_TOOL_CACHE_TTL", "0")
        for _ in range(2):
            await service.get_mcp_tools(emu.authorization(), AUTH_HANDLER, turn)
        assert listings() == 3


async def test_session_settings_changed_at_run_time_apply_to_the_pool(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``A365_MAX_MCP_SESSIONS`` and ``A365_MCP_SESSION_IDLE_TIMEOUT`` are read at each use of the pool."""
    monkeypatch.setenv("A365_MAX_MCP_SESSIONS", "256")
    monkeypatch.setenv("A365_MCP_SESSION_IDLE_TIMEOUT", "60")
    config = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
    async with McpToolServerConfigurationService(config) as service:

        async def list_for(user: str) -> None:
            turn = make_turn_context(user_id=user, agentic_app_id=emu.config.agent_id)
            servers = await service.list_tool_servers(turn, emu.authorization(), AUTH_HANDLER)
            await asyncio.gather(*(service.get_mcp_client_tools(s.mcp_server_name, s) for s in servers))

        for user in ("u1", "u2", "u3"):
            await list_for(user)
        assert len(service.session_pool) == 6  # 3 users x 2 servers, kept
        monkeypatch.setenv("A365_MAX_MCP_SESSIONS", "2")
        await list_for("u4")
        assert len(service.session_pool) == 2  # the bound read at this use: back under it once idle
        monkeypatch.setenv("A365_MCP_SESSION_IDLE_TIMEOUT", "0")
        await list_for("u5")
        assert len(service.session_pool) == 0  # no reuse: closed as soon as listed


async def test_many_users_keep_at_most_max_mcp_sessions_open(emu: Emulator) -> None:
    """Thousands of users over a host's life: the pool never keeps more than its bound once idle, and
    every user is still served (the least recently used idle session makes room)."""
    config = ToolingConfiguration(
        mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False, max_mcp_sessions=5
    )
    async with McpToolServerConfigurationService(config) as service:
        for batch in range(4):
            users = [f"user-{batch}-{i}" for i in range(8)]

            async def turn_of(user: str) -> None:
                turn = make_turn_context(user_id=user, agentic_app_id=emu.config.agent_id)
                servers = await service.list_tool_servers(turn, emu.authorization(), AUTH_HANDLER)
                mail = next(s for s in servers if s.mcp_server_name == "mail")
                assert await service.list_mcp_tools(mail)
                result = await service.session_pool.call_tool(mail, "list_emails", {})
                assert not result.isError

            await asyncio.gather(*(turn_of(u) for u in users))  # 8 users x 2 servers at once: over the bound
            assert len(service.session_pool) <= 5
        assert service.session_pool.opened >= 32


async def test_cache_max_entries_bounds_every_cache_and_is_read_at_each_use(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tokens, discovery results and tool definitions are cached per user: ``A365_CACHE_MAX_ENTRIES``
    bounds each cache (the least recently used user goes first), read at each store."""
    monkeypatch.setenv("A365_CACHE_MAX_ENTRIES", "2")
    authorization = emu.authorization()
    config = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
    async with McpToolServerConfigurationService(config) as service:

        async def turn_of(user: str) -> None:
            turn = make_turn_context(user_id=user, agentic_app_id=emu.config.agent_id)
            servers = await service.list_tool_servers(turn, authorization, AUTH_HANDLER)
            await service.list_mcp_tools(next(s for s in servers if s.mcp_server_name == "mail"))

        def counts() -> tuple[int, int, int]:
            listings = sum(r.jsonrpc_method == "tools/list" for r in emu.requests_for("mcp", server="mail"))
            return len(emu.requests_for("gateway")), len(authorization.exchanges), listings

        for user in ("u1", "u2", "u3"):
            await turn_of(user)
        first = counts()
        await turn_of("u1")  # three users in caches of two: u1's entries went first
        gateway, exchanges, listings = counts()
        assert (gateway, listings) == (first[0] + 1, first[2] + 1)
        assert exchanges > first[1]

        monkeypatch.setenv("A365_CACHE_MAX_ENTRIES", "100")  # read at the next store
        for user in ("u2", "u3", "u1", "u2", "u3"):
            await turn_of(user)
        settled = counts()
        for user in ("u1", "u2", "u3"):
            await turn_of(user)
        assert counts() == settled  # all three users cached now: nothing requested


def test_the_default_bound_keeps_a_thousand_users_of_eight_servers() -> None:
    """At the default ``cache_max_entries`` 1,000 users of 8 servers keep their tool definitions (with 4,096
    per cache their warm turns evicted each other and listed again: the host benchmark's 1,000 phase)."""
    service = McpToolServerConfigurationService(ToolingConfiguration(use_tooling_manifest=False))
    cache = service.tool_definitions
    for user in range(1_000):
        for server in range(8):
            cache.put(f"https://mcp.example/{server}", {"Authorization": f"Bearer {user}"}, [])
    assert cache.get("https://mcp.example/0", {"Authorization": "Bearer 0"}) == ()


async def test_a_background_refresh_in_flight_ends_with_the_service(emu: Emulator) -> None:
    """An expired entry is refreshed in a task nobody waits for: ``aclose()`` cancels it, nothing is left."""
    from support.leaks import leaked_tasks, other_tasks
    from support.waiting import until

    before = other_tasks()
    clock = FakeClock()
    config = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
    service = McpToolServerConfigurationService(config, clock=clock)
    turn = make_turn_context(agentic_app_id=emu.config.agent_id)
    mail = next(
        s
        for s in await service.list_tool_servers(turn, emu.authorization(), AUTH_HANDLER)
        if s.mcp_server_name == "mail"
    )
    await service.list_mcp_tools(mail)
    clock.advance(config.tool_cache_ttl + 1)
    emu.faults.set("mcp", Fault(latency_ms=30_000, mcp_method="tools/list"))  # the refresh hangs
    mark = len(emu.requests_for("mcp"))
    assert await service.list_mcp_tools(mail)  # the expired definitions, at once
    await until(lambda: len(emu.requests_for("mcp")) > mark)  # the refresh is on the wire
    async with asyncio.timeout(5):
        await service.aclose()
    emu.faults.clear()
    assert not await leaked_tasks(before, pooled=True)


async def test_entries_expiring_together_are_refreshed_a_few_at_a_time(emu: Emulator) -> None:
    """Users who started together expire together: their refreshes trickle (``MAX_REFRESHES`` per cache)
    instead of competing with the turns for the servers; an entry waiting for a slot still serves."""
    from agents_a365.tooling._cache import MAX_REFRESHES
    from support.waiting import until

    clock = FakeClock()
    config = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
    async with McpToolServerConfigurationService(config, clock=clock) as service:
        mails = []
        for user in range(3 * MAX_REFRESHES):
            turn = make_turn_context(user_id=f"u{user}", agentic_app_id=emu.config.agent_id)
            servers = await service.list_tool_servers(turn, emu.authorization(), AUTH_HANDLER)
            mails.append(next(s for s in servers if s.mcp_server_name == "mail"))
        await asyncio.gather(*(service.list_mcp_tools(m) for m in mails))
        cache = service.tool_definitions

        def listings() -> int:
            return sum(r.jsonrpc_method == "tools/list" for r in emu.requests_for("mcp", server="mail"))

        def refreshed() -> int:
            return sum(cache.get(m.url, m.headers) is not None for m in mails)

        assert listings() == len(mails)
        clock.advance(config.tool_cache_ttl + 1)  # every entry expired at once
        for expected in (MAX_REFRESHES, 2 * MAX_REFRESHES, 3 * MAX_REFRESHES):
            for mail in mails:  # every user's next turn: served at once, whatever the slots
                assert await service.list_mcp_tools(mail)
            await until(lambda: refreshed() == expected)  # noqa: B023 (awaited in this iteration)
            # A refresh stores its entry, then frees its slot in its task's done callback, one loop turn later:
            # the next lookups come after that turn, as a real turn's would (not in the same loop step).
            await asyncio.sleep(0)
            assert listings() == len(mails) + expected  # no more than the slots took
