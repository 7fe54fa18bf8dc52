"""Typed errors of discovery and registration. Messages never contain tokens."""

from __future__ import annotations

__all__ = [
    "ChatHistorySendError",
    "McpServerConnectionError",
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


class ChatHistorySendError(ToolingError):
    """Threat protection did not accept the chat history (carried in a failed OperationResult)."""

    def __init__(self, message: str, *, status_code: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.attempts = attempts


class TurnMismatchError(ToolingError):
    """An MCP server or tool registered for one turn identity (tenant, user, agent) was called in a turn
    of another: the call is not sent. Names what differs, never a token."""
