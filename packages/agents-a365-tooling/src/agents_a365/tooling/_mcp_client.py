"""List a server's tools (``_mcp_listing``) with the core's errors, span and client identity."""

from __future__ import annotations

import httpx
from mcp.types import Tool

from agents_a365.runtime import get_sdk_version

from ._mcp_listing import list_tools_over_http
from ._redact import describe_error
from ._telemetry_hooks import traced_mcp_listing
from .errors import McpServerConnectionError
from .headers import TOOLING_DISTRIBUTION
from .models import MCPServerConfig

__all__ = ["list_server_tools"]


@traced_mcp_listing
async def list_server_tools(
    server_name: str,
    server: MCPServerConfig,
    *,
    client: httpx.AsyncClient,
    timeout: float,
    max_bytes: int,
) -> list[Tool]:
    try:
        return await list_tools_over_http(
            client,
            server.url,
            server.headers,
            timeout=timeout,
            max_bytes=max_bytes,
            client_name=TOOLING_DISTRIBUTION,
            client_version=get_sdk_version(TOOLING_DISTRIBUTION),
            server_name=server_name,
        )
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
