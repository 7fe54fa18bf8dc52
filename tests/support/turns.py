"""Real hosting-core turn contexts for tests."""

from __future__ import annotations

from typing import Any

from microsoft_agents.activity import Activity, ChannelAccount, ConversationAccount, RoleTypes
from microsoft_agents.hosting.core import ChannelAdapter, TurnContext


class RecordingAdapter(ChannelAdapter):  # type: ignore[misc]
    """The smallest real adapter: records what the agent would send to the channel."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[Activity] = []

    async def send_activities(self, context: TurnContext, activities: list[Activity]) -> list[Any]:
        self.sent.extend(activities)
        return []

    async def update_activity(self, context: TurnContext, activity: Activity) -> None:
        raise NotImplementedError

    async def delete_activity(self, context: TurnContext, reference: Any) -> None:
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
    **activity_fields: Any,
) -> TurnContext:
    """A real ``TurnContext`` over a real ``Activity``.

    With ``agentic_app_id`` the recipient is an agentic identity, so
    ``activity.get_agentic_instance_id()`` returns it.
    """
    sender = ChannelAccount(id=user_id, aad_object_id=user_id)
    if blueprint_id is not None:
        sender = ChannelAccount(id=user_id, aad_object_id=user_id, agentic_app_blueprint_id=blueprint_id)
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
    # Leave absent values out: hosting-core rejects explicit None for several fields.
    if conversation_id is not None:
        fields["conversation"] = ConversationAccount(id=conversation_id, tenant_id=tenant_id)
    if activity_id is not None:
        fields["id"] = activity_id
    if text is not None:
        fields["text"] = text
    activity = Activity(**fields, **activity_fields)
    return TurnContext(RecordingAdapter(), activity)
