"""The MCP servers registered for one agent (one turn): listed together, closed together."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Self

from agents.mcp import MCPServer
from mcp.types import Tool

from agents_a365.tooling import MCPServerConfig, McpServerConnectionError, McpToolServerConfigurationService
from agents_a365.tooling.extensibility import scrub

from ._server import A365MCPServer

__all__ = ["McpServerConnections", "list_ahead"]

logger = logging.getLogger(__name__)


def _failure(config: MCPServerConfig, exc: Exception) -> McpServerConnectionError:
    if isinstance(exc, McpServerConnectionError):  # the core's: names the server and says why already
        return exc
    text = scrub(exc)
    name, url = config.mcp_server_name, config.url
    error = McpServerConnectionError(
        f"MCP server {name!r} at {url} could not be listed: {type(exc).__name__}{': ' + text if text else ''}",
        server_name=name,
        url=url,
    )
    error.__cause__ = exc
    return error


async def list_ahead(
    core: McpToolServerConfigurationService, configs: Sequence[MCPServerConfig], *, skip_unreachable: bool
) -> tuple[list[tuple[MCPServerConfig, list[Tool]]], list[McpServerConnectionError]]:
    """Every server's tools, listed concurrently by the tooling core (cached per server and token).

    Returns the servers listed with their tools and, with ``skip_unreachable``, one error per server
    left out (logged as a warning); without it the first failure raises, naming the others.
    """
    outcomes = await asyncio.gather(*(core.list_mcp_tools(c) for c in configs), return_exceptions=True)
    listed: list[tuple[MCPServerConfig, list[Tool]]] = []
    failures: list[McpServerConnectionError] = []
    for config, outcome in zip(configs, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome  # a cancellation of a listing is ours
            failures.append(_failure(config, outcome))
        else:
            listed.append((config, outcome))
    if failures and not skip_unreachable:
        first = failures[0]
        if len(failures) > 1:
            others = ", ".join(repr(f.server_name) for f in failures[1:])
            raise McpServerConnectionError(
                f"{first} (also failed: {others})", server_name=first.server_name, url=first.url
            ) from first.__cause__
        raise first
    for failure in failures:
        logger.warning("skipping MCP server %r: %s", failure.server_name, failure)
    return listed, failures


class McpServerConnections:
    """The MCP servers registered for one agent (one turn): close them with :meth:`aclose`."""

    def __init__(
        self, servers: Sequence[A365MCPServer], skipped: Sequence[McpServerConnectionError] = ()
    ) -> None:
        self._servers = list(servers)
        self._closed = False
        self._on_close: list[Callable[[McpServerConnections], object]] = []
        self.skipped = list(skipped)
        """Servers left out with ``skip_unreachable=True``, one error each (empty otherwise)."""

    @property
    def servers(self) -> list[MCPServer]:
        """The registered servers (empty once closed)."""
        return [] if self._closed else list(self._servers)

    @property
    def closed(self) -> bool:
        return self._closed

    def on_close(self, callback: Callable[[McpServerConnections], object]) -> None:
        """Call ``callback(self)`` once these connections are closed (by whoever closes them)."""
        self._on_close.append(callback)

    async def aclose(self) -> None:
        """Close every server's MCP session (idempotent; waits for their holder tasks)."""
        if self._closed:
            return
        self._closed = True
        for callback in self._on_close:
            callback(self)
        # Shielded: a cancellation arriving mid-cleanup must not leave sessions or holder tasks behind.
        cleanup = asyncio.ensure_future(asyncio.gather(*(s.cleanup() for s in self._servers)))
        try:
            await asyncio.shield(cleanup)
        except asyncio.CancelledError:
            await cleanup
            raise

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
