"""Who a turn is for, as a cache key. Without a user id nothing is cached."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents_a365.runtime import TurnContextLike


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


@dataclass(frozen=True, slots=True)
class TurnKey:
    tenant: str | None
    agent: str | None
    user: str

    @classmethod
    def of(cls, turn_context: TurnContextLike | None) -> TurnKey | None:
        activity = getattr(turn_context, "activity", None)
        if activity is None:
            return None
        sender = getattr(activity, "from_property", None)
        recipient = getattr(activity, "recipient", None)
        conversation = getattr(activity, "conversation", None)
        user = _text(getattr(sender, "aad_object_id", None)) or _text(getattr(sender, "id", None))
        if user is None:
            return None
        tenant = _text(getattr(recipient, "tenant_id", None)) or _text(
            getattr(conversation, "tenant_id", None)
        )
        agent = _text(getattr(recipient, "agentic_app_id", None)) or _text(getattr(recipient, "id", None))
        return cls(tenant=tenant, agent=agent, user=user)
