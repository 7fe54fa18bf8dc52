"""Local emulator of the Microsoft Agent 365 platform for demos and tests.

It serves the tooling gateway, MCP servers (official ``mcp`` SDK, streamable HTTP) and real-time threat
protection over real HTTP, records every request and can inject faults. It does not depend on the SDK
packages: it validates their wire format independently.
"""

from agents_a365.emulator._rtp import ChatHistoryEntry, ChatMessageRequest
from agents_a365.emulator._tools.calendar import CalendarState, Event
from agents_a365.emulator._tools.mail import Email, MailState
from agents_a365.emulator._tools.notes import NotesState
from agents_a365.emulator.authorization import (
    EmulatorAuthorization,
    ExchangeFailure,
    ExchangeRecord,
    TokenExchangeError,
    audience_for_scope,
)
from agents_a365.emulator.channel import channel_activity, post_activity
from agents_a365.emulator.config import EmulatorConfig, ServerConfig, ServerKind
from agents_a365.emulator.constants import (
    CALENDAR_AUDIENCE,
    CALENDAR_SCOPE,
    DEFAULT_AGENT_ID,
    DEFAULT_TENANT_ID,
    PLATFORM_AUDIENCE,
    PLATFORM_AUDIENCE_URI,
    PLATFORM_SCOPE,
)
from agents_a365.emulator.emulator import Emulator
from agents_a365.emulator.faults import Fault, FaultController
from agents_a365.emulator.recording import Headers, RecordedRequest, RequestRecorder
from agents_a365.emulator.servers import EmulatedServer
from agents_a365.emulator.tokens import InvalidTokenError, TokenIssuer

__all__ = [
    "CALENDAR_AUDIENCE",
    "CALENDAR_SCOPE",
    "DEFAULT_AGENT_ID",
    "DEFAULT_TENANT_ID",
    "PLATFORM_AUDIENCE",
    "PLATFORM_AUDIENCE_URI",
    "PLATFORM_SCOPE",
    "CalendarState",
    "ChatHistoryEntry",
    "ChatMessageRequest",
    "Email",
    "EmulatedServer",
    "Emulator",
    "EmulatorAuthorization",
    "EmulatorConfig",
    "Event",
    "ExchangeFailure",
    "ExchangeRecord",
    "Fault",
    "FaultController",
    "Headers",
    "InvalidTokenError",
    "MailState",
    "NotesState",
    "RecordedRequest",
    "RequestRecorder",
    "ServerConfig",
    "ServerKind",
    "TokenExchangeError",
    "TokenIssuer",
    "audience_for_scope",
    "channel_activity",
    "post_activity",
]
