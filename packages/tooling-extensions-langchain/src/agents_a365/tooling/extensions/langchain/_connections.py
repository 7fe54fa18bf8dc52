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
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import cast

import httpx
from langchain_core.tools import BaseTool
from langchain_mcp_adapters.callbacks import Callbacks
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.interceptors import MCPToolCallRequest, MCPToolCallResult, ToolCallInterceptor
from langchain_mcp_adapters.sessions import Connection, StreamableHttpConnection
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
from mcp import ClientSession
from mcp.types import Tool as McpTool

from agents_a365.tooling import (
    MCPServerConfig,
    McpServerConnectionError,
    McpToolServerConfigurationService,
    ToolDefinitionCache,
    mcp_http_client_factory,
)
from agents_a365.tooling.extensibility import check_turn, scrubbed

from ._session_pool import McpSessionPool, PooledSession
from ._telemetry import TracedMCPClient, traced_tool_calls
from ._toolset import A365_SERVER

__all__ = [
    "Connected",
    "build_client",
    "connection_error",
    "describe_failure",
    "done",
    "load_tools_per_call",
    "outcome",
    "to_langchain",
]

logger = logging.getLogger(__name__)


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


def describe_failure(exc: BaseException) -> str:
    # Exception types (and HTTP status) only: transport errors may echo request details,
    # never risk a token.
    if isinstance(exc, BaseExceptionGroup):
        return ", ".join(sorted({describe_failure(e) for e in exc.exceptions}))
    if isinstance(exc, McpServerConnectionError) and exc.__cause__ is not None:
        return describe_failure(exc.__cause__)  # the core's listing failed: say why
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    status = getattr(exc, "status_code", None)  # the core's listing errors carry the HTTP status
    if isinstance(status, int):
        return f"HTTP {status}"
    return type(exc).__name__


def connection_error(server: MCPServerConfig, exc: BaseException) -> McpServerConnectionError:
    error = McpServerConnectionError(
        f"MCP server {server.mcp_server_name!r} at {server.url} failed: {describe_failure(exc)}",
        server_name=server.mcp_server_name,
        url=server.url,
    )
    error.__cause__ = exc
    return error


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


def _turn_guard(server: MCPServerConfig) -> ToolCallInterceptor:
    """Refuses the call, before anything is sent, in a turn of another identity than the server's."""

    async def guard(
        request: MCPToolCallRequest, handler: Callable[[MCPToolCallRequest], Awaitable[MCPToolCallResult]]
    ) -> MCPToolCallResult:
        context = getattr(request.runtime, "context", None)
        check_turn(server.identity, context, what=f"MCP server {server.mcp_server_name!r}")
        return await handler(request)

    return guard


def to_langchain(
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
    interceptors = [
        _turn_guard(server),
        traced_tool_calls(server.mcp_server_name),
        _invalidating(cache, server),
    ]
    tools = [
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
    for tool in tools:  # what add_tool_servers_to_agent replaces in a later turn
        tool.metadata = {**(tool.metadata or {}), A365_SERVER: server.mcp_server_name}
    return tools


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


def outcome(
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
            failures.append(connection_error(server, TimeoutError(f"no answer within {timeout} s")))
            continue
        exc = future.exception()
        if exc is not None:
            failures.append(connection_error(server, exc))
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


def done(loop: asyncio.AbstractEventLoop, tools: list[BaseTool]) -> asyncio.Future[list[BaseTool]]:
    future: asyncio.Future[list[BaseTool]] = loop.create_future()
    future.set_result(tools)
    return future


async def load_tools_per_call(
    client: MultiServerMCPClient,
    servers: Sequence[MCPServerConfig],
    core: McpToolServerConfigurationService,
    *,
    timeout: float,
    skip_unreachable: bool = False,
    pool: McpSessionPool | None = None,
) -> Connected:
    """Each server's tools, calling through ``pool``'s sessions (or, without a pool, one session per call).

    Servers with cached definitions (same URL and headers, within the cache's TTL) cost no MCP
    request at all; the others are listed concurrently within ``timeout`` by the tooling core
    (``list_mcp_tools``: plain requests on its pooled client, no MCP session objects) and their
    definitions cached. A cached server that has become unreachable is not noticed here: its
    tools fail when called (and the entry is invalidated).
    """
    cache = core.tool_definitions
    loop = asyncio.get_running_loop()
    results: dict[str, asyncio.Future[list[BaseTool]]] = {}
    tasks: list[asyncio.Task[list[BaseTool]]] = []

    def per_call_tools(server: MCPServerConfig, definitions: Sequence[McpTool]) -> list[BaseTool]:
        connection = client.connections[server.mcp_server_name]
        if pool is not None:
            session = cast(
                ClientSession, PooledSession(pool, server, connection, definitions)
            )  # call_tool only
            return to_langchain(
                definitions, server, cache, session=session, connection=None, callbacks=client.callbacks
            )
        return to_langchain(
            definitions, server, cache, session=None, connection=connection, callbacks=client.callbacks
        )

    async def list_server(server: MCPServerConfig) -> list[BaseTool]:
        definitions = await core.list_mcp_tools(server)  # cached by the core
        logger.debug("MCP server %r listed: %d tool(s)", server.mcp_server_name, len(definitions))
        return per_call_tools(server, definitions)

    for server in servers:
        name = server.mcp_server_name
        cached = cache.get(server.url, server.headers)
        if cached is not None:
            results[name] = done(loop, per_call_tools(server, cached))
            continue
        task = asyncio.create_task(list_server(server), name=f"a365-mcp-list-{name}")
        results[name] = task
        tasks.append(task)
    try:
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
        return outcome(servers, results, timeout, skip_unreachable)
    finally:
        # Listings still running past the deadline (or when we are cancelled) are abandoned.
        pending = [task for task in tasks if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
