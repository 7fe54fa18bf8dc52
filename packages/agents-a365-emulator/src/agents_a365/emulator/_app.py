"""Assembly of the emulator's ASGI application."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp

from agents_a365.emulator._connector import connector_routes
from agents_a365.emulator._context import EmulatorContext
from agents_a365.emulator._control import control_routes
from agents_a365.emulator._gateway import gateway_endpoint
from agents_a365.emulator._mcp_router import McpRouter
from agents_a365.emulator._middleware import RecordingMiddleware
from agents_a365.emulator._routes import RTP_PATH
from agents_a365.emulator._rtp import rtp_endpoint


def build_app(ctx: EmulatorContext) -> ASGIApp:
    """The full emulator app. Its lifespan runs the MCP session managers, so it can be served only once."""
    mcp = McpRouter(ctx)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with mcp.lifespan():
            yield

    routes: list[BaseRoute] = [
        Route("/agents/v2/{agent_id}/mcpServers", gateway_endpoint(ctx), methods=["GET"]),
        Route(RTP_PATH, rtp_endpoint(ctx), methods=["POST"]),
        Mount("/agents/servers", app=mcp),
        *control_routes(ctx),
        *connector_routes(ctx),
    ]
    return RecordingMiddleware(Starlette(routes=routes, lifespan=lifespan), ctx)
