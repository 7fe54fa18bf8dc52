"""MCP tool definitions as listed per server and user, each distinct set stored once (content-addressed)."""

from __future__ import annotations

import asyncio
import hashlib
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcp.types import Tool

from agents_a365.runtime.settings import Override

from ._cache import AsyncTTLCache
from ._stepwise import Steps, run, run_cooperatively
from .constants import DEFAULT_CACHE_MAX_ENTRIES

if TYPE_CHECKING:
    from ._second_level import SecondLevel

__all__ = ["ToolDefinitionCache"]


@dataclass(slots=True, weakref_slot=True, eq=False)  # eq=False: one set is one object (the index's)
class _Definitions:
    """One distinct set of tool definitions, shared by every entry that lists the same content (held
    weakly by the content index: it goes with its last entry)."""

    tools: tuple[Tool, ...]
    digest: str = ""  # of the content: its key in the second level


def _fingerprint(headers: Mapping[str, str]) -> str:
    # Every header the server sees (Authorization above all) is part of the key, so a definition
    # listed with one user's token is never handed to another user (a server may list per user, and put a
    # user's own details in a description). Only a digest is kept, of each name and value prefixed by its
    # length (no two header sets share a text; half the CPU of a JSON text).
    pairs = sorted((name.lower(), value) for name, value in headers.items())
    text = "".join(f"{len(name)}:{name}{len(value)}:{value}" for name, value in pairs)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ToolDefinitionCache:
    """``tools/list`` results keyed by server URL and a SHA-256 digest of the request headers (so per
    user), each distinct set of definitions stored once (content-addressed): users whose servers list
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
