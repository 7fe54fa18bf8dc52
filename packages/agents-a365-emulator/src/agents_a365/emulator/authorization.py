"""A stand-in for hosting-core's ``Authorization`` that mints emulator tokens on ``exchange_token``."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from microsoft_agents.activity import TokenResponse

from agents_a365.emulator.constants import DEFAULT_AGENT_ID, PLATFORM_SCOPE
from agents_a365.emulator.tokens import TokenIssuer

__all__ = [
    "EmulatorAuthorization",
    "ExchangeFailure",
    "ExchangeRecord",
    "TokenExchangeError",
    "audience_for_scope",
]

logger = logging.getLogger("agents_a365.emulator.authorization")


class ExchangeFailure(StrEnum):
    """How :meth:`EmulatorAuthorization.exchange_token` fails when a failure mode is set."""

    EMPTY_TOKEN = "empty_token"  # noqa: S105 - a mode name, not a secret
    """Return a ``TokenResponse`` without a token."""
    NONE = "none"
    """Return ``None``."""
    RAISE = "raise"
    """Raise :class:`TokenExchangeError`."""


class TokenExchangeError(RuntimeError):
    """Raised by :meth:`EmulatorAuthorization.exchange_token` in the :attr:`ExchangeFailure.RAISE` mode."""


@dataclass(frozen=True)
class ExchangeRecord:
    """One call of ``exchange_token`` (never the token itself)."""

    scopes: list[str] | None
    auth_handler_id: str | None
    exchange_connection: str | None
    user_id: str | None
    audience: str
    succeeded: bool
    timestamp: datetime = field(default_factory=lambda: datetime.now(UTC))


def audience_for_scope(scope: str) -> str:
    """The audience of a scope: the scope minus its last ``/segment``.

    ``ea9ffc3e-.../.default`` -> ``ea9ffc3e-...``; ``api://a365-calendar/Calendars.ReadWrite`` ->
    ``api://a365-calendar``. A scope without a path segment is its own audience.
    """
    head, sep, tail = scope.rpartition("/")
    if not sep or not head or head.endswith("/") or not tail:
        return scope.rstrip("/")
    return head


def _connection(auth_handler_id: str | None) -> dict[str, str]:
    return {"connection_name": auth_handler_id} if auth_handler_id else {}


def _user_id(context: Any) -> str | None:
    activity = getattr(context, "activity", None)
    sender = getattr(activity, "from_property", None)
    user = getattr(sender, "id", None)
    return user if isinstance(user, str) and user else None


class EmulatorAuthorization:
    """Shaped like hosting-core's ``Authorization.exchange_token``; mints tokens from an emulator's issuer.

    Every call is recorded in :attr:`exchanges`. Set :attr:`failure` (at any time) to make calls fail.
    Tokens are never logged.
    """

    def __init__(
        self,
        issuer: TokenIssuer,
        *,
        app_id: str = DEFAULT_AGENT_ID,
        expires_in: int = 3600,
        default_scopes: list[str] | None = None,
        claims: Mapping[str, Any] | None = None,
        failure: ExchangeFailure | None = None,
    ) -> None:
        self.issuer = issuer
        self.app_id = app_id
        self.expires_in = expires_in
        self.default_scopes = list(default_scopes) if default_scopes else [PLATFORM_SCOPE]
        self.claims = dict(claims or {})
        self.failure = failure
        self._lock = threading.Lock()
        self._exchanges: list[ExchangeRecord] = []

    @property
    def exchanges(self) -> list[ExchangeRecord]:
        """Snapshot of every exchange so far, oldest first."""
        with self._lock:
            return list(self._exchanges)

    @property
    def exchange_count(self) -> int:
        with self._lock:
            return len(self._exchanges)

    def clear(self) -> None:
        """Forget the recorded exchanges."""
        with self._lock:
            self._exchanges.clear()

    async def exchange_token(
        self,
        context: Any,
        scopes: list[str] | None = None,
        auth_handler_id: str | None = None,
        exchange_connection: str | None = None,
    ) -> TokenResponse | None:
        """Mint a token for the first requested scope's audience, for the user of the turn."""
        requested = list(scopes) if scopes else self.default_scopes
        audience = audience_for_scope(requested[0])
        user_id = _user_id(context)
        failure = self.failure
        record = ExchangeRecord(
            scopes=list(scopes) if scopes is not None else None,
            auth_handler_id=auth_handler_id,
            exchange_connection=exchange_connection,
            user_id=user_id,
            audience=audience,
            succeeded=failure is None,
        )
        with self._lock:
            self._exchanges.append(record)
        if failure is ExchangeFailure.RAISE:
            logger.info("Token exchange for %s fails (raise mode)", audience)
            raise TokenExchangeError(f"emulated token exchange failure for audience {audience!r}")
        if failure is ExchangeFailure.NONE:
            logger.info("Token exchange for %s fails (returns None)", audience)
            return None
        if failure is ExchangeFailure.EMPTY_TOKEN:
            logger.info("Token exchange for %s fails (empty token)", audience)
            return TokenResponse(**_connection(auth_handler_id))
        token = self.issuer.mint(
            audience, app_id=self.app_id, user_id=user_id, expires_in=self.expires_in, claims=self.claims
        )
        expiration = (datetime.now(UTC) + timedelta(seconds=self.expires_in)).isoformat()
        logger.debug("Minted a token for audience %s (handler %s)", audience, auth_handler_id)
        return TokenResponse(token=token, expiration=expiration, **_connection(auth_handler_id))
