"""Real-time threat protection: ``POST /agents/real-time-threat-protection/chat-message``."""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictStr, ValidationError
from pydantic.alias_generators import to_camel
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agents_a365.emulator._context import EmulatorContext
from agents_a365.emulator._http import error_response

logger = logging.getLogger("agents_a365.emulator.rtp")

NonEmpty = Annotated[StrictStr, Field(min_length=1)]


def _aware_iso8601(value: str) -> str:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("must be an ISO-8601 datetime string") from None
    if parsed.tzinfo is None:
        raise ValueError("must include a timezone (e.g. 'Z' or '+00:00')")
    return value


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, validate_by_alias=True, validate_by_name=False
    )


class ChatHistoryEntry(_Model):
    id: NonEmpty
    role: NonEmpty
    content: StrictStr
    timestamp: Annotated[StrictStr, AfterValidator(_aware_iso8601)]


class ChatMessageRequest(_Model):
    conversation_id: NonEmpty
    message_id: NonEmpty
    user_message: NonEmpty
    chat_history: list[ChatHistoryEntry]


def _field_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "body"


def validation_errors(exc: ValidationError) -> list[dict[str, str]]:
    return [
        {"field": _field_path(tuple(e["loc"])), "message": e["msg"].removeprefix("Value error, ")}
        for e in exc.errors()
    ]


def rtp_endpoint(ctx: EmulatorContext) -> Any:
    async def chat_message(request: Request) -> Response:
        raw = await request.body()
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return error_response(
                400, "invalid_request", "body is not valid JSON", reason="body: not valid JSON"
            )
        if not isinstance(data, dict):
            return error_response(
                400, "invalid_request", "body must be a JSON object", reason="body: not an object"
            )
        try:
            ChatMessageRequest.model_validate(data)
        except ValidationError as exc:
            errors = validation_errors(exc)
            reason = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
            return error_response(
                400, "invalid_request", "body is not a valid ChatMessageRequest", reason=reason, errors=errors
            )
        ctx.recorder.add_chat_message(data)
        logger.debug("Recorded chat message %s of conversation %s", data["messageId"], data["conversationId"])
        return JSONResponse({"status": "received"})

    return chat_message
