"""Concurrent, leak-free connection of a set of MCP servers (built on the SDK's ``MCPServerManager``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Self

from agents.mcp import MCPServer, MCPServerManager, MCPServerStreamableHttp

from agents_a365.tooling import MCPServerConfig, McpServerConnectionError, McpToolServerConfigurationService
from agents_a365.tooling.extensibility import scrub

from ._server import A365MCPServer

__all__ = ["McpServerConnections", "list_ahead"]

logger = logging.getLogger(__name__)


def _describe(exc: BaseException) -> str:
    # anyio task groups wrap the real failure in exception groups.
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, asyncio.CancelledError):
        return "the connection was interrupted"
    # Token-shaped text inside foreign error messages (defence in depth: the SDK redacts too).
    text = scrub(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _failure(name: str, url: str | None, exc: BaseException | None) -> McpServerConnectionError:
    where = f" at {url}" if url else ""
    # The core's listing error names the server already: describe what caused it.
    cause = exc.__cause__ if isinstance(exc, McpServerConnectionError) and exc.__cause__ else exc
    text = _describe(cause) if cause is not None else "connection failed"
    error = McpServerConnectionError(
        f"MCP server {name!r}{where} could not be connected: {text}", server_name=name, url=url
    )
    if exc is not None:
        error.__cause__ = exc
    return error


def _raise_first(failures: list[McpServerConnectionError]) -> None:
    first = failures[0]
    if len(failures) > 1:
        others = ", ".join(repr(f.server_name) for f in failures[1:])
        raise McpServerConnectionError(
            f"{first} (also failed: {others})", server_name=first.server_name, url=first.url
        ) from first.__cause__
    raise first


async def list_ahead(
    core: McpToolServerConfigurationService,
    configs: Sequence[MCPServerConfig],
    *,
    skip_unreachable: bool,
) -> tuple[list[MCPServerConfig], list[McpServerConnectionError]]:
    """List every server's tools with the tooling core, concurrently, into its tool-definition cache.

    The servers then register lazily (:class:`A365MCPServer` connects on its first call), so a cold
    turn costs the listing only: plain requests on the core's pooled client rather than an MCP session
    per server. Returns the servers listed and, with ``skip_unreachable``, one error per server left out;
    without it the first failure raises (naming the others).
    """
    outcomes = await asyncio.gather(*(core.list_mcp_tools(c) for c in configs), return_exceptions=True)
    listed: list[MCPServerConfig] = []
    failures: list[McpServerConnectionError] = []
    for config, outcome in zip(configs, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome  # a cancellation of a listing is ours
            failures.append(_failure(config.mcp_server_name, config.url, outcome))
        else:
            listed.append(config)
    if failures and not skip_unreachable:
        _raise_first(failures)
    for failure in failures:
        logger.warning("skipping MCP server %r: %s", failure.server_name, failure)
    return listed, failures


class McpServerConnections:
    """The MCP servers connected for one agent (one turn): close them with :meth:`aclose`.

    Connects every server concurrently, each in its own worker task (the SDK's
    ``MCPServerManager(connect_in_parallel=True)``), so ``connect``/``cleanup`` of a server run
    in the same task as the MCP transport requires, whichever task calls :meth:`aclose`.
    """

    def __init__(
        self,
        servers: Sequence[tuple[MCPServerConfig, MCPServerStreamableHttp]],
        *,
        connect_timeout: float,
        cleanup_timeout: float,
    ) -> None:
        self._configs: dict[MCPServer, MCPServerConfig] = {server: cfg for cfg, server in servers}
        self._manager = MCPServerManager(
            [server for _, server in servers],
            connect_timeout_seconds=connect_timeout,
            cleanup_timeout_seconds=cleanup_timeout,
            drop_failed_servers=True,
            strict=False,  # collect every failure, then decide (error or skip) here
            # The MCP v1 transport reports some connection failures (a dropped connection) as a
            # CancelledError out of connect(): record those as failures. A real cancellation of
            # the caller is detected with Task.cancelling() in connect() below.
            suppress_cancelled_error=True,
            connect_in_parallel=True,
        )
        self._closed = False
        self._on_close: list[Callable[[McpServerConnections], object]] = []
        self.skipped: list[McpServerConnectionError] = []
        """Servers left out with ``skip_unreachable=True``, one error each (empty otherwise)."""

    @property
    def servers(self) -> list[MCPServer]:
        """The connected servers (empty once closed)."""
        return [] if self._closed else self._manager.active_servers

    @property
    def closed(self) -> bool:
        return self._closed

    def on_close(self, callback: Callable[[McpServerConnections], object]) -> None:
        """Call ``callback(self)`` once these connections are closed (by whoever closes them)."""
        self._on_close.append(callback)

    def _error(self, server: MCPServer, exc: BaseException | None) -> McpServerConnectionError:
        config = self._configs.get(server)
        return _failure(
            config.mcp_server_name if config else server.name, config.url if config else None, exc
        )

    async def connect(self, *, skip_unreachable: bool = False) -> list[MCPServer]:
        """Connect every server concurrently and return the connected ones.

        An unreachable server raises :class:`McpServerConnectionError` naming it (the other
        servers are closed first); with ``skip_unreachable`` it is left out with a warning.
        """
        # In a task of its own: on cancellation the connects in flight are aborted first. Cancelled
        # directly, the manager would queue each server's cleanup behind its running connect and
        # so wait for a held ``initialize`` (up to the connect timeout) before giving up.
        connecting = asyncio.ensure_future(self._manager.connect_all())
        try:
            await asyncio.shield(connecting)
        except BaseException:
            if not connecting.done():
                for server in self._configs:
                    if isinstance(server, A365MCPServer):
                        server.abort_connect()
                connecting.cancel()
                await asyncio.wait({connecting})
            if not connecting.cancelled():
                connecting.exception()  # retrieved: the caller's cancellation is what propagates
            # The manager cleans up on failure; closing again is a no-op then, but makes sure.
            await self.aclose()
            raise
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            # Cancelled while connecting (the manager may have swallowed it): stay cancelled.
            await self.aclose()
            raise asyncio.CancelledError
        errors = self._manager.errors
        failures = [self._error(server, errors.get(server)) for server in self._manager.failed_servers]
        if failures and not skip_unreachable:
            await self.aclose()
            _raise_first(failures)
        for failure in failures:
            logger.warning("skipping MCP server %r: %s", failure.server_name, failure)
        self.skipped = [*self.skipped, *failures]
        # The Runner lists tools server by server; list them all at once now instead
        # (cache_tools_list=True keeps the result for the run).
        cached = [s for s in self.servers if getattr(s, "cache_tools_list", False)]
        try:
            listed = await asyncio.gather(*(s.list_tools() for s in cached), return_exceptions=True)
        except BaseException:
            # Cancelled while listing (the turn ended): nobody else will close these servers.
            await self.aclose()
            raise
        for server, outcome in zip(cached, listed, strict=True):
            if isinstance(outcome, BaseException):
                logger.debug(
                    "listing the tools of %r ahead of the run failed: %s", server.name, type(outcome).__name__
                )
        return self.servers

    async def aclose(self) -> None:
        """Close every server this handle connected (idempotent; waits for their worker tasks)."""
        if self._closed:
            return
        self._closed = True
        for callback in self._on_close:
            callback(self)
        # Shielded: a cancellation arriving mid-cleanup must not leave sessions or worker tasks behind.
        cleanup = asyncio.ensure_future(self._manager.cleanup_all())
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
