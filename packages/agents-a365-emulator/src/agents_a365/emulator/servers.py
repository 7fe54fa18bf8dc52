"""Emulated MCP server instances: configuration, state and tools."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents_a365.emulator._tools._base import ToolSpec
from agents_a365.emulator._tools.calendar import CalendarState, calendar_tools
from agents_a365.emulator._tools.mail import MailState, mail_tools
from agents_a365.emulator._tools.notes import NotesState, notes_tools
from agents_a365.emulator.config import ServerConfig
from agents_a365.emulator.constants import PLATFORM_AUDIENCES

__all__ = ["EmulatedServer", "ServerState"]

ServerState = MailState | CalendarState | NotesState


@dataclass
class EmulatedServer:
    """One emulated MCP server. ``state`` is the live in-memory state its tools read and change."""

    config: ServerConfig
    state: Any

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def kind(self) -> str:
        return self.config.kind

    @property
    def accepted_audiences(self) -> frozenset[str]:
        """Token audiences this server accepts (its own for V2, the platform's for V1)."""
        if self.config.audience is not None:
            return frozenset({self.config.audience})
        return PLATFORM_AUDIENCES

    def tools(self) -> list[ToolSpec]:
        if isinstance(self.state, MailState):
            return mail_tools(self.state)
        if isinstance(self.state, CalendarState):
            return calendar_tools(self.state)
        return notes_tools(self.state)

    def reset(self) -> None:
        self.state.reset()

    def snapshot(self) -> dict[str, Any]:
        data: dict[str, Any] = self.state.snapshot()
        return data

    @classmethod
    def create(cls, config: ServerConfig) -> EmulatedServer:
        state: ServerState
        if config.kind == "mail":
            state = MailState()
        elif config.kind == "calendar":
            state = CalendarState()
        else:
            state = NotesState()
        return cls(config=config, state=state)
