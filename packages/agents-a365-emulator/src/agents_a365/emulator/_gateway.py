"""The tooling gateway: ``GET /agents/v2/{agentic_app_id}/mcpServers``."""

from __future__ import annotations

import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agents_a365.emulator._context import EmulatorContext
from agents_a365.emulator._http import check_bearer
from agents_a365.emulator.constants import PLATFORM_AUDIENCES

logger = logging.getLogger("agents_a365.emulator.gateway")


def gateway_endpoint(ctx: EmulatorContext) -> Any:
    async def list_servers(request: Request) -> Response:
        claims, denied = check_bearer(ctx.issuer, request.headers, PLATFORM_AUDIENCES)
        if denied is not None:
            return denied
        agent_id = request.path_params["agent_id"]
        base = str(request.base_url).rstrip("/")
        entries = [
            {
                "mcpServerName": server.name,
                "mcpServerUniqueName": server.unique_name,
                "url": f"{base}/agents/servers/{server.name}/",
                "audience": server.audience,
                "scope": server.scope,
                "publisher": server.publisher,
            }
            for server in ctx.config.servers_for(agent_id, (claims or {}).get("oid"))
        ]
        logger.debug("Gateway lists %d servers for agent %s", len(entries), agent_id)
        if ctx.config.gateway_shape == "list":
            return JSONResponse(entries)
        return JSONResponse({"mcpServers": entries})

    return list_servers
