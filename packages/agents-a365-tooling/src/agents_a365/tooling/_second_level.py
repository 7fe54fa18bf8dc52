"""The caches' optional second level: a store shared by a host's replicas (Redis, or one of the host's own).

Consulted on a first-level miss, before the origin (token exchange, gateway, ``tools/list``), and filled after
the origin answers: one single-flight creation per key and replica, as without it, and one per key across the
replicas while the store answers (a lease: :meth:`SecondLevel.lease`). Store keys are SHA-256
digests (no tenant, user or agent id, no token); values are sealed (``_sealing.py``). Every operation has a
total deadline (``cache_store_timeout``); a store that fails or is late is skipped for :data:`RETRY_AFTER`
seconds (the turn goes on with the first level and the origin), with one WARNING per outage and a counted
metric; the first operation after that tries it again.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
import weakref
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from mcp.types import Tool
from pydantic import TypeAdapter

from ._stepwise import json_value, mapped, run_cooperatively
from ._telemetry import instruments
from ._tool_cache import _Definitions as Definitions
from .configuration import ToolingConfiguration
from .models import MCPServerConfig

__all__ = ["CacheStore", "DefinitionsTier", "SecondLevel", "Tier", "second_level"]

logger = logging.getLogger(__name__)

V = TypeVar("V")
T = TypeVar("T")
RETRY_AFTER = 1.0
"""Seconds a failed store is left alone before the next operation tries it again."""
LEASE_WAIT = 5.0
"""Seconds (at most ``request_timeout``) a replica waits for another's creation before going to the origin."""


@runtime_checkable
class CacheStore(Protocol):
    """What the second level needs of a store (``agents_a365.tooling.redis_store.RedisStore``, or yours).

    Keys are short ASCII texts; values opaque bytes. ``set`` keeps a value ``ttl`` seconds (> 0); ``get``
    answers ``None`` for a missing or expired key. ``set_if_absent`` is ``set`` only when the key is missing
    (atomically: of replicas racing for one key, one gets ``True``); it takes the lease that lets one replica
    go to the origin while the others wait for its value. Errors may be raised freely: the caller bounds each
    call and treats a failure as a miss (and a failed ``set_if_absent`` as no lease: the origin at once)."""

    async def get(self, key: str) -> bytes | None: ...

    async def set(self, key: str, value: bytes, ttl: float) -> None: ...

    async def set_if_absent(self, key: str, value: bytes, ttl: float) -> bool: ...

    async def delete(self, key: str) -> None: ...


class SecondLevel:
    """A store, the keys that seal its values and the deadline of each operation."""

    def __init__(
        self,
        store: CacheStore,
        keys: str,
        *,
        timeout: Callable[[], float],
        lease: Callable[[], float] = lambda: 10.0,
        clock: Callable[[], float] = time.monotonic,
        owned: bool = False,
    ) -> None:
        from ._sealing import Sealer  # cryptography: only when a store is configured

        self.store, self.sealer, self._owned = store, Sealer(keys), owned
        self._timeout, self._lease, self._clock = timeout, lease, clock
        self._down_until: float | None = None  # set while the store is failing: skipped until then

    @staticmethod
    def store_key(name: str, key: Hashable) -> str:
        # The repr of a tuple of texts (a TurnKey included) is the same in every process.
        return f"a365:{name}:" + hashlib.sha256(repr(key).encode("utf-8", "surrogatepass")).hexdigest()

    async def get(self, name: str, key: Hashable) -> tuple[bytes, float, float] | None:
        """``(value, ttl left, age)`` of a fresh entry that opens, else ``None``."""
        store_key = self.store_key(name, key)
        sealed = await self._call(name, lambda: self.store.get(store_key))
        opened = None if not isinstance(sealed, bytes) else self.sealer.open(store_key, sealed)
        if opened is None:
            return None
        value, expires_at, ttl = opened
        left = expires_at - time.time()
        return (value, left, max(ttl - left, 0.0)) if 0 < left <= ttl else None

    async def set(self, name: str, key: Hashable, value: bytes, ttl: float) -> None:
        if ttl > 0:
            store_key = self.store_key(name, key)
            sealed = self.sealer.seal(store_key, value, time.time() + ttl, ttl)
            await self._call(name, lambda: self.store.set(store_key, sealed, ttl))

    async def delete(self, name: str, key: Hashable) -> None:
        store_key = self.store_key(name, key)
        await self._call(name, lambda: self.store.delete(store_key))

    async def lease(self, name: str, key: Hashable) -> tuple[bool, bool]:
        """Take the lease of creating ``key``'s value (kept ``request_timeout`` at most), polling while another
        replica holds it: ``(taken, waited)``. The holder lets go once it has saved (or failed); a waiter then
        takes it and reads the value, or gives up after :data:`LEASE_WAIT`; a failing store: no lease, at once."""
        store_key, ttl = self.store_key("lease", (name, key)), self._lease()
        deadline, delay, waited = self._clock() + min(ttl, LEASE_WAIT), 0.005, False

        def take() -> Awaitable[bool]:
            return self.store.set_if_absent(store_key, b"1", ttl)  # a marker: the key says it all

        while (taken := await self._call(name, take)) is False and self._clock() < deadline:
            waited = True
            await asyncio.sleep(delay)
            delay = min(2 * delay, 0.1)
        return taken is True, waited

    async def release(self, name: str, key: Hashable) -> None:
        # Tried even while the store seems down (it gave the lease moments ago): else the others wait it out.
        store_key = self.store_key("lease", (name, key))
        await self._call(name, lambda: self.store.delete(store_key), always=True)

    async def _call(self, name: str, operation: Callable[[], Awaitable[T]], always: bool = False) -> T | None:
        probe = self._down_until is not None  # the first try after an outage: only its success ends it
        if probe and not always and self._clock() < (self._down_until or 0.0):
            return None
        try:
            async with asyncio.timeout(max(self._timeout(), 0.001)):
                result = await operation()
        except Exception as exc:  # TimeoutError too; a cancelled turn's CancelledError goes through
            self._failed(name, exc)
            return None
        if probe and self._down_until is not None:  # (one begun before the outage proves nothing)
            self._down_until = None
            logger.info("the cache store answers again: the second level is back in use")
        return result

    def _failed(self, name: str, exc: Exception) -> None:
        error = "timeout" if isinstance(exc, TimeoutError) else type(exc).__name__
        if self._down_until is None:  # only the type: a store's message may hold its address or password
            logger.warning(
                "the cache store failed (%s): turns go on with the in-memory caches and the origin; "
                "trying it again every %.0f s",
                error,
                RETRY_AFTER,
            )
        self._down_until = self._clock() + RETRY_AFTER
        inst = instruments()
        if inst is not None:
            inst["cache_store_errors"].add(1, {"a365.cache.name": name, "error.type": error})

    async def aclose(self) -> None:
        close = getattr(self.store, "aclose", None) if self._owned else None
        if close is not None:
            await close()


@dataclass(slots=True)
class Tier(Generic[V]):
    """One cache's entries in the second level, converted to and from bytes."""

    level: SecondLevel
    name: str
    encode: Callable[[V], bytes]
    decode: Callable[[bytes], V]

    async def load(self, key: Hashable) -> tuple[V, float, float] | None:
        found = await self.level.get(self.name, key)
        if found is None:
            return None
        try:
            return self.decode(found[0]), found[1], found[2]
        except ValueError:  # written by a version with other fields: a miss
            return None

    async def save(self, key: Hashable, value: V, ttl: float) -> None:
        await self.level.set(self.name, key, self.encode(value), ttl)

    async def drop(self, key: Hashable) -> None:
        await self.level.delete(self.name, key)


_SERVERS = TypeAdapter(tuple[MCPServerConfig, ...])
_CODECS: dict[str, tuple[Callable[[Any], bytes], Callable[[bytes], Any]]] = {
    "token": (str.encode, bytes.decode),
    # Discovery caches each server's fields (``_discovery.py``), stored as the servers they are (validated).
    "discovery": (
        lambda v: _SERVERS.dump_json(_SERVERS.validate_python(v), by_alias=True),
        lambda b: _SERVERS.dump_python(_SERVERS.validate_json(b), exclude={"__all__": {"headers"}}),
    ),
}


def tier(level: SecondLevel | None, name: str) -> Tier[Any] | None:
    """The tier of the cache ``name`` (``token``, ``discovery``), or ``None`` without a second level."""
    return None if level is None else Tier(level, name, *_CODECS[name])


class DefinitionsTier:
    """Tool definitions in the second level, content-addressed: an entry holds the digest of its definitions,
    each distinct set is stored once under its digest (every user and replica listing it shares it)."""

    name = "tools"

    def __init__(self, level: SecondLevel, sets: weakref.WeakValueDictionary[str, Definitions]) -> None:
        self.level, self.sets = level, sets

    async def load(self, key: Hashable) -> tuple[Definitions, float, float] | None:
        found = await self.level.get("tools", key)
        if found is None:
            return None
        digest = found[0].decode()
        definitions = self.sets.get(digest)  # already held here: not read again
        if definitions is None:
            listed = await self.level.get("definitions", digest)
            try:
                data = None if listed is None else await run_cooperatively(json_value(listed[0]))
                tools = await run_cooperatively(mapped(data or (), Tool.model_validate))
            except ValueError:
                return None
            if listed is None or not isinstance(data, list):
                return None
            definitions = self.sets.setdefault(digest, Definitions(tuple(tools), digest))
        return definitions, found[1], found[2]

    async def save(self, key: Hashable, value: Definitions, ttl: float) -> None:
        dumped = await run_cooperatively(mapped(value.tools, lambda t: t.model_dump_json(by_alias=True)))
        await asyncio.gather(
            self.level.set("definitions", value.digest, f"[{','.join(dumped)}]".encode(), ttl),
            self.level.set("tools", key, value.digest.encode(), ttl),
        )

    async def drop(self, key: Hashable) -> None:
        await self.level.delete("tools", key)


def second_level(
    configuration: ToolingConfiguration, store: CacheStore | None, clock: Callable[[], float]
) -> SecondLevel | None:
    """The service's second level: ``store``, else a Redis store when ``cache_redis_url`` is set, else none."""
    owned = store is None
    if store is None:
        url = configuration.cache_redis_url
        if not url:
            return None
        from .redis_store import RedisStore  # redis: only when asked for

        store = RedisStore(url)
    elif not isinstance(store, CacheStore):
        raise TypeError("cache_store must have async get, set, set_if_absent and delete (see CacheStore)")
    keys = configuration.cache_keys
    if not keys:
        raise ValueError(
            "cache_keys (A365_CACHE_KEYS) is required with a cache store: what is stored is sealed with them"
        )
    return SecondLevel(
        store,
        keys,
        timeout=lambda: configuration.cache_store_timeout,
        lease=lambda: configuration.request_timeout,
        clock=clock,
        owned=owned,
    )
