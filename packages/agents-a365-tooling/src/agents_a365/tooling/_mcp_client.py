"""List a server's tools with the official MCP client over streamable HTTP."""

from __future__ import annotations

import asyncio
import logging

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Tool

from ._redact import scrub
from .errors import McpServerConnectionError
from .mcp_http import shared_ssl_context
from .models import MCPServerConfig

logger = logging.getLogger(__name__)

# A server repeating or inventing cursors must not keep a listing going (the deadline bounds it too).
MAX_LIST_PAGES = 1000


def _cause(exc: BaseException) -> str:
    # anyio task groups wrap the real failure in exception groups.
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {scrub(exc)}" if str(exc) else type(exc).__name__


async def list_server_tools(server_name: str, server: MCPServerConfig, *, timeout: float) -> list[Tool]:
    try:
        async with asyncio.timeout(timeout):
            async with (
                httpx.AsyncClient(
                    headers=server.headers,
                    timeout=timeout,
                    follow_redirects=False,
                    verify=shared_ssl_context(),
                ) as http,
                streamable_http_client(server.url, http_client=http) as (read, write, _),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                logger.debug("MCP session %r opened to list its tools", server_name)
                tools: list[Tool] = []
                cursor: str | None = None
                for _ in range(MAX_LIST_PAGES):
                    page = await session.list_tools(cursor=cursor) if cursor else await session.list_tools()
                    tools.extend(page.tools)
                    cursor = page.nextCursor
                    if not cursor:
                        logger.debug("MCP session %r: %d tool(s) listed, closing", server_name, len(tools))
                        return tools
                raise RuntimeError(f"tools/list returned more than {MAX_LIST_PAGES} pages")
    except TimeoutError as exc:
        raise McpServerConnectionError(
            f"MCP server {server_name!r} at {server.url} did not answer within {timeout} s",
            server_name=server_name,
            url=server.url,
        ) from exc
    except Exception as exc:
        raise McpServerConnectionError(
            f"MCP server {server_name!r} at {server.url} failed: {_cause(exc)}",
            server_name=server_name,
            url=server.url,
        ) from exc
