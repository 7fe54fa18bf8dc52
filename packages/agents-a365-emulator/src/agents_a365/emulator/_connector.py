"""Channel connector: ``POST /v3/conversations/{conversationId}/activities[/{activityId}]``.

Agents hosted behind ``CloudAdapter`` send their replies to the ``serviceUrl`` of the incoming Activity; with
the emulator as that ``serviceUrl`` every reply is recorded (route ``connector``) like any other request.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from agents_a365.emulator._context import EmulatorContext
from agents_a365.emulator._http import error_response


def _endpoint(ctx: EmulatorContext) -> Any:
    async def activities(request: Request) -> Response:
        try:
            data = json.loads(await request.body())
        except (ValueError, UnicodeDecodeError):
            return error_response(
                400, "invalid_request", "body is not valid JSON", reason="body: not valid JSON"
            )
        if not isinstance(data, dict):
            return error_response(
                400, "invalid_request", "body must be an Activity object", reason="body: not an object"
            )
        # Real connectors answer a ResourceResponse naming the new activity's id.
        return JSONResponse({"id": f"activity-{uuid.uuid4().hex[:12]}"})

    return activities


def connector_routes(ctx: EmulatorContext) -> list[BaseRoute]:
    endpoint = _endpoint(ctx)
    return [
        Route("/v3/conversations/{conversation_id}/activities", endpoint, methods=["POST"]),
        Route(
            "/v3/conversations/{conversation_id}/activities/{activity_id}", endpoint, methods=["POST", "PUT"]
        ),
    ]
