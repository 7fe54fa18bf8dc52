"""Real hosting-core turn contexts for local development, tests and scripts.

An agent normally gets its `TurnContext` from hosting (`CloudAdapter` on `/api/messages`). To call the SDK
from a script, a notebook or a test without a channel, build a real one here: a real `Activity` in a real
`TurnContext` over :class:`RecordingAdapter`, which keeps what the agent sends instead of calling a channel.
"""

from __future__ import annotations

from typing import Any

from microsoft_agents.activity import (
    Activity,
    ChannelAccount,
    ConversationAccount,
    RoleTypes,
    TurnContextProtocol,
)
from microsoft_agents.hosting.core import ChannelAdapter, TurnContext


class RecordingAdapter(ChannelAdapter):
    """The smallest real adapter: records what the agent would send to the channel."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.sent: list[Activity] = []

    async def send_activities(
        self, context: TurnContextProtocol[Any], activities: list[Activity]
    ) -> list[Any]:
        self.sent.extend(activities)
        return []

    async def update_activity(self, context: TurnContextProtocol[Any], activity: Activity) -> None:
        raise NotImplementedError

    async def delete_activity(self, context: TurnContextProtocol[Any], reference: Any) -> None:
        raise NotImplementedError


def make_turn_context(
    *,
    text: str | None = "What is on my calendar?",
    activity_id: str | None = "activity-1",
    conversation_id: str | None = "conversation-1",
    channel_id: str = "msteams:email",
    user_id: str = "user-1",
    tenant_id: str = "tenant-1",
    agentic_app_id: str | None = None,
    blueprint_id: str | None = None,
    service_url: str = "http://127.0.0.1/recording-adapter",
    adapter: ChannelAdapter | None = None,
    **activity_fields: Any,
) -> TurnContext:
    """A real ``TurnContext`` over a real ``Activity``.

    With ``agentic_app_id`` the recipient is an agentic identity, so
    ``activity.get_agentic_instance_id()`` returns it.
    """
    sender = ChannelAccount(id=user_id, aad_object_id=user_id)
    if blueprint_id is not None:
        # As an Agent 365 channel sends it: a field hosting-core does not declare, so the account keeps it as an
        # extra under its wire name.
        wire = {"id": user_id, "aadObjectId": user_id, "agenticAppBlueprintId": blueprint_id}
        sender = ChannelAccount.model_validate(wire)
    recipient = (
        ChannelAccount(
            id="agent-1",
            role=RoleTypes.agentic_identity,
            agentic_app_id=agentic_app_id,
            tenant_id=tenant_id,
        )
        if agentic_app_id
        else ChannelAccount(id="agent-1", tenant_id=tenant_id)
    )
    fields: dict[str, Any] = {"type": "message", "channel_id": channel_id, "from_property": sender}
    fields["recipient"] = recipient
    # Channels always send it; replies are addressed through it (RecordingAdapter keeps them instead).
    fields["service_url"] = service_url
    # Leave absent values out: hosting-core rejects explicit None for several fields.
    if conversation_id is not None:
        fields["conversation"] = ConversationAccount(id=conversation_id, tenant_id=tenant_id)
    if activity_id is not None:
        fields["id"] = activity_id
    if text is not None:
        fields["text"] = text
    activity = Activity(**fields, **activity_fields)
    return TurnContext(adapter if adapter is not None else RecordingAdapter(), activity)


__all__ = ["RecordingAdapter", "make_turn_context"]
