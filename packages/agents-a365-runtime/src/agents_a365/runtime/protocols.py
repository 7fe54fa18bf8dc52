"""The few attributes this SDK reads from Microsoft 365 Agents SDK objects.

Real ``microsoft_agents.hosting.core`` objects satisfy these protocols; the packages do
not import hosting-core so that they stay light and testable.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["AuthorizationLike", "TokenResponseLike", "TurnContextLike"]


@runtime_checkable
class TurnContextLike(Protocol):
    """``microsoft_agents.hosting.core.TurnContext``: only ``activity`` is read."""

    @property
    def activity(self) -> Any: ...


class TokenResponseLike(Protocol):
    """``microsoft_agents.activity.TokenResponse``: only ``token`` is read."""

    @property
    def token(self) -> str | None: ...


class AuthorizationLike(Protocol):
    """``microsoft_agents.hosting.core.Authorization``: only ``exchange_token`` is called."""

    async def exchange_token(
        self,
        context: Any,
        scopes: list[str] | None = None,
        auth_handler_id: str | None = None,
    ) -> TokenResponseLike | None: ...
