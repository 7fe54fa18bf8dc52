"""One creation per key across replicas: on a second-level miss one replica takes a lease in the store and goes
to the origin, the others wait for what it saves; a holder that fails lets them go on, a holder that hangs holds
them at most the wait's deadline, and a store that is down holds nobody.

Each replica's clock is a fake one: a waiter gives up only when the test moves its clock, never because the
machine is slow."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from mcp.types import Tool

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.tooling import McpToolServerConfigurationService
from agents_a365.tooling.redis_store import RedisStore
from support.clock import FakeClock
from support.redis_server import RedisServer
from support.turns import make_turn_context

from .conftest import Replicas

TENANT = "tenant-3c9d2e44"
GUARD = 30.0  # a test that would wait for Redis to expire a 60 s lease fails here instead
LEASE = 60.0  # request_timeout: how long a lease lives in Redis


def lists(emulator: Emulator) -> int:
    return len([r for r in emulator.requests_for("mcp") if r.jsonrpc_method == "tools/list"])


async def first_turn(service: McpToolServerConfigurationService, authorization: Any, user: str) -> list[Any]:
    """What a user's first turn asks of the platform: the servers, then each server's tools."""
    context = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, user_id=user, tenant_id=TENANT)
    servers = await service.list_tool_servers(context, authorization, "AGENTIC")
    return [await service.list_mcp_tools(server) for server in servers]


class WatchedStore(RedisStore):
    """The real store, telling the test when a replica found the lease taken (it waits from then on); with
    ``writes=False``, one whose writes fail (a store that stops answering while its replica holds a lease)."""

    def __init__(self, url: str, *, writes: bool = True) -> None:
        super().__init__(url)
        self.refused, self.writes = asyncio.Event(), writes

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        if not self.writes:
            raise ConnectionError("the store stopped answering")
        await super().set(key, value, ttl)

    async def set_if_absent(self, key: str, value: bytes, ttl: float) -> bool:
        taken = await super().set_if_absent(key, value, ttl)
        if not taken:
            self.refused.set()
        return taken


class LateStore(RedisStore):
    """A replica that asks for a lease only once ``let_go`` is set: slow between its miss and its lease."""

    def __init__(self, url: str, let_go: asyncio.Event) -> None:
        super().__init__(url)
        self.let_go = let_go

    async def set_if_absent(self, key: str, value: bytes, ttl: float) -> bool:
        await self.let_go.wait()
        return await super().set_if_absent(key, value, ttl)


class ReleasingStore(RedisStore):
    """The real store, telling the test when its replica first let go of a lease (its value saved)."""

    def __init__(self, url: str, let_go: asyncio.Event) -> None:
        super().__init__(url)
        self.let_go = let_go

    async def delete(self, key: str) -> None:
        await super().delete(key)
        if key.startswith("a365:lease:"):
            self.let_go.set()


class SteppingClock:
    """Each reading is a second later than the one before: a waiter's deadline passes after a few polls."""

    def __init__(self) -> None:
        self._ticks = itertools.count(1000)

    def __call__(self) -> float:
        return float(next(self._ticks))


async def test_replicas_cold_at_once_reach_the_origin_once_per_key(
    emulator: Emulator, replicas: Replicas, redis: RedisServer
) -> None:
    authorization = emulator.authorization()
    services = [replicas(clock=FakeClock(), request_timeout=LEASE) for _ in range(4)]
    users = ["alice-0b7e5a1f", "bob-51c0aa93", "carol-77d1"]
    async with asyncio.timeout(GUARD):
        turns = await asyncio.gather(*(first_turn(s, authorization, u) for s in services for u in users))
    assert all(len(tools) == 2 and all(tools) for tools in turns)
    assert lists(emulator) == 2 * len(users)  # per user and server, not one per replica
    assert len(emulator.requests_for("gateway")) == len(users)
    assert authorization.exchange_count == 2 * len(users)  # per user and audience
    assert not [k for k in redis.contents() if k.startswith(b"a365:lease:")]  # every holder let go


async def test_a_lease_taken_after_another_replica_saved_reads_what_it_saved(
    emulator: Emulator, replicas: Replicas, redis: RedisServer
) -> None:
    # Both miss; one creates, saves and lets go before the other asks for the lease, which it then gets at once.
    authorization, let_go = emulator.authorization(), asyncio.Event()
    first = replicas(clock=FakeClock(), store=ReleasingStore(redis.url, let_go), request_timeout=LEASE)
    late = replicas(clock=FakeClock(), store=LateStore(redis.url, let_go), request_timeout=LEASE)
    async with asyncio.timeout(GUARD):
        await asyncio.gather(*(first_turn(s, authorization, "dana-4f0c2a9e") for s in (first, late)))
    assert authorization.exchange_count == 2  # per audience: the late replica read the tokens the first saved
    assert len(emulator.requests_for("gateway")) == 1
    assert lists(emulator) == 2


async def test_a_failing_holder_lets_the_waiter_go_to_the_origin(
    emulator: Emulator, replicas: Replicas, redis: RedisServer
) -> None:
    watched = WatchedStore(redis.url)
    one = replicas(clock=FakeClock(), request_timeout=LEASE)
    two = replicas(clock=FakeClock(), store=watched, request_timeout=LEASE)
    authorization = emulator.authorization()
    context = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, user_id="alice", tenant_id=TENANT)
    (mail,) = [
        s
        for s in await one.list_tool_servers(context, authorization, "AGENTIC")
        if s.mcp_server_name == "mail"
    ]
    listing, fail = asyncio.Event(), asyncio.Event()

    async def failing() -> list[Tool]:
        listing.set()  # one holds the lease
        await fail.wait()
        raise RuntimeError("the listing failed")

    holder = asyncio.create_task(one.tool_definitions.get_or_list(mail.url, mail.headers, failing))
    await listing.wait()
    watched.refused.clear()
    waiter = asyncio.create_task(two.list_mcp_tools(mail))
    try:
        async with asyncio.timeout(GUARD):  # its clock never moves: only one letting go frees two
            await watched.refused.wait()  # two found the lease taken: it waits for one
            fail.set()
            with pytest.raises(RuntimeError, match="the listing failed"):
                await holder
            tools = await waiter
    finally:
        for task in (holder, waiter):
            task.cancel()
    assert {t.name for t in tools} >= {"send_email"}
    assert lists(emulator) == 1  # two's own listing


async def test_a_holder_whose_store_fails_still_lets_go(
    emulator: Emulator, replicas: Replicas, redis: RedisServer
) -> None:
    failing, watched = WatchedStore(redis.url, writes=False), WatchedStore(redis.url)
    one = replicas(clock=FakeClock(), store=failing, request_timeout=LEASE)
    two = replicas(clock=FakeClock(), store=watched, request_timeout=LEASE)
    context = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, user_id="alice", tenant_id=TENANT)
    servers = await two.list_tool_servers(context, emulator.authorization(), "AGENTIC")
    (mail,) = [s for s in servers if s.mcp_server_name == "mail"]
    listing, answer = asyncio.Event(), asyncio.Event()

    async def listed() -> list[Tool]:
        listing.set()
        await answer.wait()
        return [Tool(name="send_email", inputSchema={"type": "object"})]

    holder = asyncio.create_task(one.tool_definitions.get_or_list(mail.url, mail.headers, listed))
    await listing.wait()
    watched.refused.clear()
    waiter = asyncio.create_task(two.list_mcp_tools(mail))
    try:
        async with asyncio.timeout(GUARD):  # its clock never moves: only one letting go frees two
            await watched.refused.wait()
            answer.set()  # one lists, fails to save (its store is "down" from then on), and lets go
            assert [t.name for t in await holder] == ["send_email"]
            tools = await waiter
    finally:
        for task in (holder, waiter):
            task.cancel()
    assert {t.name for t in tools} >= {"send_email"}
    assert lists(emulator) == 1  # two's own: nothing was saved


async def test_a_hung_holder_holds_the_waiter_at_most_the_deadline(
    emulator: Emulator, replicas: Replicas, redis: RedisServer
) -> None:
    watched = WatchedStore(redis.url)
    one = replicas(clock=FakeClock(), request_timeout=LEASE)
    two = replicas(clock=SteppingClock(), store=watched, request_timeout=LEASE)
    authorization = emulator.authorization()
    context = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, user_id="alice", tenant_id=TENANT)
    (mail,) = [
        s
        for s in await one.list_tool_servers(context, authorization, "AGENTIC")
        if s.mcp_server_name == "mail"
    ]
    listing = asyncio.Event()

    async def hung() -> list[Tool]:
        listing.set()
        await asyncio.Event().wait()  # never answers
        return []

    holder = asyncio.create_task(one.tool_definitions.get_or_list(mail.url, mail.headers, hung))
    try:
        await listing.wait()
        watched.refused.clear()
        async with asyncio.timeout(GUARD):  # two's clock passes its deadline within a few polls
            tools = await two.list_mcp_tools(mail)
        assert watched.refused.is_set()  # it waited first
        assert {t.name for t in tools} >= {"send_email"}
        assert lists(emulator) == 1
        assert not holder.done()  # still holding the lease: two went on without it
    finally:
        holder.cancel()
        with pytest.raises(asyncio.CancelledError):
            await holder
    await one.aclose()  # its listing's task, cancelled with its last caller, has ended
    assert not [k for k in redis.contents() if k.startswith(b"a365:lease:")]  # a cancelled holder lets go


async def test_a_store_that_is_down_holds_nobody(
    emulator: Emulator, replicas: Replicas, redis: RedisServer
) -> None:
    authorization = emulator.authorization()
    services = [replicas(clock=FakeClock(), request_timeout=LEASE) for _ in range(2)]
    await asyncio.to_thread(redis.stop)
    try:
        async with asyncio.timeout(GUARD):  # clocks that never move: a replica waiting would wait for good
            turns = await asyncio.gather(*(first_turn(s, authorization, "alice") for s in services))
    finally:
        await asyncio.to_thread(redis.start)
    assert all(len(tools) == 2 and all(tools) for tools in turns)
    assert lists(emulator) == 4  # each replica lists each server itself, at once
    assert len(emulator.requests_for("gateway")) == 2
