"""Small HTTP helpers shared by the route handlers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from starlette.datastructures import Headers as StarletteHeaders
from starlette.responses import JSONResponse

from agents_a365.emulator.tokens import InvalidTokenError, TokenIssuer


def error_response(status: int, error: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": error, "message": message, **extra}, status_code=status)


def bearer_token(headers: StarletteHeaders) -> str | None:
    """The token of an ``Authorization: Bearer`` header, or ``None``."""
    value = headers.get("authorization")
    if not value:
        return None
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def check_bearer(
    issuer: TokenIssuer, headers: StarletteHeaders, audiences: Iterable[str]
) -> tuple[dict[str, Any] | None, JSONResponse | None]:
    """Verify the request's bearer token for ``audiences``: ``(claims, None)`` or ``(None, 401 response)``."""
    token = bearer_token(headers)
    challenge = {"WWW-Authenticate": 'Bearer error="invalid_token"'}
    if token is None:
        response = error_response(
            401, "unauthorized", "missing 'Authorization: Bearer <token>' header", reason="missing_token"
        )
        response.headers.update({"WWW-Authenticate": "Bearer"})
        return None, response
    try:
        return issuer.verify(token, audiences), None
    except InvalidTokenError as exc:
        response = error_response(401, "unauthorized", exc.message, reason=exc.reason)
        response.headers.update(challenge)
        return None, response
