"""Post Activities to a hosted agent the way a channel (Teams, the Agents platform) does."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import httpx

from agents_a365.emulator.constants import DEFAULT_AGENT_ID, DEFAULT_TENANT_ID


def channel_activity(
    text: str,
    *,
    service_url: str,
    channel_id: str = "msteams",
    conversation_id: str | None = None,
    user_id: str = "user-1",
    agent_id: str = DEFAULT_AGENT_ID,
    tenant_id: str = DEFAULT_TENANT_ID,
) -> dict[str, Any]:
    """A message Activity as a channel sends it (the fields the Agents SDK reads).

    ``channel_id`` is ``msteams`` or ``agents``, optionally with a sub-channel (``agents:email``).
    """
    if not isinstance(text, str) or not text:
        raise ValueError("text must be a non-empty string")
    if not isinstance(service_url, str) or not service_url.startswith(("http://", "https://")):
        raise ValueError("service_url must be an http(s) URL")
    if not isinstance(channel_id, str) or not channel_id:
        raise ValueError("channel_id must be a non-empty string")
    return {
        "type": "message",
        "id": f"msg-{uuid.uuid4().hex[:12]}",
        "timestamp": datetime.now(UTC).isoformat(),
        "serviceUrl": service_url,
        "channelId": channel_id,
        "from": {"id": user_id, "name": "Emulated user", "aadObjectId": user_id, "role": "user"},
        "recipient": {
            "id": agent_id,
            "name": "Agent",
            "role": "agenticUser",
            "agenticAppId": agent_id,
            "agenticUserId": agent_id,
            "tenantId": tenant_id,
        },
        "conversation": {"id": conversation_id or f"conv-{uuid.uuid4().hex[:12]}", "tenantId": tenant_id},
        "channelData": {"tenant": {"id": tenant_id}},
        "text": text,
        "locale": "en-US",
    }


async def post_activity(
    agent_url: str, activity: dict[str, Any], *, timeout: float = 30.0, token: str | None = None
) -> httpx.Response:
    """POST ``activity`` to the agent's ``/api/messages`` endpoint within ``timeout`` seconds."""
    if timeout <= 0:
        raise ValueError("timeout must be positive")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(timeout=timeout) as client:
        return await client.post(agent_url, json=activity, headers=headers)
