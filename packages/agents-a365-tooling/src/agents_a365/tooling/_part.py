"""What the service's parts (discovery, tokens, threat protection) are given: settings, clock, HTTP client."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import httpx

from ._cache import AsyncTTLCache
from .configuration import ToolingConfiguration


class Shared(NamedTuple):
    """What the service hands its parts (no reference to the service itself)."""

    configuration: ToolingConfiguration
    clock: Callable[[], float]
    client: Callable[[], httpx.AsyncClient]
    """The HTTP client of the running event loop (the service makes one per loop)."""

    def cache(self, name: str) -> AsyncTTLCache[Any]:
        """The cache ``name`` (its lookups counted as such) of at most ``cache_max_entries`` (read at each
        store) on the service's clock."""
        return AsyncTTLCache(lambda: self.configuration.cache_max_entries, self.clock, name)


class ServicePart:
    """A part of :class:`McpToolServerConfigurationService`, given what it needs."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared
        self.configuration = shared.configuration

    @property
    def http_client(self) -> httpx.AsyncClient:
        return self.shared.client()
