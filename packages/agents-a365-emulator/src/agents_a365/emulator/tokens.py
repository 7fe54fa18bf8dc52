"""Minting and verifying the emulator's JWTs (HS256, with PyJWT)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import jwt

from agents_a365.emulator.constants import DEFAULT_TENANT_ID

__all__ = ["InvalidTokenError", "TokenIssuer", "TokenRejection"]

TokenRejection = Literal["malformed", "bad_signature", "expired", "wrong_audience"]

# What verify() checks: the signature, a numeric exp in the future and the audience (not nbf/iat, so a
# token minted with any claims a test wants is accepted until it expires).
_CHECKS = {
    "require": ["exp"],
    "verify_nbf": False,
    "verify_iat": False,
    "verify_iss": False,
    "verify_sub": False,
    "verify_jti": False,
}


class InvalidTokenError(ValueError):
    """A token was rejected. ``reason`` is a stable machine-readable code, the message explains it."""

    def __init__(self, reason: TokenRejection, message: str) -> None:
        super().__init__(message)
        self.reason: TokenRejection = reason
        self.message = message


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
        return jwt.encode(payload, self._secret, algorithm="HS256")

    def verify(self, token: str, audience: str | Iterable[str]) -> dict[str, Any]:
        """Check ``token`` and return its claims.

        ``audience`` is one accepted audience or several. Raises :class:`InvalidTokenError` with reason
        ``malformed``, ``bad_signature``, ``expired`` or ``wrong_audience`` (checked in that order).
        """
        accepted = [audience] if isinstance(audience, str) else sorted(audience)
        self.decode_unverified(token)
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                self._secret,
                algorithms=["HS256"],
                audience=accepted,
                options=_CHECKS,  # type: ignore[arg-type]
            )
        except jwt.InvalidSignatureError:
            raise InvalidTokenError(
                "bad_signature", "token signature is not valid for this emulator"
            ) from None
        except jwt.ExpiredSignatureError:
            exp = self.decode_unverified(token)["exp"]
            raise InvalidTokenError("expired", f"token expired at {int(exp)} (epoch seconds)") from None
        except (jwt.InvalidAudienceError, jwt.MissingRequiredClaimError) as exc:
            if isinstance(exc, jwt.MissingRequiredClaimError) and exc.claim != "aud":
                raise InvalidTokenError("malformed", f"token has no {exc.claim!r} claim") from None
            found = self.decode_unverified(token).get("aud")
            raise InvalidTokenError(
                "wrong_audience",
                f"token audience {found!r} is not accepted here (expected one of {sorted(accepted)})",
            ) from None
        except jwt.InvalidTokenError as exc:  # a non-numeric exp, and anything else PyJWT rejects
            raise InvalidTokenError("malformed", f"token is not valid: {exc}") from None
        return claims

    @staticmethod
    def decode_unverified(token: str) -> dict[str, Any]:
        """Decode the claims of a structurally valid token without checking signature, expiry or audience."""
        if token.count(".") != 2 or not all(token.split(".")):
            raise InvalidTokenError(
                "malformed", "token is not a compact JWT (expected three dot-separated parts)"
            )
        try:
            header = jwt.get_unverified_header(token)
            claims: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
        except jwt.InvalidTokenError as exc:
            raise InvalidTokenError("malformed", f"token is not valid base64url JSON: {exc}") from None
        if header.get("alg") != "HS256":
            raise InvalidTokenError("malformed", "token header must declare alg HS256")
        return claims
