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
    live_tools: list[ToolSpec] | None = None

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
        """The server's tools: one list per server, which :meth:`Emulator.add_tool` extends while it runs."""
        if self.live_tools is None:
            if isinstance(self.state, MailState):
                self.live_tools = mail_tools(self.state)
            elif isinstance(self.state, CalendarState):
                self.live_tools = calendar_tools(self.state)
            else:
                self.live_tools = notes_tools(self.state)
        return self.live_tools

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
