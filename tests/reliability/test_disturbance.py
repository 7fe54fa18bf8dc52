"""A platform hiccup must not become an outage (issue 38): real servers on 127.0.0.1, an injected clock."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import random
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agents_a365.emulator import Emulator, EmulatorConfig, Fault
from agents_a365.tooling import (
    MCPServerConfig,
    McpServerConnectionError,
    McpServerUnavailableError,
    ToolDefinitionCache,
)
from agents_a365.tooling.extensibility import McpSessionPool
from agents_a365.tooling.mcp_http import SharedTransport, mcp_http_client_factory
from support.clock import FakeClock
from support.hostile_mcp import HostileMcp, _answer
from support.hostile_server import HostileServer, Request, behaviours
from support.platform import mail_server
from support.telemetry import recorded_telemetry
from support.waiting import until


@pytest.fixture
async def emulator() -> AsyncIterator[Emulator]:
    async with Emulator(EmulatorConfig(mcp_stateless=False)) as emu:
        yield emu


def _calls(emu: Emulator) -> int:
    return sum(1 for r in emu.requests_for("mcp", server="mail") if r.jsonrpc_method == "tools/call")


async def test_a_request_on_a_keep_alive_connection_the_server_closed_is_sent_again_on_a_fresh_one() -> None:
    # The server closes a keep-alive connection idle for 5 ms; 20 clients each wait 3-7 ms between requests,
    # so many requests go out on a connection the server is closing. None of those reached its application
    # (it counts the requests it read); each is sent again on a fresh connection: no request fails.
    rng = random.Random(38)
    failures: list[str] = []
    async with HostileServer(idle_timeout=0.005) as server:
        server.route("/mcp", behaviours.respond(200, {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}))
        transport = SharedTransport()
        client = mcp_http_client_factory({}, transport=transport)

        async def user() -> None:
            for _ in range(50):
                await asyncio.sleep(rng.uniform(0.003, 0.007))
                try:
                    await client.post(
                        f"{server.base_url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
                    )
                except Exception as exc:
                    failures.append(f"{type(exc).__name__}: {exc}")

        try:
            await asyncio.gather(*(user() for _ in range(20)))
        finally:
            await client.aclose()
            await transport.close()
        assert failures == []
        assert len(server.requests) == 1000
        assert server.connections > 1000 * 0.05  # the race happened: requests were sent on closed connections


async def test_one_requests_failure_does_not_end_its_session_for_the_others(emulator: Emulator) -> None:
    server = mail_server(emulator)
    async with McpSessionPool(timeout=10) as pool:
        tool = (await pool.list_tools(server))[0].name
        # The first call is answered 503 after 0.3 s; the second, sent while it waits, after 1 s.
        emulator.faults.set("mcp:mail", Fault(status=503, mcp_method="tools/call", times=1, latency_ms=300))
        emulator.faults.set("mcp", Fault(latency_ms=1000, mcp_method="tools/call"))

        async def second() -> object:
            await until(lambda: _calls(emulator) >= 1)
            return await pool.call_tool(server, tool, {})

        first, other = await asyncio.gather(
            pool.call_tool(server, tool, {}), second(), return_exceptions=True
        )
        assert isinstance(first, McpServerConnectionError)
        assert "HTTP 503" in str(first)
        assert first.transient
        assert not isinstance(other, BaseException), other  # answered, on the same session
        await pool.call_tool(server, tool, {})
        assert pool.opened == 1


async def test_definitions_past_their_ttl_serve_while_refreshes_fail_up_to_four_ttls(
    emulator: Emulator,
) -> None:
    clock = FakeClock()
    cache = ToolDefinitionCache(10.0, clock=clock)
    server = mail_server(emulator)
    async with McpSessionPool(timeout=5) as pool:

        async def definitions() -> tuple[object, ...]:
            return await cache.get_or_list(server.url, server.headers, lambda: pool.list_tools(server))

        listed = await definitions()
        emulator.faults.set("mcp", Fault(status=503, mcp_method="tools/list"))
        clock.advance(15)  # stale: served at once, refreshed in the background (which fails)
        assert await definitions() == listed
        await asyncio.gather(*cache.refreshes(), return_exceptions=True)
        clock.advance(10)  # 25 s: past two TTLs, its refreshes failing: still served
        assert await definitions() == listed
        clock.advance(10)  # 35 s: refreshed (and failed) again, still served
        assert await definitions() == listed
        await asyncio.gather(*cache.refreshes(), return_exceptions=True)
        clock.advance(6)  # 41 s: past four TTLs: the failure stands
        with pytest.raises(McpServerConnectionError):
            await definitions()
        emulator.faults.clear()
        assert await definitions() == listed


async def test_a_transient_call_failure_keeps_the_cached_definitions(emulator: Emulator) -> None:
    from agents_a365.tooling._spans import NULL_SPAN
    from agents_a365.tooling.extensibility import tool_call_result

    cache = ToolDefinitionCache(300.0)
    server = mail_server(emulator)
    async with McpSessionPool(timeout=5) as pool:
        await cache.get_or_list(server.url, server.headers, lambda: pool.list_tools(server))
        emulator.faults.set("mcp", Fault(status=503, mcp_method="tools/call", times=1))
        with pytest.raises(McpServerConnectionError):
            await tool_call_result(pool.call_tool(server, "list_emails", {}), NULL_SPAN, server, cache)
        assert cache.get(server.url, server.headers) is not None
        # A result that breaks the tool's output schema shows the definitions wrong: they go.
        schema = {"type": "object", "required": ["n"]}
        call = pool.call_tool(server, "list_emails", {}, output_schema=schema)
        with pytest.raises(McpServerConnectionError):
            await tool_call_result(call, NULL_SPAN, server, cache)
        assert cache.get(server.url, server.headers) is None


async def test_the_breaker_opens_fails_at_once_then_one_probe_decides(
    emulator: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="agents_a365.tooling._sessions")
    clock = FakeClock()
    server = mail_server(emulator)
    async with McpSessionPool(timeout=5, clock=clock) as pool:
        pool.breaker_threshold, pool.breaker_cooldown = 3, 30.0
        tool = (await pool.list_tools(server))[0].name
        emulator.faults.set("mcp", Fault(status=503, mcp_method="tools/call"))
        for _ in range(3):
            with pytest.raises(McpServerConnectionError):
                await pool.call_tool(server, tool, {})
        sent = _calls(emulator)
        # Open: calls and listings fail at once, unsent.
        for operation in (pool.call_tool(server, tool, {}), pool.list_tools(server)):
            with pytest.raises(McpServerUnavailableError) as caught:
                await operation
            assert caught.value.retry_after == 30.0
        assert _calls(emulator) == sent
        clock.advance(29)
        with pytest.raises(McpServerUnavailableError):
            await pool.call_tool(server, tool, {})
        clock.advance(1)  # the cool-down is over: one probe goes out; it fails, the breaker opens again
        with pytest.raises(McpServerConnectionError) as probe:
            await pool.call_tool(server, tool, {})
        assert not isinstance(probe.value, McpServerUnavailableError)
        assert _calls(emulator) == sent + 1
        with pytest.raises(McpServerUnavailableError):
            await pool.call_tool(server, tool, {})
        # The server is back: while the probe is on its way, the others still fail at once; it closes the breaker.
        emulator.faults.set("mcp", Fault(latency_ms=300, mcp_method="tools/call"))
        clock.advance(30)
        probing = asyncio.ensure_future(pool.call_tool(server, tool, {}))
        await until(lambda: _calls(emulator) >= sent + 2)
        with pytest.raises(McpServerUnavailableError):
            await pool.call_tool(server, tool, {})
        await probing
        emulator.faults.clear()
        await pool.call_tool(server, tool, {})
        await pool.list_tools(server)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len([w for w in warnings if "in a row" in w]) == 1, warnings  # one per outage, not per request
    assert any("answers again" in w for w in warnings)


async def test_requests_failing_together_count_once_toward_the_breaker(emulator: Emulator) -> None:
    # Under load one hiccup fails every request in flight at once: that is one failure in a row, not
    # twenty, or a 2-second stall would open the breaker of a server that answers again right after.
    server = mail_server(emulator)
    async with McpSessionPool(timeout=5, clock=FakeClock()) as pool:
        pool.breaker_threshold = 2
        tool = (await pool.list_tools(server))[0].name
        emulator.faults.set("mcp", Fault(status=503, mcp_method="tools/call"))
        wave = await asyncio.gather(
            *(pool.call_tool(server, tool, {}) for _ in range(20)), return_exceptions=True
        )
        assert all(type(e) is McpServerConnectionError and e.transient for e in wave)
        sent = _calls(emulator)
        with pytest.raises(McpServerConnectionError) as second:  # still sent: only one failure so far
            await pool.call_tool(server, tool, {})
        assert not isinstance(second.value, McpServerUnavailableError)
        assert _calls(emulator) == sent + 1
        with pytest.raises(McpServerUnavailableError):  # two in a row: open
            await pool.call_tool(server, tool, {})


class _UnknownTool(HostileMcp):
    """Answers every tools/call with JSON-RPC -32602 (the server no longer has the tool)."""

    async def __call__(self, request: Request, writer: asyncio.StreamWriter) -> None:
        message = json.loads(request.body) if request.method == "POST" else {}
        if message.get("method") == "tools/call":
            error = {"code": -32602, "message": "Unknown tool: echo"}
            _answer(writer, 200, {"jsonrpc": "2.0", "id": message["id"], "error": error})
            await writer.drain()
            return
        await super().__call__(request, writer)


async def test_an_unknown_tool_answer_drops_the_cached_definitions() -> None:
    from agents_a365.tooling._spans import NULL_SPAN
    from agents_a365.tooling.extensibility import tool_call_result

    cache = ToolDefinitionCache(300.0)
    async with HostileServer() as host, McpSessionPool(timeout=5) as pool:
        host.route("/mcp", _UnknownTool())
        server = MCPServerConfig(mcp_server_name="odd", url=f"{host.base_url}/mcp", headers={})
        await cache.get_or_list(server.url, server.headers, lambda: pool.list_tools(server))
        with pytest.raises(McpServerConnectionError, match="Unknown tool") as caught:
            await tool_call_result(pool.call_tool(server, "echo", {}), NULL_SPAN, server, cache)
        assert not caught.value.transient
        assert cache.get(server.url, server.headers) is None  # the definitions are wrong: listed again


async def test_sessions_opening_to_one_server_are_bounded(emulator: Emulator) -> None:
    # A barrier of 3 on initialize: 6 users' sessions opening at once fill it unless at most 2 open at a
    # time (then each pair goes on after the barrier's timeout, held 2 together).
    emulator.faults.set(
        "mcp:mail", Fault(hold_until_concurrent=3, hold_timeout_ms=300, mcp_method="initialize")
    )
    servers = [mail_server(emulator, f"user-{i}") for i in range(6)]
    async with McpSessionPool(timeout=10) as pool:
        pool.open_concurrency = 2
        await asyncio.gather(*(pool.list_tools(s) for s in servers))
        assert pool.opened == 6
    held = [
        r.held_together
        for r in emulator.requests_for("mcp", server="mail")
        if r.jsonrpc_method == "initialize"
    ]
    assert len(held) == 6
    assert max(h or 0 for h in held) <= 2


def _sockets() -> int:
    """This process's open sockets (the pool's connections and, in-process, the emulator's side of them)."""
    count = 0
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):  # the listing's own descriptor is gone once read
            count += os.readlink(fd).startswith("socket:")
    return count


async def test_after_a_hiccup_the_pool_recovers_by_itself_and_nothing_is_left_over() -> None:
    """No restart: once the server answers again the breaker's probe lets every user back in; the pool's tasks
    and connections, and the memory, are back to what they were before the hiccup; the outage is counted once."""
    clock = FakeClock()
    # The emulator in this process keeps no request records: they would grow the memory measured here.
    config = EmulatorConfig(mcp_stateless=False, max_recorded_requests=1)
    async with (
        Emulator(config) as emulator,
        McpSessionPool(timeout=5, clock=clock) as pool,
    ):
        users = [mail_server(emulator, f"user-{i}") for i in range(8)]
        tool = (await pool.list_tools(users[0]))[0].name

        async def turns() -> list[object]:
            return await asyncio.gather(
                *(pool.call_tool(user, tool, {}) for user in users), return_exceptions=True
            )

        async def settled() -> tuple[int, int, int]:
            for _ in range(3):  # the connections' and the emulator's closing callbacks
                await asyncio.sleep(0)
            gc.collect()
            return len(asyncio.all_tasks()), _sockets(), tracemalloc.get_traced_memory()[0]

        with recorded_telemetry() as telemetry:
            tracemalloc.start()
            try:
                for _ in range(3):
                    assert not [r for r in await turns() if isinstance(r, BaseException)]
                tasks, sockets, memory = await settled()
                # The hiccup: connections dropped, then 503s; the breaker opens and later turns fail at once.
                emulator.faults.set("mcp", Fault(drop=True, mcp_method="tools/call", times=8))
                assert all(isinstance(r, McpServerConnectionError) for r in await turns())
                emulator.faults.set("mcp", Fault(status=503, mcp_method="tools/call"))
                for _ in range(3):
                    await turns()
                assert all(isinstance(r, McpServerUnavailableError) for r in await turns())
                emulator.faults.clear()
                clock.advance(pool.breaker_cooldown)
                probed = await turns()  # one probe goes out (the others fail at once while it is on its way)
                assert [isinstance(r, BaseException) for r in probed].count(False) == 1
                for _ in range(3):  # it closed the breaker: every user is served again
                    assert not [r for r in await turns() if isinstance(r, BaseException)]
                after = await settled()
            finally:
                tracemalloc.stop()
            breaker = telemetry.counts("a365.tooling.mcp.breaker")
        assert breaker[(("a365.mcp.breaker.event", "opened"),)] == 1
        assert breaker[(("a365.mcp.breaker.event", "rejected"),)] >= 8 + 7
        assert after[:2] == (tasks, sockets)
        assert after[2] < memory + 128 * 1024, (memory, after[2])  # ~60 KiB here: the sessions opened again
        assert pool.opened <= len(users) * 2  # at most one new session per user after its session was lost
