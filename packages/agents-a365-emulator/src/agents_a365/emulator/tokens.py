"""Minting and verifying the emulator's JWTs (compact HS256, hand-rolled with :mod:`hmac`)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from agents_a365.emulator.constants import DEFAULT_TENANT_ID

__all__ = ["InvalidTokenError", "TokenIssuer", "TokenRejection"]

TokenRejection = Literal["malformed", "bad_signature", "expired", "wrong_audience"]

_HEADER = {"alg": "HS256", "typ": "JWT"}


class InvalidTokenError(ValueError):
    """A token was rejected. ``reason`` is a stable machine-readable code, the message explains it."""

    def __init__(self, reason: TokenRejection, message: str) -> None:
        super().__init__(message)
        self.reason: TokenRejection = reason
        self.message = message


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(segment: str) -> bytes:
    padded = segment + "=" * (-len(segment) % 4)
    return base64.urlsafe_b64decode(padded.encode("ascii"))


def _json_segment(value: Mapping[str, Any]) -> str:
    return _b64encode(json.dumps(value, separators=(",", ":"), sort_keys=True).encode("utf-8"))


class TokenIssuer:
    """Issues and verifies HS256 JWTs signed with a per-emulator secret.

    The secret is generated randomly unless given, so tokens from one emulator are never valid on another.
    """

    def __init__(self, secret: str | bytes | None = None, *, tenant_id: str = DEFAULT_TENANT_ID) -> None:
        if secret is None:
            secret = secrets.token_bytes(32)
        self._secret = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
        self.tenant_id = tenant_id

    def mint(
        self,
        audience: str,
        *,
        app_id: str,
        user_id: str | None = None,
        tenant_id: str | None = None,
        expires_in: int = 3600,
        claims: Mapping[str, Any] | None = None,
    ) -> str:
        """Return a signed compact JWT for ``audience``.

        Claims: ``aud``, ``appid`` and ``azp`` (= ``app_id``), ``iat``, ``nbf``, ``exp`` (``iat + expires_in``,
        may be negative to mint an already expired token), ``tid``, ``oid``/``sub`` (``user_id``, or the app
        id for an app-only token) and any extra ``claims`` (which override the standard ones).
        """
        now = int(time.time())
        subject = user_id if user_id is not None else app_id
        payload: dict[str, Any] = {
            "aud": audience,
            "appid": app_id,
            "azp": app_id,
            "iat": now,
            "nbf": min(now, now + expires_in),
            "exp": now + expires_in,
            "tid": tenant_id if tenant_id is not None else self.tenant_id,
            "oid": subject,
            "sub": subject,
            "ver": "2.0",
        }
        if user_id is None:
            payload["idtyp"] = "app"
        if claims:
            payload.update(claims)
        signing_input = f"{_json_segment(_HEADER)}.{_json_segment(payload)}"
        return f"{signing_input}.{self._sign(signing_input)}"

    def verify(self, token: str, audience: str | Iterable[str]) -> dict[str, Any]:
        """Check ``token`` and return its claims.

        ``audience`` is one accepted audience or several. Raises :class:`InvalidTokenError` with reason
        ``malformed``, ``bad_signature``, ``expired`` or ``wrong_audience`` (checked in that order).
        """
        accepted = {audience} if isinstance(audience, str) else set(audience)
        claims = self.decode_unverified(token)
        signing_input, _, signature = token.rpartition(".")
        if not hmac.compare_digest(self._sign(signing_input), signature):
            raise InvalidTokenError("bad_signature", "token signature is not valid for this emulator")
        exp = claims.get("exp")
        if not isinstance(exp, int | float) or isinstance(exp, bool):
            raise InvalidTokenError("malformed", "token has no numeric 'exp' claim")
        if exp <= time.time():
            raise InvalidTokenError("expired", f"token expired at {int(exp)} (epoch seconds)")
        token_audiences = claims.get("aud")
        candidates = [token_audiences] if isinstance(token_audiences, str) else token_audiences
        if not isinstance(candidates, list) or not accepted.intersection(
            a for a in candidates if isinstance(a, str)
        ):
            raise InvalidTokenError(
                "wrong_audience",
                f"token audience {token_audiences!r} is not accepted here (expected one of {sorted(accepted)})",
            )
        return claims

    @staticmethod
    def decode_unverified(token: str) -> dict[str, Any]:
        """Decode the claims of a structurally valid token without checking signature, expiry or audience."""
        parts = token.split(".")
        if len(parts) != 3 or not all(parts):
            raise InvalidTokenError(
                "malformed", "token is not a compact JWT (expected three dot-separated parts)"
            )
        try:
            header = json.loads(_b64decode(parts[0]))
            claims = json.loads(_b64decode(parts[1]))
            _b64decode(parts[2])
        except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
            raise InvalidTokenError("malformed", f"token is not valid base64url JSON: {exc}") from None
        if not isinstance(header, dict) or header.get("alg") != "HS256":
            raise InvalidTokenError("malformed", "token header must declare alg HS256")
        if not isinstance(claims, dict):
            raise InvalidTokenError("malformed", "token payload is not a JSON object")
        return claims

    def _sign(self, signing_input: str) -> str:
        digest = hmac.new(self._secret, signing_input.encode("ascii", "replace"), hashlib.sha256).digest()
        return _b64encode(digest)
