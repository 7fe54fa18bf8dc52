"""A small async TTL cache with single-flight creation.

Concurrent callers for one key share one creation (one token exchange, one discovery);
failures are not cached.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class AsyncTTLCache(Generic[V]):
    def __init__(self, max_entries: int = 4096, clock: Callable[[], float] = time.monotonic) -> None:
        self._entries: OrderedDict[Hashable, tuple[V, float]] = OrderedDict()
        self._pending: dict[Hashable, asyncio.Future[V]] = {}
        self._max_entries = max_entries
        self._clock = clock

    def get(self, key: Hashable) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        value, expires_at = entry
        if expires_at <= self._clock():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return value

    def put(self, key: Hashable, value: V, ttl: float) -> None:
        if ttl <= 0:
            return
        self._entries[key] = (value, self._clock() + ttl)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)

    async def get_or_create(self, key: Hashable, create: Callable[[], Awaitable[tuple[V, float]]]) -> V:
        """The cached value, or ``create()``'s ``(value, ttl)``; one creation per key at a time."""
        cached = self.get(key)
        if cached is not None:
            return cached
        pending = self._pending.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[V] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            value, ttl = await create()
        except BaseException as exc:
            if not future.done():
                if isinstance(exc, asyncio.CancelledError):
                    future.cancel()
                else:
                    future.set_exception(exc)
                    future.exception()  # mark retrieved: no warning when nobody else waits
            raise
        else:
            self.put(key, value, ttl)
            future.set_result(value)
            return value
        finally:
            self._pending.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
