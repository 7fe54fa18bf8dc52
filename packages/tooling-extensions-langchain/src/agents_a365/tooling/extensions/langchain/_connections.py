"""A turn's MCP tools as LangChain tools, every call through the tooling service's session pool, traced
(one GenAI ``execute_tool`` span per call; the core's pool opens each MCP session in an ``initialize`` span).

Sessions are the pool's (:class:`~agents_a365.tooling.extensibility.McpSessionPool`, per server URL and
request headers, so per user token): opened by a listing or a first call, reused across calls and turns
until idle, token expiry, the bound or ``aclose``. An ``mcp_tools`` block hands its tools an
``asyncio.Event`` that it sets when it exits: from then on they refuse to run.

Definitions come from the tooling service's :class:`~agents_a365.tooling.ToolDefinitionCache` (per server
URL and request headers, so per user): a warm turn makes no MCP request at registration. The trade-off: a
cached server that has become unreachable fails at call time instead (as a failed call does), and its
entry is invalidated so that the next turn lists it again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from langchain_core.tools import BaseTool
from langchain_mcp_adapters.interceptors import MCPToolCallRequest, MCPToolCallResult, ToolCallInterceptor
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
from mcp import ClientSession
from mcp.types import CallToolResult
from mcp.types import Tool as McpTool

from agents_a365.tooling import MCPServerConfig, McpToolServerConfigurationService, ToolDefinitionCache
from agents_a365.tooling.extensibility import (
    McpSessionPool,
    TurnIdentity,
    check_turn,
    tool_call_result,
    tool_call_span,
)

from ._toolset import A365_SERVER

__all__ = ["to_langchain"]

_CONVERT_BATCH = 100  # tools converted between two yields to the event loop


class _PoolSession:
    """Stands in for a server's ``ClientSession`` in langchain-mcp-adapters' tools (``call_tool`` only)."""

    __slots__ = ("_pool", "_schemas", "_server")

    def __init__(self, pool: McpSessionPool, server: MCPServerConfig, definitions: Sequence[McpTool]) -> None:
        self._pool = pool
        self._server = server
        self._schemas = {d.name: d.outputSchema for d in definitions if d.outputSchema is not None}

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, progress_callback: Any = None, **_: Any
    ) -> CallToolResult:
        return await self._pool.call_tool(
            self._server,
            name,
            arguments,
            output_schema=self._schemas.get(name),
            progress_callback=progress_callback,
        )


def _intercepted(
    cache: ToolDefinitionCache, server: MCPServerConfig, exited: asyncio.Event | None
) -> ToolCallInterceptor:
    """The interceptor of every call of ``server``'s tools: refuses, before anything is sent, a call once
    ``exited`` is set (its ``mcp_tools`` block is over) and a turn of another identity than the server's;
    records a GenAI ``execute_tool`` span (no-op without telemetry); when the call itself fails forgets the
    server's cached definitions and scrubs token-shaped text out of the failure.

    Only failures of the call itself (connecting, transport, protocol errors, timeouts) invalidate; a
    tool's own error result (``isError``) is converted after the interceptors and keeps the entry.
    """
    name = server.mcp_server_name

    async def intercept(
        request: MCPToolCallRequest, handler: Callable[[MCPToolCallRequest], Awaitable[MCPToolCallResult]]
    ) -> MCPToolCallResult:
        if exited is not None and exited.is_set():
            raise RuntimeError(
                f"MCP server {name!r}: the tools of an mcp_tools() block cannot be called after it exits"
            )
        runtime = request.runtime
        context = getattr(runtime, "context", None)
        check_turn(server.identity, context, what=f"MCP server {name!r}")
        turn = context if isinstance(context, TurnIdentity) else None
        call_id = getattr(runtime, "tool_call_id", None)
        with tool_call_span(name, request.name, call_id, arguments=request.args, turn=turn) as span:
            return await tool_call_result(handler(request), span, server, cache)

    return intercept


async def to_langchain(
    definitions: Sequence[McpTool],
    server: MCPServerConfig,
    core: McpToolServerConfigurationService,
    *,
    exited: asyncio.Event | None,
) -> list[BaseTool]:
    """What ``load_mcp_tools`` builds from the listed tools (same names, schemas and metadata, no name
    prefix, MCP execution errors returned to the model), calling through the core's session pool, plus
    cache invalidation. Converted in batches: thousands of tools never hold the event loop in one step."""
    session = cast(ClientSession, _PoolSession(core.session_pool, server, definitions))
    interceptors = [_intercepted(core.tool_definitions, server, exited)]
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
