"""JWT helpers for routing and diagnostics.

Nothing here verifies a signature: the claims read are for choosing URLs and header
values, never for an authorization decision. Token texts never appear in the errors.
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any

__all__ = [
    "InvalidTokenError",
    "MalformedTokenError",
    "TokenExpiredError",
    "TokenMissingExpiryError",
    "TokenPayloadError",
    "decode_token_payload",
    "get_agent_id_from_token",
    "get_app_id_from_token",
    "validate_token",
]


class InvalidTokenError(ValueError):
    """A bearer token that cannot be used; the message never contains the token."""


class MalformedTokenError(InvalidTokenError):
    """The token is not three dot-separated parts."""


class TokenPayloadError(InvalidTokenError):
    """The payload part is not base64url-encoded JSON object."""


class TokenMissingExpiryError(InvalidTokenError):
    """The payload has no numeric ``exp`` claim."""


class TokenExpiredError(InvalidTokenError):
    """The token's ``exp`` is in the past."""


def decode_token_payload(token: str) -> dict[str, Any]:
    """Return the JWT payload claims without verifying the signature."""
    if not isinstance(token, str) or not token.strip():
        raise MalformedTokenError("token is empty")
    parts = token.strip().split(".")
    if len(parts) != 3 or not all(parts[:2]):
        raise MalformedTokenError(f"token must have 3 dot-separated parts, found {len(parts)}")
    payload = parts[1]
    try:
        raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
        claims = json.loads(raw)
    except ValueError as exc:  # binascii.Error, JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise TokenPayloadError("token payload is not base64url-encoded JSON") from exc
    if not isinstance(claims, dict):
        raise TokenPayloadError("token payload is not a JSON object")
    return claims


def validate_token(token: str, *, leeway_seconds: float = 0.0, now: float | None = None) -> dict[str, Any]:
    """Check shape, payload and expiry; return the claims.

    Raises a distinct :class:`InvalidTokenError` subclass for each failure.
    """
    claims = decode_token_payload(token)
    exp = claims.get("exp")
    if isinstance(exp, bool) or not isinstance(exp, int | float):
        raise TokenMissingExpiryError("token has no numeric 'exp' claim")
    current = time.time() if now is None else now
    if exp + leeway_seconds <= current:
        raise TokenExpiredError(f"token expired {int(current - exp)} s ago")
    return claims


def _claim(token: str | None, *names: str) -> str:
    try:
        claims = decode_token_payload(token)  # type: ignore[arg-type]  # None, "": MalformedTokenError
    except InvalidTokenError:
        return ""
    values = (claims.get(name) for name in names)
    return next((value for value in values if isinstance(value, str) and value), "")


def get_agent_id_from_token(token: str | None) -> str:
    """Best agent identifier in the token: ``xms_par_app_azp`` > ``appid`` > ``azp``; ``""`` if none."""
    return _claim(token, "xms_par_app_azp", "appid", "azp")


def get_app_id_from_token(token: str | None) -> str:
    """The application id in the token: ``appid`` > ``azp``; ``""`` if none."""
    return _claim(token, "appid", "azp")
