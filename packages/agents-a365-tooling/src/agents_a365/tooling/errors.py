"""Typed errors of discovery and registration. Messages never contain tokens."""

from __future__ import annotations

from typing import Literal

__all__ = [
    "ChatHistorySendError",
    "McpServerConnectionError",
    "SendFailureCause",
    "TokenAcquisitionError",
    "ToolServerConfigurationError",
    "ToolServerDiscoveryError",
    "ToolingError",
    "TurnMismatchError",
]


class ToolingError(Exception):
    """Base class of this package's errors."""


class ToolServerDiscoveryError(ToolingError):
    """The list of MCP servers could not be obtained (gateway or manifest)."""

    def __init__(self, message: str, *, endpoint: str | None = None, status_code: int | None = None) -> None:
        super().__init__(message)
        self.endpoint = endpoint
        self.status_code = status_code


class ToolServerConfigurationError(ToolingError, ValueError):
    """A server entry or setting is invalid (bad name, URL or scheme)."""


class TokenAcquisitionError(ToolingError):
    """A token exchange for one or more servers failed or returned nothing."""

    def __init__(self, message: str, *, scope: str | None = None, servers: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.scope = scope
        self.servers = servers


class McpServerConnectionError(ToolingError):
    """An MCP server could not be reached or refused the session."""

    def __init__(self, message: str, *, server_name: str, url: str | None = None) -> None:
        super().__init__(message)
        self.server_name = server_name
        self.url = url


SendFailureCause = Literal["queue_timeout", "timeout", "response_too_large", "unreachable", "http_status"]
"""Why a threat-protection send failed: no free send slot in time, no answer in time, an oversized
answer, a transport failure, or an HTTP error status (``status_code``)."""


class ChatHistorySendError(ToolingError):
    """Threat protection did not accept the chat history (carried in a failed OperationResult).

    ``conversation_id`` and ``message_id`` name the record that was not delivered."""

    def __init__(
        self,
        message: str,
        *,
        cause: SendFailureCause = "unreachable",
        status_code: int | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.cause: SendFailureCause = cause
        self.status_code = status_code
        self.attempts = attempts
        self.conversation_id: str | None = None
        self.message_id: str | None = None


class TurnMismatchError(ToolingError):
    """An MCP server or tool registered for one turn identity (tenant, user, agent) was called in a turn
    of another: the call is not sent. Names what differs, never a token."""


class UnknownTurnError(TurnMismatchError):
    """An MCP request of this SDK's tools ran where no turn is known (no run context naming one, no turn scope):
    it was not sent. Says how to pass the turn."""


class ToolServerNotGivenError(ToolingError):
    """A tool of an MCP server that discovery did not give the running turn's user was called: not sent."""
