"""The per-turn sessions of ``mcp_tools``: one MCP session per server for the duration of the block."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any, cast

from langchain_core.tools import BaseTool
from langchain_mcp_adapters.client import MultiServerMCPClient
from mcp import ClientSession
from mcp.types import Tool as McpTool

from agents_a365.tooling import (
    MCPServerConfig,
    McpServerConnectionError,
    ToolDefinitionCache,
    prime_output_schemas,
)
from agents_a365.tooling.extensibility import list_all_tools

from ._connections import Connected, connection_error, describe_failure, done, outcome, to_langchain

__all__ = ["open_sessions"]

logger = logging.getLogger(
    "agents_a365.tooling.extensions.langchain._connections"
)  # the name users filter on

# How long closing the per-turn sessions may take before the holders are cancelled.
_CLOSE_TIMEOUT = 5.0


class _TurnScope:
    """What the sessions of one ``open_sessions`` block share: the stop signal and the holders."""

    __slots__ = ("closed", "holders", "lazy", "stop")

    def __init__(self) -> None:
        self.stop = asyncio.Event()
        self.closed = False
        # Each holder task with the future it resolves: the server's tools (listed at
        # registration) or its open session (opened lazily by a tool call).
        self.holders: list[tuple[asyncio.Task[None], asyncio.Future[Any]]] = []
        self.lazy: list[_LazySession] = []


class _LazySession:
    """Stands in for a server's ``ClientSession`` in tools built from cached definitions.

    The first ``call_tool`` opens the server's session for the turn in a holder task (the MCP
    transport must be entered and exited in the same task); concurrent first calls share that
    one connect, which must complete within ``timeout``. A failed connect fails every call of
    the turn on this server with :class:`McpServerConnectionError` (no reconnect within the turn).
    """

    __slots__ = ("_client", "_definitions", "_ready", "_scope", "_server", "_timeout")

    def __init__(
        self,
        client: MultiServerMCPClient,
        server: MCPServerConfig,
        definitions: Sequence[McpTool],
        scope: _TurnScope,
        timeout: float,
    ) -> None:
        self._client = client
        self._definitions = definitions
        self._server = server
        self._scope = scope
        self._timeout = timeout
        self._ready: asyncio.Future[ClientSession] | None = None

    def __repr__(self) -> str:
        state = "idle" if self._ready is None else "connecting" if not self._ready.done() else "done"
        return f"_LazySession({self._server.mcp_server_name!r}, {state})"

    async def call_tool(self, *args: Any, **kwargs: Any) -> Any:
        session = await self._session()
        return await session.call_tool(*args, **kwargs)

    async def _session(self) -> ClientSession:
        if self._ready is None:
            if self._scope.closed:
                raise RuntimeError(
                    f"MCP server {self._server.mcp_server_name!r}: the tools of an mcp_tools() block "
                    "cannot be called after it exits"
                )
            self._connect()
        assert self._ready is not None
        # Shielded: a cancelled caller must not cancel the connect the other callers share.
        return await asyncio.shield(self._ready)

    def abort(self) -> None:
        """The block exits while connecting: the waiting calls fail (instead of being cancelled)."""
        if self._ready is not None and not self._ready.done():
            server = self._server
            self._ready.set_exception(
                McpServerConnectionError(
                    f"MCP server {server.mcp_server_name!r} at {server.url}: the mcp_tools() block "
                    "exited while connecting",
                    server_name=server.mcp_server_name,
                    url=server.url,
                )
            )

    def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[ClientSession] = loop.create_future()
        self._ready = ready
        name = self._server.mcp_server_name
        holder = asyncio.create_task(self._hold(ready), name=f"a365-mcp-session-{name}")
        self._scope.holders.append((holder, ready))

        def expire() -> None:
            if not ready.done():
                ready.set_exception(
                    connection_error(self._server, TimeoutError(f"no answer within {self._timeout} s"))
                )
                holder.cancel()

        deadline = loop.call_later(self._timeout, expire)
        holder.add_done_callback(lambda _: deadline.cancel())

    async def _hold(self, ready: asyncio.Future[ClientSession]) -> None:
        name = self._server.mcp_server_name
        try:
            async with self._client.session(name) as session:
                if ready.done():  # expired (or the block exited) while connecting
                    return
                logger.debug("MCP session %r opened (first tool call of the turn)", name)
                prime_output_schemas(session, self._definitions)
                ready.set_result(session)
                await self._scope.stop.wait()
            logger.debug("MCP session %r closed", name)
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(connection_error(self._server, exc))
            elif not isinstance(exc, asyncio.CancelledError):
                logger.debug("MCP session %r ended with %s", name, describe_failure(exc))
            if isinstance(exc, asyncio.CancelledError):
                raise


@contextlib.asynccontextmanager
async def open_sessions(
    client: MultiServerMCPClient,
    servers: Sequence[MCPServerConfig],
    cache: ToolDefinitionCache,
    *,
    timeout: float,
    skip_unreachable: bool = False,
) -> AsyncIterator[Connected]:
    """One MCP session per server for the duration of the block; yields each server's tools.

    A server whose definitions are cached (same URL and headers, within the cache's TTL) is not
    contacted here: its tools come from the cache and its session is opened by the first tool
    call (within ``timeout``), then kept for the rest of the block. The trade-off: such a server
    is not checked at registration, so if it has become unreachable its tool calls raise
    :class:`McpServerConnectionError` (``skip_unreachable`` cannot leave it out) and its entry
    is invalidated, so the next turn lists it again.

    Every other server must connect (initialize and list its tools) within ``timeout``; a server
    that fails or does not answer in time raises :class:`McpServerConnectionError` (the other
    sessions are closed), or with ``skip_unreachable`` is left out with a warning. Its
    definitions are cached once listed.

    Each session lives in its own holder task because the MCP client's transport (anyio task
    groups) must be entered and exited in the same task; the holders start together, so the
    servers are connected concurrently, and all of them (lazily opened ones too) are closed (or
    cancelled) on exit.
    """
    loop = asyncio.get_running_loop()
    scope = _TurnScope()
    ready: dict[str, asyncio.Future[list[BaseTool]]] = {}
    listing: dict[str, asyncio.Future[list[BaseTool]]] = {}

    async def hold(server: MCPServerConfig, future: asyncio.Future[list[BaseTool]]) -> None:
        name = server.mcp_server_name
        try:
            async with client.session(name) as session:
                logger.debug("MCP session %r opened for the turn", name)
                definitions = await list_all_tools(session, server_name=name)
                cache.put(server.url, server.headers, definitions)
                tools = to_langchain(definitions, server, cache, session=session, connection=None)
                if not future.done():
                    future.set_result(tools)
                await scope.stop.wait()
            logger.debug("MCP session %r closed", name)
        except BaseException as exc:
            if not future.done():
                future.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError):
                logger.debug("MCP session %r ended with %s", name, describe_failure(exc))
            if isinstance(exc, asyncio.CancelledError):
                raise

    for server in servers:
        name = server.mcp_server_name
        cached = cache.get(server.url, server.headers)
        if cached is not None:
            lazy = _LazySession(client, server, cached, scope, timeout)
            scope.lazy.append(lazy)
            session = cast(ClientSession, lazy)  # only call_tool is used
            ready[name] = done(loop, to_langchain(cached, server, cache, session=session, connection=None))
            continue
        future: asyncio.Future[list[BaseTool]] = loop.create_future()
        ready[name] = listing[name] = future
        holder = asyncio.create_task(hold(server, future), name=f"a365-mcp-session-{name}")
        scope.holders.append((holder, future))
    try:
        if listing:
            await asyncio.wait(listing.values(), timeout=timeout)
        for holder, future in scope.holders:
            if not future.done():  # past the deadline: give up on this server now
                future.cancel()
                holder.cancel()
        yield outcome(servers, ready, timeout, skip_unreachable)
    finally:
        scope.closed = True  # tools called from now on do not open new sessions
        scope.stop.set()
        holders = list(scope.holders)
        # Still connecting (we were cancelled, or a tool call is waiting for a lazy connect):
        # nothing to close politely.
        connecting = [holder for holder, future in holders if not future.done()]
        for lazy in scope.lazy:
            lazy.abort()  # its waiting calls fail with a typed error
        for _, future in holders:
            if not future.done():
                future.cancel()
        for holder in connecting:
            holder.cancel()
        if holders:
            _, pending = await asyncio.wait([h for h, _ in holders], timeout=_CLOSE_TIMEOUT)
            for holder in pending:
                holder.cancel()
            if pending:
                await asyncio.wait(pending)
        # Retrieve outcomes so no "exception was never retrieved" warnings leak.
        for _, future in holders:
            if future.done() and not future.cancelled():
                future.exception()
