"""A small async TTL cache with single-flight creation.

Concurrent callers for one key share one creation (one token exchange, one discovery);
failures are not cached. The creation runs in its own task: cancelling one caller (one turn)
never cancels it for the others; it is cancelled only when no caller waits for it any more.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class _Flight(Generic[V]):
    """One shared creation and how many callers await it."""

    __slots__ = ("task", "waiters")

    def __init__(self, task: asyncio.Task[V]) -> None:
        self.task = task
        self.waiters = 0


class AsyncTTLCache(Generic[V]):
    def __init__(self, max_entries: int = 4096, clock: Callable[[], float] = time.monotonic) -> None:
        self._entries: OrderedDict[Hashable, tuple[V, float]] = OrderedDict()
        self._pending: dict[Hashable, _Flight[V]] = {}
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
        flight = self._pending.get(key)
        if flight is None:
            flight = _Flight(asyncio.get_running_loop().create_task(self._create(key, create)))
            self._pending[key] = flight
            flight.task.add_done_callback(functools.partial(self._landed, key, flight))
        flight.waiters += 1
        try:
            return await asyncio.shield(flight.task)
        except asyncio.CancelledError:
            # This caller gave up (its turn was cancelled). Only when nobody else waits is the
            # shared work cancelled; the others still get its result.
            flight.waiters -= 1
            if flight.waiters == 0 and not flight.task.done():
                flight.task.cancel()
            raise

    async def _create(self, key: Hashable, create: Callable[[], Awaitable[tuple[V, float]]]) -> V:
        value, ttl = await create()
        self.put(key, value, ttl)
        return value

    def _landed(self, key: Hashable, flight: _Flight[V], _task: object) -> None:
        if self._pending.get(key) is flight:
            del self._pending[key]
        if not flight.task.cancelled():
            flight.task.exception()  # mark retrieved: no warning when every waiter gave up

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
