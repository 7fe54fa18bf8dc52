"""OpenTelemetry spans of the LangChain extension: one GenAI ``execute_tool`` span per MCP tool call (an
interceptor of langchain-mcp-adapters) and one ``initialize`` span per MCP session the client opens.

The interceptor is the outermost one, so the span covers the cache invalidation and the scrubbing of a
failure too; the span's parent is whatever span is current when LangChain / LangGraph runs the tool.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.interceptors import MCPToolCallRequest, MCPToolCallResult, ToolCallInterceptor
from mcp import ClientSession

from agents_a365.tooling.extensibility import TurnIdentity, mcp_session_span, tool_call_span

__all__ = ["TracedMCPClient", "traced_tool_calls"]


class TracedMCPClient(MultiServerMCPClient):
    """``MultiServerMCPClient`` whose ``session()`` opens each session in an ``initialize`` span."""

    @contextlib.asynccontextmanager
    async def session(
        self, server_name: str, *, auto_initialize: bool = True
    ) -> AsyncIterator[ClientSession]:
        connection = self.connections.get(server_name)
        url = connection.get("url") if isinstance(connection, dict) else None
        async with contextlib.AsyncExitStack() as stack:
            with mcp_session_span(server_name, url if isinstance(url, str) else None):
                opened = super().session(server_name, auto_initialize=auto_initialize)
                session = await stack.enter_async_context(opened)
            yield session


def traced_tool_calls(server_name: str) -> ToolCallInterceptor:
    """An interceptor recording each call of ``server_name``'s tools (no-op without telemetry)."""

    async def trace_call(
        request: MCPToolCallRequest, handler: Callable[[MCPToolCallRequest], Awaitable[MCPToolCallResult]]
    ) -> MCPToolCallResult:
        runtime = request.runtime
        context = getattr(runtime, "context", None)
        with tool_call_span(
            server_name,
            request.name,
            getattr(runtime, "tool_call_id", None),
            arguments=request.args,
            turn=context if isinstance(context, TurnIdentity) else None,
        ) as span:
            result = await handler(request)
            span.record_result(result)
            return result

    return trace_call
