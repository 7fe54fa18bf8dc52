"""Dispatch of ``/agents/servers/{name}/`` to the per-server MCP streamable HTTP session managers."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from agents_a365.emulator._context import EmulatorContext
from agents_a365.emulator._http import check_bearer, error_response
from agents_a365.emulator._tools._base import build_mcp_server

logger = logging.getLogger("agents_a365.emulator.mcp")

MCP_PATH = re.compile(r"^/agents/servers/(?P<name>[^/]+)/?$")


class McpRouter:
    """ASGI app serving every emulated MCP server; :meth:`lifespan` must wrap the app's lifetime."""

    def __init__(self, ctx: EmulatorContext) -> None:
        self._ctx = ctx
        self._managers = {
            name: StreamableHTTPSessionManager(
                app=build_mcp_server(name, server.tools()),
                json_response=ctx.config.mcp_json_response,
                stateless=ctx.config.mcp_stateless,
            )
            for name, server in ctx.servers.items()
        }

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for manager in self._managers.values():
                await stack.enter_async_context(manager.run())
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = MCP_PATH.match(scope["path"])
        name = match["name"] if match else None
        server = self._ctx.servers.get(name) if name else None
        if server is None or name is None:
            await error_response(404, "not_found", f"no MCP server at {scope['path']}")(scope, receive, send)
            return
        _, denied = check_bearer(self._ctx.issuer, Request(scope).headers, server.accepted_audiences)
        if denied is not None:
            logger.info("Rejected unauthorized request to MCP server %s", name)
            await denied(scope, receive, send)
            return
        await self._managers[name].handle_request(scope, receive, send)
