"""A turn's MCP tools as LangChain tools, every call through the tooling service's session pool.

Sessions are the pool's (:class:`~agents_a365.tooling.extensibility.McpSessionPool`, per server URL and
request headers, so per user token): opened by a listing or a first call, reused across calls and turns
until idle, token expiry, the bound or ``aclose``. An ``mcp_tools`` block is a :class:`TurnScope`: once it
exits its tools refuse to run.

Definitions come from the tooling service's :class:`~agents_a365.tooling.ToolDefinitionCache` (per server
URL and request headers, so per user): a warm turn makes no MCP request at registration. The trade-off: a
cached server that has become unreachable fails at call time instead (as a failed call does), and its
entry is invalidated so that the next turn lists it again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, NamedTuple, cast

from langchain_core.tools import BaseTool
from langchain_mcp_adapters.interceptors import MCPToolCallRequest, MCPToolCallResult, ToolCallInterceptor
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
from mcp import ClientSession
from mcp.types import CallToolResult
from mcp.types import Tool as McpTool

from agents_a365.tooling import MCPServerConfig, McpServerConnectionError, ToolDefinitionCache
from agents_a365.tooling.extensibility import McpSessionPool, check_turn, scrubbed

from ._telemetry import traced_tool_calls
from ._toolset import A365_SERVER

__all__ = ["Connected", "TurnScope", "load_tools"]

logger = logging.getLogger(__name__)

_CONVERT_BATCH = 100  # tools converted between two yields to the event loop


class TurnScope:
    """The life of an ``mcp_tools`` block: its tools refuse to run once it is closed."""

    __slots__ = ("closed",)

    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


class _PoolSession:
    """Stands in for a server's ``ClientSession`` in langchain-mcp-adapters' tools (``call_tool`` only)."""

    __slots__ = ("_pool", "_schemas", "_scope", "_server")

    def __init__(
        self,
        pool: McpSessionPool,
        server: MCPServerConfig,
        definitions: Sequence[McpTool],
        scope: TurnScope | None,
    ) -> None:
        self._pool = pool
        self._server = server
        self._schemas = {d.name: d.outputSchema for d in definitions if d.outputSchema is not None}
        self._scope = scope

    def __repr__(self) -> str:
        return f"_PoolSession({self._server.mcp_server_name!r})"

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, progress_callback: Any = None, **_: Any
    ) -> CallToolResult:
        if self._scope is not None and self._scope.closed:
            raise RuntimeError(
                f"MCP server {self._server.mcp_server_name!r}: the tools of an mcp_tools() block cannot be "
                "called after it exits"
            )
        return await self._pool.call_tool(
            self._server,
            name,
            arguments,
            output_schema=self._schemas.get(name),
            progress_callback=progress_callback,
        )


def connection_error(server: MCPServerConfig, exc: BaseException) -> McpServerConnectionError:
    if isinstance(exc, McpServerConnectionError):  # the core's: names the server and why, no token
        return exc
    return McpServerConnectionError(
        f"MCP server {server.mcp_server_name!r} at {server.url} failed: {type(exc).__name__}",
        server_name=server.mcp_server_name,
        url=server.url,
    )


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


async def to_langchain(
    definitions: Sequence[McpTool],
    server: MCPServerConfig,
    cache: ToolDefinitionCache,
    pool: McpSessionPool,
    *,
    scope: TurnScope | None,
) -> list[BaseTool]:
    """What ``load_mcp_tools`` builds from the listed tools (same names, schemas and metadata, no name
    prefix, MCP execution errors returned to the model), calling through ``pool``, plus cache
    invalidation. Converted in batches: thousands of tools never hold the event loop in one step."""
    session = cast(ClientSession, _PoolSession(pool, server, definitions, scope))
    interceptors = [
        _turn_guard(server),
        traced_tool_calls(server.mcp_server_name),
        _invalidating(cache, server),
    ]
    tools: list[BaseTool] = []
    for start in range(0, len(definitions), _CONVERT_BATCH):
        if start:
            await asyncio.sleep(0)
        tools.extend(
            convert_mcp_tool_to_langchain_tool(
                session,
                definition,
                tool_interceptors=interceptors,
                server_name=server.mcp_server_name,
                tool_name_prefix=False,
                handle_tool_errors=True,
            )
            for definition in definitions[start : start + _CONVERT_BATCH]
        )
    for tool in tools:  # what add_tool_servers_to_agent replaces in a later turn
        tool.metadata = {**(tool.metadata or {}), A365_SERVER: server.mcp_server_name}
    return tools


class Connected(NamedTuple):
    """The servers that connected and their tools; ``skipped`` lists the ones left out."""

    servers: list[MCPServerConfig]
    tools_by_server: dict[str, list[BaseTool]]
    skipped: list[McpServerConnectionError]


def _outcome(
    servers: Sequence[MCPServerConfig],
    results: dict[str, asyncio.Task[list[BaseTool]]],
    timeout: float,
    skip_unreachable: bool,
) -> Connected:
    """Raise for the first failed server (naming the others), or skip them with a warning."""
    failures: list[McpServerConnectionError] = []
    for server in servers:
        task = results[server.mcp_server_name]
        if not task.done() or task.cancelled():
            failures.append(connection_error(server, TimeoutError(f"no answer within {timeout} s")))
            continue
        exc = task.exception()
        if exc is not None:
            failures.append(connection_error(server, exc))
    if failures and not skip_unreachable:
        first = failures[0]
        if len(failures) > 1:
            others = ", ".join(repr(f.server_name) for f in failures[1:])
            error = McpServerConnectionError(
                f"{first} (also failed: {others})", server_name=first.server_name, url=first.url
            )
            raise error from None
        raise first from None
    failed = {f.server_name for f in failures}
    for failure in failures:
        logger.warning("skipping MCP server %r: %s", failure.server_name, failure)
    ok = [s for s in servers if s.mcp_server_name not in failed]
    return Connected(ok, {s.mcp_server_name: results[s.mcp_server_name].result() for s in ok}, failures)


async def load_tools(
    servers: Sequence[MCPServerConfig],
    cache: ToolDefinitionCache,
    pool: McpSessionPool,
    list_tools: Callable[[MCPServerConfig], Awaitable[Iterable[McpTool]]],
    *,
    timeout: float,
    skip_unreachable: bool = False,
    scope: TurnScope | None = None,
) -> Connected:
    """Each server's tools, calling through ``pool``: cached definitions cost no MCP request, the others
    are listed concurrently by ``list_tools`` within ``timeout`` (and cached)."""

    async def server_tools(server: MCPServerConfig) -> list[BaseTool]:
        definitions = cache.get(server.url, server.headers)
        if definitions is None:
            definitions = tuple(await list_tools(server))
            logger.debug("MCP server %r listed: %d tool(s)", server.mcp_server_name, len(definitions))
        return await to_langchain(definitions, server, cache, pool, scope=scope)

    results = {
        s.mcp_server_name: asyncio.create_task(server_tools(s), name=f"a365-mcp-list-{s.mcp_server_name}")
        for s in servers
    }
    try:
        if results:
            await asyncio.wait(results.values(), timeout=timeout)
        return _outcome(servers, results, timeout, skip_unreachable)
    finally:
        # Listings still running past the deadline (or when we are cancelled) are abandoned.
        pending = [task for task in results.values() if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
