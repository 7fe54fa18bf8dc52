"""What the service's parts (discovery, tokens, threat protection) are given: settings, clock, HTTP client."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from .configuration import ToolingConfiguration


class ServicePart:
    """A part of :class:`McpToolServerConfigurationService`, given what it needs (no reference to the service).

    ``client`` returns the HTTP client of the running event loop (the service makes one per loop).
    """

    def __init__(
        self,
        configuration: ToolingConfiguration,
        clock: Callable[[], float],
        client: Callable[[], httpx.AsyncClient],
    ) -> None:
        self.configuration = configuration
        self.clock = clock
        self._client = client

    @property
    def http_client(self) -> httpx.AsyncClient:
        return self._client()
