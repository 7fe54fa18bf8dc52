"""The Redis (or Valkey) store of the caches' second level, on redis-py's asyncio client.

Install with ``pip install "agents-a365-tooling[redis]"``. Give it to the service
(``McpToolServerConfigurationService(cache_store=RedisStore("redis://cache:6379/0"))``) or set
``A365_CACHE_REDIS_URL``; either way with ``A365_CACHE_KEYS`` (README "Running several replicas").
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

__all__ = ["RedisStore"]


class RedisStore:
    """:class:`~agents_a365.tooling.CacheStore` on Redis: ``GET``, ``SET ... PX [NX]`` and ``DEL``.

    ``server``: a ``redis://`` / ``rediss://`` / ``unix://`` URL (one client per event loop, made on first use,
    ``options`` passed to ``Redis.from_url``), or a ``redis.asyncio.Redis`` client of yours (used as it is, on
    its own loop, and left open by :meth:`aclose`). The service bounds every call (``cache_store_timeout``)."""

    def __init__(self, server: str | Redis, **options: Any) -> None:
        if not isinstance(server, str | Redis):
            raise TypeError("server must be a redis:// URL or a redis.asyncio.Redis client")
        self._client = server if isinstance(server, Redis) else None
        self._url = server if isinstance(server, str) else None
        # One immediate retry (a pooled connection that a restart broke), no backoff: the caller's deadline
        # is milliseconds, and the second level would rather miss than wait. (redis<5.1 retries only the errors
        # named.)
        retry = Retry(NoBackoff(), 1)
        self._options = {
            "socket_connect_timeout": 1.0,
            "socket_timeout": 1.0,
            "retry": retry,
            "retry_on_error": [RedisConnectionError],
            **options,
        }
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Redis] = (
            weakref.WeakKeyDictionary()
        )

    def _redis(self) -> Redis:
        if self._client is not None:
            return self._client
        loop = asyncio.get_running_loop()  # a client's connections belong to the loop that made them
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = Redis.from_url(self._url or "", **self._options)
        return client

    async def get(self, key: str) -> bytes | None:
        value = await self._redis().get(key)
        return value if isinstance(value, bytes) else None

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        await self._redis().set(key, value, px=max(int(ttl * 1000), 1))

    async def set_if_absent(self, key: str, value: bytes, ttl: float) -> bool:
        return bool(await self._redis().set(key, value, px=max(int(ttl * 1000), 1), nx=True))

    async def delete(self, key: str) -> None:
        await self._redis().delete(key)

    async def aclose(self) -> None:
        """Close the client of the running loop that this store made."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    def __repr__(self) -> str:
        return (
            "RedisStore(<client>)" if self._client is not None else "RedisStore(<url>)"
        )  # a URL may hold a password
