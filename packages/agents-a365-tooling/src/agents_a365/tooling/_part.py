"""What the service's parts (discovery, tokens, threat protection) are given: settings, clock, HTTP client."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import httpx

from ._cache import AsyncTTLCache
from .configuration import ToolingConfiguration

if TYPE_CHECKING:
    from ._second_level import SecondLevel


class Shared(NamedTuple):
    """What the service hands its parts (no reference to the service itself)."""

    configuration: ToolingConfiguration
    clock: Callable[[], float]
    client: Callable[[], httpx.AsyncClient]
    """The HTTP client of the running event loop (the service makes one per loop)."""
    second_level: SecondLevel | None = None
    """The store shared with the host's other replicas, if configured."""

    def cache(self, name: str) -> AsyncTTLCache[Any]:
        """The cache ``name`` (its lookups counted as such) of at most ``cache_max_entries`` (read at each
        store) on the service's clock."""
        cache: AsyncTTLCache[Any] = AsyncTTLCache(
            lambda: self.configuration.cache_max_entries, self.clock, name
        )
        if self.second_level is not None:
            from ._second_level import tier

            cache.below = tier(self.second_level, name)
        return cache


class ServicePart:
    """A part of :class:`McpToolServerConfigurationService`, given what it needs."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared
        self.configuration = shared.configuration

    @property
    def http_client(self) -> httpx.AsyncClient:
        return self.shared.client()
