"""A turn's MCP tools as LangChain tools, every call through the tooling service's session pool, traced
(one GenAI ``execute_tool`` span per call; the core's pool opens each MCP session in an ``initialize`` span).

A tool holds no user's token: each call resolves the turn it runs in (``ToolRuntime.context``, else the
task's turn scope) and that user's config for its server (``CallTime``). Sessions are the pool's
(:class:`~agents_a365.tooling.extensibility.McpSessionPool`, per server URL and request headers, so per user
token): opened by a listing or a first call, reused across calls and turns until idle, token expiry, the
bound or ``aclose``. An ``mcp_tools`` block hands its tools an
``asyncio.Event`` that it sets when it exits: from then on they refuse to run.

Definitions come from the tooling service's :class:`~agents_a365.tooling.ToolDefinitionCache` (per server
URL and request headers, so per user): a warm turn makes no MCP request at registration. The trade-off: a
cached server that has become unreachable fails at call time instead (as a failed call does), and its
entry is invalidated so that the next turn lists it again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from langchain_core.tools import BaseTool
from langchain_mcp_adapters.interceptors import MCPToolCallRequest, MCPToolCallResult, ToolCallInterceptor
from langchain_mcp_adapters.sessions import StreamableHttpConnection
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
from mcp.types import Tool as McpTool

from agents_a365.tooling import ToolServerNotGivenError
from agents_a365.tooling.extensibility import (
    CallTime,
    McpSessionPool,
    TurnIdentity,
    refusal,
    tool_call_result,
    tool_call_span,
)

from ._toolset import A365_SERVER

__all__ = ["to_langchain"]

_CONVERT_BATCH = 100  # tools converted between two yields to the event loop


def _intercepted(
    calltime: CallTime,
    name: str,
    definitions: Sequence[McpTool],
    exited: asyncio.Event | None,
    pool: McpSessionPool | None,
) -> ToolCallInterceptor:
    """The interceptor of every call of server ``name``'s tools: refuses, before anything is sent, a call once
    ``exited`` is set (its ``mcp_tools`` block is over), where no turn is known (``UnknownTurnError``) and for
    a user discovery did not give the server (a tool error for the model); else resolves the running turn's
    config (its user's token for the server's audience), records a GenAI ``execute_tool`` span and makes the
    call on the core's session pool (structured content checked against the definition's output schema),
    never calling the adapter's handler (``pool``: a registration's, else the service's at each call). A failure of the call itself forgets that user's cached definitions
    and scrubs token-shaped text out of the failure; a tool's own error result keeps them.
    """
    schemas = {d.name: d.outputSchema for d in definitions if d.outputSchema is not None}
    core = calltime.service

    async def intercept(
        request: MCPToolCallRequest, handler: Callable[[MCPToolCallRequest], Awaitable[MCPToolCallResult]]
    ) -> MCPToolCallResult:
        if exited is not None and exited.is_set():
            raise RuntimeError(
                f"MCP server {name!r}: the tools of an mcp_tools() block cannot be called after it exits"
            )
        runtime = request.runtime
        context = getattr(runtime, "context", None)
        try:
            server = await calltime.server(name, context)
        except ToolServerNotGivenError as exc:
            return refusal(exc)
        turn = context if isinstance(context, TurnIdentity) else None
        call_id = getattr(runtime, "tool_call_id", None)
        with tool_call_span(name, request.name, call_id, arguments=request.args, turn=turn) as span:
            schema = schemas.get(request.name)
            call = (core.session_pool if pool is None else pool).call_tool(
                server, request.name, request.args, output_schema=schema
            )
            return await tool_call_result(call, span, server, core.tool_definitions)

    return intercept


async def to_langchain(
    definitions: Sequence[McpTool],
    name: str,
    url: str,
    calltime: CallTime,
    *,
    names: Sequence[str],
    exited: asyncio.Event | None = None,
    pool: McpSessionPool | None = None,
) -> list[BaseTool]:
    """What ``load_mcp_tools`` builds from server ``name``'s listed tools (same schemas and metadata, no name
    prefix, MCP execution errors returned to the model), each call made for the turn it runs in (``calltime``)
    through the core's session pool; each tool named as ``names`` says. Converted in batches: thousands of
    tools never hold the event loop in one step."""
    # The interceptor makes every call, so the adapter never connects: it is only told where the server is.
    connection = StreamableHttpConnection(transport="streamable_http", url=url)
    interceptors = [_intercepted(calltime, name, definitions, exited, pool)]
    tools: list[BaseTool] = []
    for index, (definition, exposed) in enumerate(zip(definitions, names, strict=True)):
        if index and not index % _CONVERT_BATCH:
            await asyncio.sleep(0)
        tool = convert_mcp_tool_to_langchain_tool(
            None,
            definition,
            connection=connection,
            tool_interceptors=interceptors,
            server_name=name,
            tool_name_prefix=False,
            handle_tool_errors=True,
        )
        # The key add_tool_servers_to_agent looks for to replace this turn's tools in a later turn.
        tool.metadata = {**(tool.metadata or {}), A365_SERVER: name}
        # Renamed here, on a tool no one holds yet: the adapter calls the server with the definition's name,
        # and a clash across servers costs no copy at each merge.
        tool.name = exposed
        tools.append(tool)
    return tools
