"""The one TTL cache, with single flight: tokens, discovery results and MCP tool definitions.

Concurrent callers for one key share one creation (one token exchange, one discovery, one listing);
failures are not cached. The creation runs in its own task: cancelling one caller (one turn) never
cancels it for the others; it is cancelled only when no caller waits for it any more.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import time
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from mcp.types import Tool

from agents_a365.runtime import decode_token_payload
from agents_a365.runtime.settings import Override

from ._stepwise import Steps, run, run_cooperatively
from ._telemetry_hooks import cache_lookup
from .constants import DEFAULT_CACHE_MAX_ENTRIES

if TYPE_CHECKING:
    from ._second_level import SecondLevel

__all__ = ["AsyncTTLCache", "ToolDefinitionCache"]

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
                    found = await below.load(key) if waited else None
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


@dataclass(slots=True, weakref_slot=True, eq=False)  # eq=False: one set is one object (the index's)
class _Definitions:
    """One distinct set of tool definitions, shared by every entry that lists the same content (held
    weakly by the content index: it goes with its last entry)."""

    tools: tuple[Tool, ...]
    digest: str = ""  # of the content: its key in the second level


_LISTED_ON = ("tid", "aud", "iss", "idtyp", "appid", "azp", "xms_par_app_azp", "scp", "roles")
"""A token's claims a server can tell apart when it lists tools: the same for every user of a tenant's agent."""


@functools.lru_cache(maxsize=4096)  # the few tokens of the users in flight: decoded once each
def _listed_with(authorization: str) -> str:
    # A JWT naming its tenant and audience keys a listing by those claims (tenant, audience, issuer, app, token
    # type, granted scopes and roles), not by its user: the users of one tenant's agent share one entry, a
    # token of another tenant, app or grant never reads it. Any other value keys it by itself (per user).
    try:
        claims = decode_token_payload(authorization.partition(" ")[2])
    except ValueError:
        return authorization
    if not (isinstance(claims.get("tid"), str) and claims["tid"] and claims.get("aud")):
        return authorization
    return json.dumps([claims.get(name) for name in _LISTED_ON])


def _fingerprint(headers: Mapping[str, str]) -> str:
    # Every header the server sees is part of the key; Authorization by what a listing can depend on
    # (_listed_with). Only a digest is kept, of each name and value prefixed by its length (no two header sets
    # share a text; half the CPU of a JSON text).
    pairs = sorted(
        (name.lower(), _listed_with(value) if name.lower() == "authorization" else value)
        for name, value in headers.items()
    )
    text = "".join(f"{len(name)}:{name}{len(value)}:{value}" for name, value in pairs)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ToolDefinitionCache:
    """``tools/list`` results keyed by server URL and a SHA-256 digest of the request headers, the bearer token
    by its tenant, audience, app and grants when it is a JWT naming them (so one entry for the users of a
    tenant's agent), else by itself (per user); each distinct set of definitions stored once (content-addressed): users whose servers list
    the same tools share one copy, an entry costs a key and a reference.

    Entries live ``ttl`` seconds (``0`` disables the cache: every turn lists the tools again; a function is
    read at each use, so a setting changed at run time applies to the next lookup); an entry expired less
    than ``ttl`` ago still serves while one listing refreshes it in the background, so a turn never waits
    on, nor fails with, a refresh. The least recently used entry goes first beyond ``max_entries`` (a
    function: read at each store). The cached definitions are shared ``mcp.types.Tool`` objects: treat them
    as read-only.
    """

    def __init__(
        self,
        ttl: Override[float],
        *,
        max_entries: Override[int] = DEFAULT_CACHE_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
        second_level: SecondLevel | None = None,
    ) -> None:
        if not callable(ttl) and ttl < 0:
            raise ValueError("ttl must be >= 0")
        self._ttl = ttl
        self._entries: AsyncTTLCache[_Definitions] = AsyncTTLCache(max_entries, clock)
        self._sets: weakref.WeakValueDictionary[str, _Definitions] = weakref.WeakValueDictionary()
        if second_level is not None:
            from ._second_level import DefinitionsTier

            self._entries.below = DefinitionsTier(second_level, self._sets)

    @property
    def ttl(self) -> float:
        """Seconds an entry lives, as read now."""
        return self._ttl() if callable(self._ttl) else self._ttl

    @ttl.setter
    def ttl(self, ttl: Override[float]) -> None:
        self._ttl = ttl

    @staticmethod
    def key(url: str, headers: Mapping[str, str]) -> tuple[str, str]:
        return url.strip().rstrip("/").lower(), _fingerprint(headers)

    @property
    def distinct_sets(self) -> int:
        """How many distinct definition sets the entries share."""
        return len(self._sets)

    def get(self, url: str, headers: Mapping[str, str]) -> tuple[Tool, ...] | None:
        """The definitions listed for this server with exactly these headers, if still fresh."""
        found = self._entries.lookup(self.key(url, headers), self.ttl)
        return None if found is None else found[0].tools

    def put(self, url: str, headers: Mapping[str, str], tools: Iterable[Tool]) -> None:
        self._entries.put(self.key(url, headers), run(self._stored(tools)), self.ttl)  # not with a TTL of 0

    async def get_or_list(
        self, url: str, headers: Mapping[str, str], list_tools: Callable[[], Awaitable[Iterable[Tool]]]
    ) -> tuple[Tool, ...]:
        """The cached definitions, or ``list_tools()``'s (cached): concurrent callers share one listing."""
        ttl = self.ttl  # read once per lookup

        async def listed() -> tuple[_Definitions, float]:
            return await run_cooperatively(self._stored(await list_tools())), ttl

        key = self.key(url, headers)
        if ttl <= 0:
            self._entries.invalidate(key)  # disabled: what was stored before is stale too
            return tuple(await list_tools())
        return (await self._entries.get_or_create(key, listed, ttl, stale=True))[0].tools

    def _stored(self, tools: Iterable[Tool]) -> Steps[_Definitions]:
        """``tools`` as stored: one object per distinct content, found by its digest, taken one tool per step
        (3,000 large ones take ~80 ms)."""
        listed = tuple(tools)
        digest = hashlib.sha256()
        for tool in listed:
            yield
            digest.update(tool.model_dump_json().encode())  # JSON objects end themselves: no separator
        text = digest.hexdigest()
        return self._sets.setdefault(text, _Definitions(listed, text))

    def refreshes(self) -> list[asyncio.Task[_Definitions]]:
        """Cancel the background listings (see :meth:`AsyncTTLCache.refreshes`)."""
        return self._entries.refreshes()

    def invalidate(self, url: str, headers: Mapping[str, str]) -> None:
        """Forget this server's definitions for these headers (e.g. after connecting to it failed)."""
        self._entries.invalidate(self.key(url, headers))

    async def forget(self, url: str, headers: Mapping[str, str]) -> None:
        """:meth:`invalidate` in every replica: the entry leaves the second level too (within its deadline)."""
        await self._entries.forget(self.key(url, headers))

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        # Keys hold digests only, but there is nothing useful to show of them either.
        return f"ToolDefinitionCache(ttl={self.ttl}, entries={len(self._entries)})"
