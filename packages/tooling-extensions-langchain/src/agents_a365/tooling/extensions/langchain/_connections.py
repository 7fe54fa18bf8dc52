"""MCP connections and tool loading over langchain-mcp-adapters, with warm turns from the
tooling service's :class:`~agents_a365.tooling.ToolDefinitionCache`.

Each server's ``tools/list`` result (the raw ``mcp.types.Tool`` definitions) is cached per server
URL and request headers, so per user (its ``Authorization`` is part of the key). A warm turn
builds the LangChain tools from the cached definitions without any MCP request:

- per call (:func:`load_tools_per_call`): each tool opens its own session per call, as always;
- per turn (:func:`open_sessions`): the server's one session for the turn is opened lazily by the
  first tool call and closed when the block exits.

The trade-off: on a cache hit nothing checks at registration that the server is still
reachable. Such a server fails at call time instead (the tool call raises, as a failed call
does), and its entry is invalidated so that the next turn lists it again (and, there,
``skip_unreachable`` applies as usual). Every failed call invalidates its server's entry; failed
listings are never cached.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Any, cast

import httpx
from langchain_core.tools import BaseTool
from langchain_mcp_adapters.callbacks import Callbacks
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.interceptors import MCPToolCallRequest, MCPToolCallResult, ToolCallInterceptor
from langchain_mcp_adapters.sessions import Connection, StreamableHttpConnection
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
from mcp import ClientSession
from mcp.types import PaginatedRequestParams
from mcp.types import Tool as McpTool

from agents_a365.tooling import (
    MCPServerConfig,
    McpServerConnectionError,
    ToolDefinitionCache,
    mcp_http_client_factory,
    prime_output_schemas,
)
from agents_a365.tooling.extensibility import scrubbed

from ._telemetry import TracedMCPClient, traced_tool_calls

__all__ = ["Connected", "build_client", "load_tools_per_call", "open_sessions"]

logger = logging.getLogger(__name__)

# How long closing the per-turn sessions may take before the holders are cancelled.
_CLOSE_TIMEOUT = 5.0
# Upper bound on tools/list pages per server (a server repeating its cursor must not loop forever).
_MAX_PAGES = 1000


def _connection(server: MCPServerConfig, timeout: float) -> StreamableHttpConnection:
    # server.headers is complete (shared headers + this server's own Authorization):
    # used as-is, never with another Authorization added. The adapters' HTTP read timeout is
    # their SSE timeout (5 min), so each MCP request also gets ``timeout`` as its response
    # deadline: a server that drops or stalls a tool call fails it instead of hanging the turn.
    return StreamableHttpConnection(
        transport="streamable_http",
        url=server.url,
        headers=dict(server.headers),
        timeout=timeout,
        session_kwargs={"read_timeout_seconds": timedelta(seconds=timeout)},
        # One shared TLS context instead of a new one per session (~17 ms of CPU each).
        httpx_client_factory=mcp_http_client_factory,
    )


def build_client(servers: Sequence[MCPServerConfig], timeout: float) -> MultiServerMCPClient:
    connections: dict[str, Connection] = {s.mcp_server_name: _connection(s, timeout) for s in servers}
    return TracedMCPClient(connections, handle_tool_errors=True)  # sessions opened in a span


def _describe(exc: BaseException) -> str:
    # Exception types (and HTTP status) only: transport errors may echo request details,
    # never risk a token.
    if isinstance(exc, BaseExceptionGroup):
        return ", ".join(sorted({_describe(e) for e in exc.exceptions}))
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    return type(exc).__name__


def _connection_error(server: MCPServerConfig, exc: BaseException) -> McpServerConnectionError:
    error = McpServerConnectionError(
        f"MCP server {server.mcp_server_name!r} at {server.url} failed: {_describe(exc)}",
        server_name=server.mcp_server_name,
        url=server.url,
    )
    error.__cause__ = exc
    return error


async def _list_definitions(session: ClientSession) -> list[McpTool]:
    """Every page of the server's ``tools/list``."""
    tools: list[McpTool] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(page.tools)
        if not page.nextCursor:
            return tools
        cursor = page.nextCursor
    raise RuntimeError(f"tools/list returned more than {_MAX_PAGES} pages")


def _invalidating(cache: ToolDefinitionCache, server: MCPServerConfig) -> ToolCallInterceptor:
    """An interceptor that forgets the server's cached definitions when a call fails, and scrubs
    token-shaped text out of the failure.

    Only failures of the call itself (connecting, transport, protocol errors, timeouts) get here;
    a tool's own error result (``isError``) is converted after the interceptors and keeps the entry.
    """

    async def invalidate_on_failure(
        request: MCPToolCallRequest, handler: Callable[[MCPToolCallRequest], Awaitable[MCPToolCallResult]]
    ) -> MCPToolCallResult:
        try:
            result: MCPToolCallResult = await handler(request)
        except Exception as exc:
            cache.invalidate(server.url, server.headers)
            clean = scrubbed(exc)
            if clean is exc:
                raise
        else:
            return result
        # A server may echo the bearer token in its error: raised outside the handler, so the
        # original (with the server's text) is neither cause nor context.
        raise clean

    return invalidate_on_failure


def _to_langchain(
    definitions: Sequence[McpTool],
    server: MCPServerConfig,
    cache: ToolDefinitionCache,
    *,
    session: ClientSession | None,
    connection: Connection | None,
    callbacks: Callbacks | None = None,
) -> list[BaseTool]:
    """What ``load_mcp_tools`` builds from the listed tools (same names, schemas and metadata,
    no name prefix, MCP execution errors returned to the model), plus cache invalidation."""
    interceptors = [traced_tool_calls(server.mcp_server_name), _invalidating(cache, server)]
    return [
        convert_mcp_tool_to_langchain_tool(
            session,
            definition,
            connection=connection,
            callbacks=callbacks,
            tool_interceptors=interceptors,
            server_name=server.mcp_server_name,
            tool_name_prefix=False,
            handle_tool_errors=True,
        )
        for definition in definitions
    ]


class Connected:
    """The servers that connected and their tools; ``skipped`` lists the ones left out."""

    __slots__ = ("servers", "skipped", "tools_by_server")

    def __init__(
        self,
        servers: list[MCPServerConfig],
        tools_by_server: dict[str, list[BaseTool]],
        skipped: list[McpServerConnectionError],
    ) -> None:
        self.servers = servers
        self.tools_by_server = tools_by_server
        self.skipped = skipped


def _outcome(
    servers: Sequence[MCPServerConfig],
    results: dict[str, asyncio.Future[list[BaseTool]]],
    timeout: float,
    skip_unreachable: bool,
) -> Connected:
    """Raise for the first failed server (naming the others), or skip them with a warning."""
    failures: list[McpServerConnectionError] = []
    for server in servers:
        future = results[server.mcp_server_name]
        if not future.done() or future.cancelled():
            failures.append(_connection_error(server, TimeoutError(f"no answer within {timeout} s")))
            continue
        exc = future.exception()
        if exc is not None:
            failures.append(_connection_error(server, exc))
    if failures and not skip_unreachable:
        first = failures[0]
        if len(failures) > 1:
            others = ", ".join(repr(f.server_name) for f in failures[1:])
            error = McpServerConnectionError(
                f"{first} (also failed: {others})", server_name=first.server_name, url=first.url
            )
            error.__cause__ = first.__cause__
            raise error
        raise first
    failed = {f.server_name for f in failures}
    for failure in failures:
        logger.warning("skipping MCP server %r: %s", failure.server_name, failure)
    ok = [s for s in servers if s.mcp_server_name not in failed]
    return Connected(ok, {s.mcp_server_name: results[s.mcp_server_name].result() for s in ok}, failures)


def _done(loop: asyncio.AbstractEventLoop, tools: list[BaseTool]) -> asyncio.Future[list[BaseTool]]:
    future: asyncio.Future[list[BaseTool]] = loop.create_future()
    future.set_result(tools)
    return future


async def load_tools_per_call(
    client: MultiServerMCPClient,
    servers: Sequence[MCPServerConfig],
    cache: ToolDefinitionCache,
    *,
    timeout: float,
    skip_unreachable: bool = False,
) -> Connected:
    """Each server's tools; each tool opens its own session per call.

    Servers with cached definitions (same URL and headers, within the cache's TTL) cost no MCP
    request at all; the others are listed concurrently within ``timeout`` (one session each, every
    page) and their definitions cached. A cached server that has become unreachable is not
    noticed here: its tools fail when called (and the entry is invalidated).
    """
    loop = asyncio.get_running_loop()
    results: dict[str, asyncio.Future[list[BaseTool]]] = {}
    tasks: list[asyncio.Task[list[BaseTool]]] = []

    def per_call_tools(server: MCPServerConfig, definitions: Sequence[McpTool]) -> list[BaseTool]:
        connection = client.connections[server.mcp_server_name]
        return _to_langchain(
            definitions, server, cache, session=None, connection=connection, callbacks=client.callbacks
        )

    async def list_server(server: MCPServerConfig) -> list[BaseTool]:
        async with client.session(server.mcp_server_name) as session:
            definitions = await _list_definitions(session)
        logger.debug(
            "MCP session %r opened and closed to list %d tool(s)", server.mcp_server_name, len(definitions)
        )
        cache.put(server.url, server.headers, definitions)
        return per_call_tools(server, definitions)

    for server in servers:
        name = server.mcp_server_name
        cached = cache.get(server.url, server.headers)
        if cached is not None:
            results[name] = _done(loop, per_call_tools(server, cached))
            continue
        task = asyncio.create_task(list_server(server), name=f"a365-mcp-list-{name}")
        results[name] = task
        tasks.append(task)
    try:
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
        return _outcome(servers, results, timeout, skip_unreachable)
    finally:
        # Listings still running past the deadline (or when we are cancelled) are abandoned.
        pending = [task for task in tasks if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)


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
                    _connection_error(self._server, TimeoutError(f"no answer within {self._timeout} s"))
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
                ready.set_exception(_connection_error(self._server, exc))
            elif not isinstance(exc, asyncio.CancelledError):
                logger.debug("MCP session %r ended with %s", name, _describe(exc))
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
                definitions = await _list_definitions(session)
                cache.put(server.url, server.headers, definitions)
                tools = _to_langchain(definitions, server, cache, session=session, connection=None)
                if not future.done():
                    future.set_result(tools)
                await scope.stop.wait()
            logger.debug("MCP session %r closed", name)
        except BaseException as exc:
            if not future.done():
                future.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError):
                logger.debug("MCP session %r ended with %s", name, _describe(exc))
            if isinstance(exc, asyncio.CancelledError):
                raise

    for server in servers:
        name = server.mcp_server_name
        cached = cache.get(server.url, server.headers)
        if cached is not None:
            lazy = _LazySession(client, server, cached, scope, timeout)
            scope.lazy.append(lazy)
            session = cast(ClientSession, lazy)  # only call_tool is used
            ready[name] = _done(loop, _to_langchain(cached, server, cache, session=session, connection=None))
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
        yield _outcome(servers, ready, timeout, skip_unreachable)
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
