"""The caches' second level on a real ``redis-server`` (Debian's, installed by the test run when missing).

One server per test session (per xdist worker) on a free 127.0.0.1 port, emptied before each test.
"""

from __future__ import annotations

import base64
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from agents_a365.emulator import Emulator
from agents_a365.tooling import McpToolServerConfigurationService
from agents_a365.tooling.redis_store import RedisStore
from support.installs import ensure_redis_server
from support.platform import production_config
from support.redis_server import RedisServer
from support.telemetry import Telemetry, recorded_telemetry

KEYS = "k1:" + base64.b64encode(bytes(range(32))).decode()
OTHER_KEYS = "k1:" + base64.b64encode(bytes(range(1, 33))).decode()  # same id, another key


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    executable, why = ensure_redis_server()
    if executable is None:
        pytest.skip(f"no redis-server for the second-level tests: {why}")
    server = RedisServer(executable)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis(redis_server: RedisServer) -> RedisServer:
    if redis_server.process is None:  # a test that stopped it failed before starting it again
        redis_server.start()
    redis_server.flush()
    return redis_server


Replicas = Callable[..., McpToolServerConfigurationService]


@pytest.fixture
async def replicas(emulator: Emulator, redis: RedisServer) -> AsyncIterator[Replicas]:
    """Makes host replicas' services (the emulator's platform, the shared Redis, ``KEYS`` unless ``keys=``
    says otherwise, a ``RedisStore`` of its own unless ``store=`` gives one; other keywords are settings),
    closed when the test ends."""
    made: list[McpToolServerConfigurationService] = []
    stores: list[RedisStore] = []

    def replica(
        keys: str = KEYS,
        clock: Callable[[], float] = time.monotonic,
        store: RedisStore | None = None,
        **settings: Any,
    ) -> McpToolServerConfigurationService:
        # Counts asserted on a shared, loaded machine must not hang on 50 ms: the deadline has tests of its own.
        settings.setdefault("cache_store_timeout", 2.0)
        config = production_config(emulator, cache_keys=keys, **settings)
        stores.append(store or RedisStore(redis.url))
        made.append(McpToolServerConfigurationService(config, cache_store=stores[-1], clock=clock))
        return made[-1]

    yield replica
    for service in made:
        await service.aclose()
    for store in stores:  # the caller's stores: a service leaves them open
        await store.aclose()


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    with recorded_telemetry() as telemetry:
        yield telemetry
