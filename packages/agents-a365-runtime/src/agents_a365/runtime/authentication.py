"""Token exchange through the Microsoft 365 Agents SDK's ``Authorization``."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from .arguments import require
from .protocols import AuthorizationLike, TurnContextLike

__all__ = ["AgenticAuthenticationService"]

logger = logging.getLogger(__name__)


class AgenticAuthenticationService:
    """Gets agentic user tokens for a turn."""

    @staticmethod
    async def get_agentic_user_token(
        authorization: AuthorizationLike,
        auth_handler_name: str,
        turn_context: TurnContextLike,
        scopes: Sequence[str],
    ) -> str | None:
        """Exchange a token for ``scopes``; ``None`` when the exchange gives no token."""
        require(authorization, "authorization")
        require(turn_context, "turn_context")
        if not auth_handler_name:
            raise ValueError("auth_handler_name is required")
        scope_list = [s for s in scopes if s]
        if not scope_list:
            raise ValueError("scopes is required")
        response = await authorization.exchange_token(turn_context, scope_list, auth_handler_name)
        token = getattr(response, "token", None) if response is not None else None
        if not token:
            logger.warning("token exchange for scopes %s returned no token", scope_list)
            return None
        return str(token)
