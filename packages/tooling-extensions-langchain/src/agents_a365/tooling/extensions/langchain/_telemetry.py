"""OpenTelemetry spans of the LangChain extension: one GenAI ``execute_tool`` span per MCP tool call (an
interceptor of langchain-mcp-adapters); the core's session pool opens each MCP session in an ``initialize`` span.

The interceptor is the outermost one, so the span covers the cache invalidation and the scrubbing of a
failure too; the span's parent is whatever span is current when LangChain / LangGraph runs the tool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from langchain_mcp_adapters.interceptors import MCPToolCallRequest, MCPToolCallResult, ToolCallInterceptor

from agents_a365.tooling.extensibility import TurnIdentity, tool_call_span

__all__ = ["traced_tool_calls"]


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
            span.record_result(result, is_error=getattr(result, "isError", False) is True)
            return result

    return trace_call
