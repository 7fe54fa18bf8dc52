"""What an extension provides to the contract suite: its native ways of sending a conversation."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .conversation import Message

__all__ = ["ExtensionAdapter", "Send", "Surface"]

Send = Callable[[Any, tuple[Message, ...], int | None], Awaitable[Any]]
"""``send(turn_context, messages, limit)`` -> the extension's ``OperationResult``."""


@dataclass(frozen=True)
class Surface:
    """One native way of handing the conversation to an extension."""

    name: str
    send: Send
    supports_limit: bool = True


class ExtensionAdapter(Protocol):
    name: str
    orchestrator: str  # what User-Agent names
    distribution: str  # the extension's distribution, whose version User-Agent reports

    def surfaces(self) -> tuple[Surface, ...]: ...

    def missing_argument_calls(self, turn: Any) -> dict[str, Callable[[], Awaitable[Any]]]:
        """Calls with one argument missing -> the ValueError message expected."""
        ...

    def register(self, authorization: Any, turn: Any) -> Any:
        """An async context manager that registers the turn's MCP tools (connecting every server)."""
        ...
