"""List a server's tools with the official MCP client over streamable HTTP."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Tool

from ._mcp_pages import list_all_tools
from ._redact import describe_error
from ._telemetry_hooks import traced_mcp_listing
from .errors import McpServerConnectionError
from .mcp_http import _MCP_HTTPX, mcp_http_client_factory
from .models import MCPServerConfig

logger = logging.getLogger(__name__)


def _timeout(seconds: float) -> Any:
    return _MCP_HTTPX.Timeout(seconds)


@traced_mcp_listing
async def list_server_tools(server_name: str, server: MCPServerConfig, *, timeout: float) -> list[Tool]:
    try:
        async with asyncio.timeout(timeout):
            async with (
                # httpx (mcp 1) or httpx2 (mcp 2), no redirects, over the shared TLS context.
                mcp_http_client_factory(headers=server.headers, timeout=_timeout(timeout)) as http,
                # mcp 1 yields (read, write, get_session_id), mcp 2 (read, write).
                streamable_http_client(server.url, http_client=http) as streams,
                ClientSession(streams[0], streams[1]) as session,
            ):
                await session.initialize()
                logger.debug("MCP session %r opened to list its tools", server_name)
                tools = await list_all_tools(session)
                logger.debug("MCP session %r: %d tool(s) listed, closing", server_name, len(tools))
                return tools
    except TimeoutError as exc:
        raise McpServerConnectionError(
            f"MCP server {server_name!r} at {server.url} did not answer within {timeout} s",
            server_name=server_name,
            url=server.url,
        ) from exc
    except Exception as exc:
        raise McpServerConnectionError(
            f"MCP server {server_name!r} at {server.url} failed: {describe_error(exc)}",
            server_name=server_name,
            url=server.url,
        ) from exc
