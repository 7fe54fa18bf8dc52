"""A store that fails, stops or hangs never fails a turn nor holds it past the deadline; it is used again
once it answers (no restart), with one WARNING per outage and a metric."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from typing import Any

import pytest

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.tooling import McpToolServerConfigurationService
from agents_a365.tooling.redis_store import RedisStore
from support.clock import FakeClock
from support.platform import production_config
from support.redis_server import RedisServer
from support.telemetry import Telemetry
from support.turns import make_turn_context

from .conftest import KEYS, Replicas

LOGGER = "agents_a365.tooling._second_level"


async def turns(service: McpToolServerConfigurationService, emulator: Emulator, users: range) -> list[Any]:
    authorization = emulator.authorization()
    return await asyncio.gather(
        *(
            service.list_tool_servers(
                make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, user_id=f"user-{n}"),
                authorization,
                "AGENTIC",
            )
            for n in users
        ),
        return_exceptions=True,
    )


async def test_redis_stopped_and_restarted_under_load(
    emulator: Emulator,
    replicas: Replicas,
    redis: RedisServer,
    caplog: pytest.LogCaptureFixture,
    telemetry: Telemetry,
) -> None:
    clock = FakeClock()
    one, two = replicas(clock=clock), replicas(clock=clock)
    caplog.set_level(logging.INFO, LOGGER)
    assert all(isinstance(r, list) for r in await turns(one, emulator, range(0, 20)))

    load = asyncio.create_task(turns(two, emulator, range(20, 60)))  # under way while Redis stops
    await asyncio.sleep(0)
    await asyncio.to_thread(redis.stop)
    during = await turns(one, emulator, range(60, 100))
    during += await turns(two, emulator, range(100, 140))
    clock.advance(5)  # past the retry delay: still down, one more try each, still one WARNING
    during += await turns(one, emulator, range(140, 160))
    during += await load
    assert [r for r in during if not isinstance(r, list)] == []  # no turn failed
    warnings = [r for r in caplog.records if r.name == LOGGER and r.levelno == logging.WARNING]
    assert len(warnings) == 2  # one per replica's outage, not one per operation
    assert "in-memory caches" in warnings[0].getMessage()
    errors = telemetry.counts("a365.tooling.cache.store.errors")
    assert sum(errors.values()) >= 2

    await asyncio.to_thread(redis.start)  # empty: no persistence
    clock.advance(5)
    assert all(isinstance(r, list) for r in await turns(one, emulator, range(200, 210)))
    assert any(k.startswith(b"a365:token:") for k in redis.contents())  # written again: recovered
    assert any("answers again" in r.getMessage() for r in caplog.records if r.name == LOGGER)
    gateway = len(emulator.requests_for("gateway"))
    await turns(two, emulator, range(200, 210))  # the other replica reads what the first wrote
    assert len(emulator.requests_for("gateway")) == gateway


@pytest.mark.serial  # a wall-clock bound: the other worker's load alone can break it on 2 cores
async def test_a_hung_store_holds_no_turn_past_its_deadline(
    emulator: Emulator, redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    # The client would wait 30 s for a frozen server; the second level's deadline stops it at 50 ms.
    store = RedisStore(redis.url, socket_timeout=30, socket_connect_timeout=30)
    config = production_config(emulator, cache_keys=KEYS)
    async with McpToolServerConfigurationService(config, cache_store=store) as service:
        await turns(service, emulator, range(1))  # connected
        pid = redis.process.pid if redis.process else 0
        os.kill(pid, signal.SIGSTOP)
        try:
            async with asyncio.timeout(5):
                results = await turns(service, emulator, range(1, 11))
        finally:
            os.kill(pid, signal.SIGCONT)
        assert all(isinstance(r, list) for r in results)
        assert any(r.levelno == logging.WARNING and "timeout" in r.getMessage() for r in caplog.records)
    await store.aclose()
