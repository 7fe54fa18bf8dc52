"""What the facade's parts (discovery, threat protection) share: the owner's settings and HTTP client."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import httpx

from .configuration import ToolingConfiguration


class Owner(Protocol):
    """The facade that owns the settings and the HTTP client (one per event loop)."""

    configuration: ToolingConfiguration
    clock: Callable[[], float]

    @property
    def http_client(self) -> httpx.AsyncClient: ...


class ServicePart:
    """A part of :class:`McpToolServerConfigurationService`, reading settings and client from its owner."""

    def __init__(self, owner: Owner) -> None:
        self._owner = owner

    @property
    def configuration(self) -> ToolingConfiguration:
        return self._owner.configuration

    @property
    def http_client(self) -> httpx.AsyncClient:
        return self._owner.http_client
