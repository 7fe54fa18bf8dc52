"""The emulator's own control surface under ``/_emulator`` (not recorded)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agents_a365.emulator._context import EmulatorContext
from agents_a365.emulator._http import error_response
from agents_a365.emulator.authorization import audience_for_scope
from agents_a365.emulator.constants import PLATFORM_SCOPE
from agents_a365.emulator.faults import Fault, validate_route_key


def control_routes(ctx: EmulatorContext) -> list[Route]:
    async def list_requests(request: Request) -> Response:
        route = request.query_params.get("route")
        server = request.query_params.get("server")
        return JSONResponse([r.to_dict() for r in ctx.recorder.requests(route, server=server)])

    async def request_counts(_: Request) -> Response:
        return JSONResponse(ctx.recorder.counts())

    async def clear_requests(_: Request) -> Response:
        ctx.recorder.clear()
        return Response(status_code=204)

    async def chat_messages(_: Request) -> Response:
        return JSONResponse(ctx.recorder.chat_messages())

    async def list_faults(_: Request) -> Response:
        return JSONResponse(ctx.faults.active())

    async def put_fault(request: Request) -> Response:
        route = request.path_params["route"]
        try:
            validate_route_key(route)
            raw: Any = json.loads(await request.body() or b"{}")
            fault = Fault.model_validate(raw)
        except ValidationError as exc:
            details = [{"field": ".".join(map(str, e["loc"])), "message": e["msg"]} for e in exc.errors()]
            return error_response(400, "invalid_fault", "fault body is not valid", errors=details)
        except ValueError as exc:
            return error_response(400, "invalid_fault", str(exc))
        ctx.faults.set(route, fault)
        return JSONResponse(ctx.faults.active())

    async def delete_fault(request: Request) -> Response:
        try:
            ctx.faults.clear(request.path_params["route"])
        except ValueError as exc:
            return error_response(400, "invalid_fault", str(exc))
        return Response(status_code=204)

    async def delete_faults(_: Request) -> Response:
        ctx.faults.clear()
        return Response(status_code=204)

    async def list_servers(_: Request) -> Response:
        return JSONResponse(
            {
                name: {**server.config.model_dump(), "state": server.snapshot()}
                for name, server in ctx.servers.items()
            }
        )

    async def reset(_: Request) -> Response:
        ctx.reset()
        return Response(status_code=204)

    async def token(request: Request) -> Response:
        # The token exchange of an agent running in another process (development mode): what
        # ``EmulatorAuthorization.exchange_token`` does in-process, for the scope and user asked for.
        try:
            raw: Any = json.loads(await request.body() or b"{}")
            scope, user = raw.get("scope", PLATFORM_SCOPE), raw.get("user_id")
            expires_in = raw.get("expires_in", 3600)
            if not isinstance(scope, str) or not scope or not isinstance(user, str | None):
                raise ValueError("'scope' must be a non-empty string and 'user_id' a string")
            if isinstance(expires_in, bool) or not isinstance(expires_in, int):
                raise ValueError("'expires_in' must be an integer")
        except (ValueError, AttributeError) as exc:
            return error_response(400, "invalid_token_request", str(exc))
        audience = audience_for_scope(scope)
        minted = ctx.issuer.mint(audience, app_id=ctx.config.agent_id, user_id=user, expires_in=expires_in)
        ctx.recorder.tally("token", None, audience, user)
        return JSONResponse({"token": minted, "audience": audience, "expires_in": expires_in})

    return [
        Route("/_emulator/requests", list_requests, methods=["GET"]),
        Route("/_emulator/requests", clear_requests, methods=["DELETE"]),
        Route("/_emulator/counts", request_counts, methods=["GET"]),
        Route("/_emulator/chat-messages", chat_messages, methods=["GET"]),
        Route("/_emulator/faults", list_faults, methods=["GET"]),
        Route("/_emulator/faults", delete_faults, methods=["DELETE"]),
        Route("/_emulator/faults/{route}", put_fault, methods=["PUT"]),
        Route("/_emulator/faults/{route}", delete_fault, methods=["DELETE"]),
        Route("/_emulator/servers", list_servers, methods=["GET"]),
        Route("/_emulator/reset", reset, methods=["POST"]),
        Route("/_emulator/token", token, methods=["POST"]),
    ]
