"""MCP tool definitions (``tools/list`` results) cached per server and per caller.

A warm turn then registers its tools without any MCP request: the extensions build the tools
from the cached definitions and open an MCP session only when a tool is first called.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mcp.types import Tool

__all__ = ["ToolDefinitionCache", "prime_output_schemas"]

_Key = tuple[str, str]


def _normalize_url(url: str) -> str:
    return url.strip().rstrip("/").lower()


def _fingerprint(headers: Mapping[str, str]) -> str:
    # Every header the server sees (Authorization above all) is part of the key, so a definition
    # listed with one user's token is never handed to another user. Only a digest is kept.
    digest = hashlib.sha256()
    for name, value in sorted((k.lower(), v) for k, v in headers.items()):
        digest.update(name.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
        digest.update(value.encode("utf-8", "surrogatepass"))
        digest.update(b"\x01")
    return digest.hexdigest()


class ToolDefinitionCache:
    """``tools/list`` results keyed by server URL and a SHA-256 digest of the request headers.

    Entries live ``ttl`` seconds (``0`` disables the cache: every turn lists the tools again);
    the least recently used entry goes first beyond ``max_entries``. The cached lists are
    tuples of ``mcp.types.Tool``: treat them as read-only.
    """

    def __init__(
        self, ttl: float, *, max_entries: int = 4096, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if ttl < 0:
            raise ValueError("ttl must be >= 0")
        self.ttl = ttl
        self._max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[_Key, tuple[tuple[Tool, ...], float]] = OrderedDict()

    @staticmethod
    def key(url: str, headers: Mapping[str, str]) -> _Key:
        return _normalize_url(url), _fingerprint(headers)

    @property
    def enabled(self) -> bool:
        return self.ttl > 0

    def get(self, url: str, headers: Mapping[str, str]) -> tuple[Tool, ...] | None:
        """The definitions listed for this server with exactly these headers, if still fresh."""
        key = self.key(url, headers)
        entry = self._entries.get(key)
        if entry is None:
            return None
        tools, stored_at = entry
        if stored_at + self.ttl <= self._clock():  # the TTL of now: the service sets it from the settings
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return tools

    def put(self, url: str, headers: Mapping[str, str], tools: Iterable[Tool]) -> None:
        if not self.enabled:
            return
        key = self.key(url, headers)
        self._entries[key] = (tuple(tools), self._clock())
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)

    def invalidate(self, url: str, headers: Mapping[str, str]) -> None:
        """Forget this server's definitions for these headers (e.g. after connecting to it failed)."""
        self._entries.pop(self.key(url, headers), None)

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        # Keys hold digests only, but there is nothing useful to show of them either.
        return f"ToolDefinitionCache(ttl={self.ttl}, entries={len(self._entries)})"


def prime_output_schemas(session: Any, definitions: Iterable[Tool]) -> None:
    """Give an ``mcp`` ``ClientSession`` opened without listing the output schemas it would have listed.

    ``ClientSession.call_tool`` validates structured results against the schemas of its last
    ``tools/list`` and lists the tools first when it has none for the tool: one round trip more on
    a warm turn's first call of each tool. Primed from the cached definitions, the session
    validates exactly as after a listing. If the attribute ever changes (a private detail of
    ``mcp`` 1.x), the session simply lists as it would anyway.
    """
    schemas = getattr(session, "_tool_output_schemas", None)
    if isinstance(schemas, dict):
        for definition in definitions:
            # mcp 1.x names the field outputSchema, mcp 2.x output_schema.
            schema = getattr(definition, "output_schema", None) or getattr(definition, "outputSchema", None)
            schemas.setdefault(definition.name, schema)
