"""Wire models: snake_case in Python, camelCase on the wire."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from ._redact import redact_headers
from ._turn import TurnIdentity

__all__ = [
    "ChatHistoryMessage",
    "ChatMessageRequest",
    "MCPServerConfig",
    "ToolOptions",
    "ToolingManifestEntry",
]


class _WireModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)


class ToolOptions(_WireModel):
    """Per-call options; ``orchestrator_name`` and the version of ``distribution`` end up in ``User-Agent``.

    ``distribution`` names the package sending the request (an extension sets its own); tooling's own
    when unset.
    """

    orchestrator_name: str | None = None
    distribution: str | None = None


class MCPServerConfig(_WireModel):
    """One MCP tool server, ready to connect: ``headers`` carry its own ``Authorization``.

    ``identity`` is the turn (tenant, user, agent) discovery found it for: the extensions refuse to call it
    in another identity's turn.
    """

    mcp_server_name: str
    mcp_server_unique_name: str | None = None
    url: str
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    audience: str | None = None
    scope: str | None = None
    publisher: str | None = None
    identity: TurnIdentity | None = Field(default=None, exclude=True, repr=False)

    def __repr_args__(self) -> Any:
        yield from super().__repr_args__()
        yield "headers", redact_headers(self.headers)

    @property
    def name(self) -> str:
        return self.mcp_server_name


class ToolingManifestEntry(_WireModel):
    """An entry of ``ToolingManifest.json`` or of the gateway's answer."""

    # Unknown fields are ignored (pydantic's default): the gateway may add some.

    mcp_server_name: str | None = None
    mcp_server_unique_name: str | None = None
    url: str | None = None
    audience: str | None = None
    scope: str | None = None
    publisher: str | None = None

    @field_validator("audience", "scope", mode="before")
    @classmethod
    def _null_words(cls, value: Any) -> Any:
        # The gateway writes absent values as "default" (audience) or "null" (scope).
        if isinstance(value, str) and value.strip().lower() in {"", "null", "default"}:
            return None
        return value

    @property
    def name(self) -> str | None:
        names = (self.mcp_server_name, self.mcp_server_unique_name)
        return next((name.strip() for name in names if name and name.strip()), None)


def as_utc(value: datetime) -> datetime:
    """``value`` in UTC (a naive value is taken as UTC); callers skip a value already in ``UTC``."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class ChatHistoryMessage(_WireModel):
    """One message of the conversation sent to threat protection (``id`` and ``timestamp`` default to a new
    UUID and now, as in Microsoft's SDK)."""

    id: str = Field(default_factory=lambda: str(uuid.uuid4()), min_length=1)
    role: str = Field(min_length=1)
    content: str
    timestamp: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @field_validator("timestamp")
    @classmethod
    def _to_utc(cls, value: datetime) -> datetime:
        # Normalised once here, so serialization stays native (pydantic writes UTC as "...Z"):
        # a per-message Python serializer made a 10,000-message body ~3.5x slower to encode.
        return value if value.tzinfo is UTC else as_utc(value)  # the common case without a second call


class ChatMessageRequest(_WireModel):
    """The body of ``POST /agents/real-time-threat-protection/chat-message``."""

    conversation_id: str = Field(min_length=1)
    message_id: str = Field(min_length=1)
    user_message: str = Field(min_length=1)
    chat_history: list[ChatHistoryMessage]
