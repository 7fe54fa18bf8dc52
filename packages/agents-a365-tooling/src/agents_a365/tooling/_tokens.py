"""Tokens per audience: the agentic token exchange, bounded, cached per turn identity and scope (single flight).

A token is never written to a log or an error; its lifetime in the cache is its ``exp`` minus
``token_expiry_skew``. Every token (the caller's, the platform one, each V2 one) passes :func:`usable_token`
before use: an expired or malformed one is never sent anywhere, and an exchanged one is never cached.
"""

from __future__ import annotations

import asyncio
import logging
import time

from agents_a365.runtime import (
    AgenticAuthenticationService,
    AuthorizationLike,
    InvalidTokenError,
    validate_token,
)

from ._cache import AsyncTTLCache
from ._part import ServicePart, Shared
from ._redact import scrub
from ._spans import token_exchange_span
from ._turn import Turn
from .errors import TokenAcquisitionError

__all__ = ["Tokens", "strip_bearer", "usable_token"]

logger = logging.getLogger("agents_a365.tooling.service")  # the name users already filter on


def strip_bearer(token: str) -> str:
    token = token.strip()
    return token[7:].strip() if token[:7].lower() == "bearer " else token


def usable_token(token: str) -> tuple[str, float]:
    """``token`` without a ``Bearer`` prefix and its ``exp``; :class:`InvalidTokenError` when it is
    malformed, has no ``exp`` or has expired. The one check of every token before it is used."""
    token = strip_bearer(token)
    return token, float(validate_token(token)["exp"])


class Tokens(ServicePart):
    """The token exchange of :class:`Discovery` and its cache."""

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        self.cache: AsyncTTLCache[str] = shared.cache("token")

    async def exchange(
        self,
        authorization: AuthorizationLike | None,
        auth_handler_name: str | None,
        turn: Turn,
        scope: str,
        servers: tuple[str, ...],
    ) -> str:
        what = ", ".join(servers)

        def failure(reason: str) -> TokenAcquisitionError:
            return TokenAcquisitionError(
                f"token exchange for scope {scope!r} ({what}) {reason}", scope=scope, servers=servers
            )

        if authorization is None or not auth_handler_name:
            with token_exchange_span(scope, servers):  # a failed exchange
                raise failure("cannot run: no authorization and auth_handler_name were given")

        cache_key = None if turn.key is None else ("token", turn.key, auth_handler_name, scope)

        async def create() -> tuple[str, float]:
            logger.debug("token for scope %r (%s): cache miss, exchanging", scope, what)
            # Only an exchange is a span: a token answered from the cache is counted, it says nothing new.
            with token_exchange_span(scope, servers) as span:
                span.set("a365.cache.hit", False if cache_key is not None else None)
                timeout = self.configuration.token_exchange_timeout
                try:
                    async with asyncio.timeout(timeout):
                        token = await AgenticAuthenticationService.get_agentic_user_token(
                            authorization, auth_handler_name, turn.context, [scope]
                        )
                except TimeoutError as exc:
                    raise failure(f"did not answer within {timeout} s") from exc
                except Exception as exc:
                    raise failure(f"failed: {type(exc).__name__}: {scrub(exc)}") from exc
                if not token:
                    raise failure("returned no token")
                try:
                    token, exp = usable_token(token)
                except InvalidTokenError as exc:
                    # Raised here, so never cached: the next turn exchanges again.
                    raise failure(f"returned an unusable token: {exc}") from exc
                return token, exp - time.time() - max(self.configuration.token_expiry_skew, 0.0)

        token, hit = await self.cache.get_or_create(cache_key, create)
        if hit:
            logger.debug("token for scope %r (%s): cache hit", scope, what)
        return token
