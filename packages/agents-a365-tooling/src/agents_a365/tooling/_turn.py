"""Who and where a turn is: the one reader of conversation, user, tenant, agent and channel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents_a365.runtime import TurnContextLike

__all__ = ["TurnIdentity", "TurnKey", "channel_of", "read_activity", "turn_identity"]


@dataclass(frozen=True, slots=True)
class TurnIdentity:
    """Who and where the current turn is, for tools to read from ``runtime.context``.

    Use it as the agent's context schema (``create_agent(..., context_schema=TurnIdentity)``)
    and pass ``context=turn_identity(turn_context)`` when invoking the agent. The model never
    sees these values: they are not tool arguments, so it cannot invent or swap them.
    """

    conversation_id: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    channel: str | None = None
    sub_channel: str | None = None
    tenant_id: str | None = None


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _first(*values: Any) -> str | None:
    return next(filter(None, map(_text, values)), None)


def _agent_id(activity: Any) -> str | None:
    try:
        instance_id = activity.get_agentic_instance_id()
    except Exception:  # no such method, or an activity that is not agentic refuses: fall back
        instance_id = None
    recipient = getattr(activity, "recipient", None)
    return _first(instance_id, getattr(recipient, "agentic_app_id", None), getattr(recipient, "id", None))


def channel_of(activity: Any) -> tuple[str | None, str | None]:
    """``(channel, sub_channel)`` of an activity: ``"msteams:email"`` is ``("msteams", "email")``."""
    channel_id = getattr(activity, "channel_id", None)
    if channel_id is None:
        return None, None
    # hosting-core's ChannelId is a str subclass with .channel/.sub_channel.
    channel = getattr(channel_id, "channel", None)
    if channel is not None:
        return _text(channel), _text(getattr(channel_id, "sub_channel", None))
    head, _, tail = str(channel_id).partition(":")
    return _text(head), _text(tail)


_TENANT_HOLDERS = ("conversation", "recipient", "from_property")  # in this order of precedence


def _tenant_id(activity: Any) -> str | None:
    channel_data = getattr(activity, "channel_data", None)
    tenant = channel_data.get("tenant") if isinstance(channel_data, dict) else None
    return _first(
        *(getattr(getattr(activity, holder, None), "tenant_id", None) for holder in _TENANT_HOLDERS),
        tenant.get("id") if isinstance(tenant, dict) else None,
    )


def turn_identity(turn_context: TurnContextLike) -> TurnIdentity:
    """The :class:`TurnIdentity` of a hosting-core ``TurnContext`` (absent values are ``None``)."""
    if turn_context is None:
        raise ValueError("turn_context is required")
    activity = getattr(turn_context, "activity", None)
    if activity is None:
        raise ValueError("turn_context.activity is required")
    return read_activity(activity)


def read_activity(activity: Any) -> TurnIdentity:
    """The one reader of a turn's identity; tenant precedence: conversation, recipient,
    sender, then ``channel_data["tenant"]["id"]``."""
    sender = getattr(activity, "from_property", None)
    channel, sub_channel = channel_of(activity)
    return TurnIdentity(
        conversation_id=_text(getattr(getattr(activity, "conversation", None), "id", None)),
        user_id=_first(getattr(sender, "aad_object_id", None), getattr(sender, "id", None)),
        agent_id=_agent_id(activity),
        channel=channel,
        sub_channel=sub_channel,
        tenant_id=_tenant_id(activity),
    )


@dataclass(frozen=True, slots=True)
class TurnKey:
    """Who a turn is for, as a cache key. Without a user id nothing is cached."""

    tenant: str | None
    agent: str | None
    user: str

    @classmethod
    def of(cls, turn_context: TurnContextLike | None) -> TurnKey | None:
        activity = getattr(turn_context, "activity", None)
        identity = read_activity(activity) if activity is not None else None
        if identity is None or identity.user_id is None:
            return None
        return cls(tenant=identity.tenant_id, agent=identity.agent_id, user=identity.user_id)
