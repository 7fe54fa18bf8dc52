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

from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.pydantic import TypeBaseModel
from langchain_mcp_adapters.interceptors import MCPToolCallRequest, MCPToolCallResult
from langchain_mcp_adapters.sessions import StreamableHttpConnection
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
from mcp.types import Tool as McpTool

from agents_a365.tooling import McpServerConnectionError, ToolServerNotGivenError
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


class _McpTool(StructuredTool):
    """The adapter's tool, with one input schema for all: LangGraph asks each tool for it when it builds a
    graph, and LangChain builds a model per tool name for a JSON-schema tool (~1.3 ms each, cached for 256
    names: 4.7 s of CPU for 3,000 tools), every one the same union (text, arguments or a tool call)."""

    def get_input_schema(self, config: object = None) -> TypeBaseModel:
        return _INPUT


_INPUT = StructuredTool(name="mcp_tool", description="", args_schema={}).get_input_schema()


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
    schemas = {d.name: d.outputSchema for d in definitions if d.outputSchema is not None}
    core = calltime.service

    async def intercept(
        request: MCPToolCallRequest, handler: Callable[[MCPToolCallRequest], Awaitable[MCPToolCallResult]]
    ) -> MCPToolCallResult:
        """Every call of the server's tools: refused, before anything is sent, once ``exited`` is set (its
        ``mcp_tools`` block is over), where no turn is known (``UnknownTurnError``) and for a user discovery did
        not give the server (a tool error for the model); else the running turn's config (its user's token for
        the server's audience) is resolved, a GenAI ``execute_tool`` span recorded and the call made on the
        core's session pool (structured content checked against the definition's output schema), never calling
        the adapter's handler (``pool``: a registration's, else the service's at each call). A failure showing
        the definitions wrong forgets that user's cached definitions; a transient one (no answer, the server
        known down) is a tool error for the model. Token-shaped text is scrubbed out of either."""
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
            pooled = core.session_pool if pool is None else pool
            call = pooled.call_tool(
                server, request.name, request.args, output_schema=schemas.get(request.name)
            )
            try:
                return await tool_call_result(call, span, server, core.tool_definitions)
            except McpServerConnectionError as exc:
                if not exc.transient:
                    raise
                # The server did not answer (or is known down): the model hears it and the turn goes on,
                # as the Agents SDK does with a failed call; the floor's host would only have waited longer.
                return refusal(exc)

    # The interceptor makes every call, so the adapter never connects: it is only told where the server is.
    connection = StreamableHttpConnection(transport="streamable_http", url=url)
    interceptors = [intercept]
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
        tool.__class__ = _McpTool  # same fields, no copy
        tools.append(tool)
    return tools
