import asyncio

import pytest

from agents_a365.tooling._cache import AsyncTTLCache


async def test_concurrent_callers_share_one_creation() -> None:
    cache: AsyncTTLCache[str] = AsyncTTLCache()
    calls = 0

    async def create() -> tuple[str, float]:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.01)
        return "value", 60

    results = await asyncio.gather(*(cache.get_or_create("k", create) for _ in range(20)))
    assert results == [("value", False)] + [("value", True)] * 19  # the first caller's creation, joined
    assert calls == 1
    assert await cache.get_or_create("k", create) == ("value", True)
    assert await cache.get_or_create(None, create) == ("value", False)  # without a key: uncached
    assert calls == 2


async def test_failures_reach_every_waiter_and_are_not_cached() -> None:
    cache: AsyncTTLCache[str] = AsyncTTLCache()
    attempts = 0

    async def create() -> tuple[str, float]:
        nonlocal attempts
        attempts += 1
        await asyncio.sleep(0.01)
        raise RuntimeError("exchange failed")

    results = await asyncio.gather(
        *(cache.get_or_create("k", create) for _ in range(3)), return_exceptions=True
    )
    assert all(isinstance(r, RuntimeError) for r in results)
    with pytest.raises(RuntimeError):
        await cache.get_or_create("k", create)
    assert attempts == 2


def test_entries_expire_and_capacity_is_bounded() -> None:
    now = [0.0]
    cache: AsyncTTLCache[int] = AsyncTTLCache(max_entries=2, clock=lambda: now[0])
    cache.put("a", 1, ttl=10)
    cache.put("b", 2, ttl=10)
    cache.put("c", 3, ttl=10)
    assert cache.lookup("a") is None
    assert len(cache) == 2
    now[0] = 11
    assert cache.lookup("b") is None
    cache.put("d", 4, ttl=0)  # a non-positive ttl is never stored
    assert cache.lookup("d") is None
