"""The one TTL cache, with single flight: tokens, discovery results and MCP tool definitions (``_tool_cache.py``).

Concurrent callers for one key share one creation (one token exchange, one discovery, one listing);
failures are not cached. The creation runs in its own task: cancelling one caller (one turn) never
cancels it for the others; it is cancelled only when no caller waits for it any more.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from agents_a365.runtime.settings import Override

from ._telemetry_hooks import cache_lookup
from .constants import DEFAULT_CACHE_MAX_ENTRIES

if TYPE_CHECKING:
    from ._second_level import SecondLevel

__all__ = ["AsyncTTLCache"]

logger = logging.getLogger(__name__)

V = TypeVar("V")


@dataclass(slots=True)
class _Flight(Generic[V]):
    """One shared creation and how many callers await it."""

    task: asyncio.Task[V]
    waiters: int = 0


STALE_IF_ERROR = 4
"""An entry whose refresh failed keeps serving (stale lookups) until it is this many TTLs old."""


class Below(Protocol[V]):
    """A cache's second level (``_second_level.py``): read on a miss, before the origin; filled after it."""

    level: SecondLevel
    name: str

    async def load(self, key: Hashable) -> tuple[V, float, float] | None: ...  # value, ttl left, age

    async def save(self, key: Hashable, value: V, ttl: float) -> None: ...

    async def drop(self, key: Hashable) -> None: ...


MAX_REFRESHES = 4
"""Background refreshes in flight per cache: when every user's entry expires at once, the refreshes trickle
(an entry waiting for a slot still serves) instead of competing with the turns for the servers."""


class AsyncTTLCache(Generic[V]):
    def __init__(
        self,
        max_entries: Override[int] = DEFAULT_CACHE_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
        name: str | None = None,
    ) -> None:
        self.name = name
        """Lookups are counted as hits or misses of the cache of this name (:func:`cache_lookup`); ``None``:
        not counted."""
        self._entries: OrderedDict[Hashable, tuple[V, float, float]] = OrderedDict()  # value, stored at, ttl
        self._pending: dict[Hashable, _Flight[V]] = {}
        self._refreshing = 0  # background refreshes in flight (at most MAX_REFRESHES)
        self._failing: set[Hashable] = set()  # last refresh failed: served up to STALE_IF_ERROR TTLs
        self._max_entries = max_entries  # a function is read at each store (a setting changed at run time)
        self._clock = clock
        self.below: Below[V] | None = None
        """The second level under this cache, if any (the service attaches it)."""

    def lookup(self, key: Hashable, ttl: float | None = None, stale: bool = False) -> tuple[V, bool] | None:
        """``(value, fresh)`` if the entry is fresh: younger than ``ttl`` when given (a TTL read from the
        settings at each use applies to entries already stored), else than the TTL it was stored with; with
        ``stale``, an entry expired less than one TTL ago too (not fresh), or less than ``STALE_IF_ERROR`` TTLs
        old while its refreshes fail."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        value, stored_at, stored_ttl = entry
        limit = stored_ttl if ttl is None else ttl
        age = self._clock() - stored_at
        if age >= STALE_IF_ERROR * limit:  # kept until then: a stale lookup may still serve it
            del self._entries[key]
            self._failing.discard(key)
            return None
        if age >= limit and not (stale and (age < 2 * limit or key in self._failing)):
            return None
        self._entries.move_to_end(key)
        return value, age < limit

    def put(self, key: Hashable, value: V, ttl: float, age: float = 0.0) -> None:
        if ttl <= 0:
            return
        self._entries[key] = (value, self._clock() - age, ttl)
        self._failing.discard(key)
        self._entries.move_to_end(key)
        limit = self._max_entries() if callable(self._max_entries) else self._max_entries
        while len(self._entries) > limit:
            self._entries.popitem(last=False)

    async def get_or_create(
        self,
        key: Hashable | None,
        create: Callable[[], Awaitable[tuple[V, float]]],
        ttl: float | None = None,
        *,
        stale: bool = False,
    ) -> tuple[V, bool]:
        """``(value, hit)``: the cached value (fresh as :meth:`lookup` says), or ``create()``'s ``(value,
        ttl)``; one creation per key at a time (``hit``: this caller started none). Without a key,
        ``create()``'s value, uncached. With ``stale``, an entry expired less than one TTL ago is returned at
        once and refreshed in the background: a caller never waits on, nor fails with, that refresh (while
        refreshes fail, the entry serves until it is ``STALE_IF_ERROR`` TTLs old; at most ``MAX_REFRESHES`` run
        at a time). Lookups are
        counted as :attr:`name` says."""
        if key is None:
            return (await create())[0], False
        found = self.lookup(key, ttl, stale)
        if found is not None:
            if not found[1] and key not in self._pending and self._refreshing < MAX_REFRESHES:
                self._refreshing += 1
                self._start(key, create).task.add_done_callback(self._refreshed)
            value, hit = found[0], True
        else:
            hit = key in self._pending  # joining another caller's creation
            flight = self._pending[key] if hit else self._start(key, create)
            flight.waiters += 1
            try:
                value = await asyncio.shield(flight.task)
            except asyncio.CancelledError:
                # This caller gave up (its turn was cancelled). Only when nobody else waits is the
                # shared work cancelled; the others still get its result.
                flight.waiters -= 1
                if flight.waiters == 0 and not flight.task.done():
                    flight.task.cancel()
                raise
            except Exception:  # stale-if-error: an entry too old to serve at once still beats a failure
                kept = self._entries.get(key) if stale else None
                if kept is None or self._clock() - kept[1] >= STALE_IF_ERROR * (ttl or kept[2]):
                    raise
                self._failing.add(key)
                value = kept[0]
        if self.name is not None:
            cache_lookup(self.name, hit=hit)
        return value, hit

    def _start(self, key: Hashable, create: Callable[[], Awaitable[tuple[V, float]]]) -> _Flight[V]:
        flight = _Flight(asyncio.get_running_loop().create_task(self._create(key, create)))
        self._pending[key] = flight
        flight.task.add_done_callback(functools.partial(self._landed, key))
        return flight

    def _refreshed(self, _task: object) -> None:
        self._refreshing -= 1

    def refreshes(self) -> list[asyncio.Task[V]]:
        """Cancel the background refreshes (no caller waits for them); their tasks, to await."""
        tasks = [f.task for f in self._pending.values() if f.waiters == 0 and not f.task.done()]
        for task in tasks:
            task.cancel()
        return tasks

    async def _create(self, key: Hashable, create: Callable[[], Awaitable[tuple[V, float]]]) -> V:
        below, taken = self.below, False
        try:
            if below is not None:
                found = await below.load(key)
                if found is None:  # one replica goes to the origin, the others wait for what it saves
                    taken, waited = await below.level.lease(below.name, key)
                    # Read again once the lease is ours: another replica may have saved and let go since the miss.
                    found = await below.load(key) if taken or waited else None
                if found is not None:
                    value, ttl, age = found  # another replica's (or an earlier run's): as old as it is there
                    self.put(key, value, ttl + age, age)
                    return value
            value, ttl = await create()
            self.put(key, value, ttl)
            if below is not None:
                await below.save(key, value, ttl)
            return value
        finally:
            if taken and below is not None:  # saved, or failed: a waiter takes it next
                await below.level.release(below.name, key)

    def _landed(self, key: Hashable, task: asyncio.Task[V]) -> None:
        flight = self._pending.pop(key)  # the key's only flight: no other starts while it is pending
        if not task.cancelled() and (error := task.exception()) is not None and not flight.waiters:
            # A background refresh: the entry it was to replace still serves; nobody else hears of it.
            if key in self._entries:
                self._failing.add(key)
            logger.debug(
                "refreshing a cached entry failed (%s); the stale one still serves", type(error).__name__
            )

    def invalidate(self, key: Hashable) -> None:
        self._entries.pop(key, None)
        self._failing.discard(key)

    async def forget(self, key: Hashable) -> None:
        """:meth:`invalidate`, in the second level too."""
        self.invalidate(key)
        if self.below is not None:
            await self.below.drop(key)

    def clear(self) -> None:
        self._entries.clear()
        self._failing.clear()

    def __len__(self) -> int:
        return len(self._entries)
