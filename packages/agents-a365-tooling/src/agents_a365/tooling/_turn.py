"""The turn as read once: the one reader of a turn's activity (who, where, which agent ids, which message).

Each API edge (``list_tool_servers``, ``send_chat_history``) reads its turn here once into a :class:`Turn`,
and hands that value to the parts of the call: headers, caches, telemetry, the threat-protection body.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from agents_a365.runtime import TurnContextLike, require

__all__ = ["Turn", "TurnIdentity", "TurnKey", "read_turn", "turn_identity"]


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
    # The turn itself (set by turn_identity): what lets a tool resolve this user's token at call time.
    turn_context: Any = field(default=None, compare=False, repr=False)


class TurnKey(NamedTuple):
    """Who a turn is for, as a cache key. Without a user id nothing is cached."""

    tenant: str | None
    agent: str | None
    user: str


@dataclass(frozen=True, slots=True)
class Turn:
    """A turn as read once at an API edge (:func:`read_turn`). ``identity`` is ``None`` without an activity.

    Three agent ids, each for its use: ``identity.agent_id`` (the cache key and the turn guard: the agentic
    instance id, else the recipient's ids), ``gateway_agent_id`` (the gateway path: the agentic instance id of
    an agentic request only) and ``blueprint_id`` (``x-ms-agentid``: the sender's agentic app blueprint id).
    """

    # Handed to the caller's authorization for a token exchange; no part of ours reads its activity again.
    context: Any = field(default=None, compare=False, repr=False)  # the TurnContext given (or None)
    identity: TurnIdentity | None = None
    key: TurnKey | None = None  # the caches' key: None without a user id (nothing is cached)
    guarded: TurnIdentity | None = None  # what the turn guard compares: None when it names no one
    gateway_agent_id: str | None = None
    blueprint_id: str | None = None
    # As the activity has them: the threat-protection record (checked there), and x-ms-correlation-id.
    conversation_id: Any = None
    message_id: Any = None
    text: Any = None


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _first(*values: Any) -> str | None:
    return next(filter(None, map(_text, values)), None)


_TENANT_HOLDERS = ("conversation", "recipient", "from_property")  # in this order of precedence


def _tenant_id(activity: Any) -> str | None:
    channel_data = getattr(activity, "channel_data", None)
    tenant = channel_data.get("tenant") if isinstance(channel_data, dict) else None
    return _first(
        *(getattr(getattr(activity, holder, None), "tenant_id", None) for holder in _TENANT_HOLDERS),
        tenant.get("id") if isinstance(tenant, dict) else None,
    )


def _blueprint_id(sender: Any) -> Any:
    # hosting-core declares no such field: an account keeps a channel's ``agenticAppBlueprintId`` as an extra
    # under that wire name (pydantic's public ``model_extra``); a field declared by a later release is read.
    fields = getattr(type(sender), "model_fields", None)
    if not isinstance(fields, dict) or "agentic_app_blueprint_id" in fields:
        return getattr(sender, "agentic_app_blueprint_id", None)
    extra = sender.model_extra or {}
    return extra.get("agenticAppBlueprintId", extra.get("agentic_app_blueprint_id"))


def turn_identity(turn_context: TurnContextLike) -> TurnIdentity:
    """The :class:`TurnIdentity` of a hosting-core ``TurnContext`` (absent values are ``None``)."""
    require(turn_context, "turn_context")
    identity = require(read_turn(turn_context).identity, "turn_context.activity")
    return replace(identity, turn_context=turn_context)


def read_turn(turn_context: TurnContextLike | None) -> Turn:
    """The :class:`Turn` of a context (of ``None``, or one without an activity: nothing read).

    Tenant precedence: conversation, recipient, sender, then ``channel_data["tenant"]["id"]``; the identity's
    agent: the agentic instance id, then the recipient's agentic app id, then its id.
    """
    activity = getattr(turn_context, "activity", None)  # the one read of the activity of an API call
    if activity is None:
        return Turn(context=turn_context)
    sender = getattr(activity, "from_property", None)
    recipient = getattr(activity, "recipient", None)
    conversation_id = getattr(getattr(activity, "conversation", None), "id", None)
    try:
        instance_id = activity.get_agentic_instance_id() if activity.is_agentic_request() else None
    except Exception:  # no such methods, or a partial activity that refuses (no recipient): not agentic
        instance_id = None
    # "msteams:email" is ("msteams", "email"), as hosting-core's ChannelId (a str) splits it.
    channel, _, sub_channel = str(getattr(activity, "channel_id", None) or "").partition(":")
    blueprint = _blueprint_id(sender)
    identity = TurnIdentity(
        conversation_id=_text(conversation_id),
        user_id=_first(getattr(sender, "aad_object_id", None), getattr(sender, "id", None)),
        agent_id=_first(
            instance_id, getattr(recipient, "agentic_app_id", None), getattr(recipient, "id", None)
        ),
        channel=_text(channel),
        sub_channel=_text(sub_channel),
        tenant_id=_tenant_id(activity),
    )
    user = identity.user_id
    return Turn(
        context=turn_context,
        identity=identity,
        key=None if user is None else TurnKey(tenant=identity.tenant_id, agent=identity.agent_id, user=user),
        guarded=identity if identity.tenant_id or user or identity.agent_id else None,
        gateway_agent_id=str(instance_id) if instance_id else None,
        blueprint_id=blueprint if _text(blueprint) else None,
        conversation_id=conversation_id,
        message_id=getattr(activity, "id", None),
        text=getattr(activity, "text", None),
    )
