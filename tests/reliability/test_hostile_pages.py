"""One ``tools/list`` pager for the core and the extensions: a page cap, under the caller's deadline.

A real MCP client against ``hostile_mcp`` (a server inventing a new ``nextCursor`` forever) on 127.0.0.1.
"""

from __future__ import annotations

import asyncio

import pytest

from agents_a365.tooling import (
    MCPServerConfig,
    McpServerConnectionError,
    McpToolServerConfigurationService,
    ToolingConfiguration,
)
from agents_a365.tooling.extensibility import McpSessionPool
from support.hostile_mcp import HostileMcp
from support.hostile_server import HostileServer

SAFETY = 10.0  # a safety net against hangs only


async def test_the_pager_stops_at_its_page_cap() -> None:
    mcp = HostileMcp(endless_cursor=True)
    async with HostileServer() as server:
        server.route("/mcp", mcp)
        async with asyncio.timeout(SAFETY), McpSessionPool(timeout=SAFETY) as pool:
            pages = MCPServerConfig(mcp_server_name="pages", url=f"{server.base_url}/mcp")
            with pytest.raises(McpServerConnectionError, match="more than 5 pages"):
                await pool.list_tools(pages, max_pages=5)
    assert mcp.methods.count("tools/list") == 5


async def test_the_core_listing_of_an_endless_server_fails_within_its_bounds() -> None:
    mcp = HostileMcp(endless_cursor=True)
    async with HostileServer() as server:
        server.route("/mcp", mcp)
        config = ToolingConfiguration(
            use_tooling_manifest=False, request_timeout=0.5, allow_insecure_http=True
        )
        async with McpToolServerConfigurationService(config) as service:
            server_config = MCPServerConfig(mcp_server_name="pages", url=f"{server.base_url}/mcp")
            async with asyncio.timeout(SAFETY):
                with pytest.raises(McpServerConnectionError, match="pages"):
                    await service.get_mcp_client_tools("pages", server_config)
    assert mcp.methods.count("tools/list") >= 2  # it did page; a bound, not the server, ended it


@pytest.mark.parametrize("max_pages", [0, -1, True, 1.5])
async def test_the_page_cap_must_be_a_positive_integer(max_pages: object) -> None:
    with pytest.raises(ValueError, match="max_pages must be a positive integer"):
        await McpSessionPool().list_tools(None, max_pages=max_pages)  # type: ignore[arg-type]
