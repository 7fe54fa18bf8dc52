"""Emulator configuration (also loadable from the CLI's JSON config file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agents_a365.emulator.constants import CALENDAR_AUDIENCE, CALENDAR_SCOPE, DEFAULT_AGENT_ID
from agents_a365.emulator.faults import Fault, validate_route_key

__all__ = ["EmulatorConfig", "ServerConfig", "ServerKind"]

ServerKind = Literal["mail", "calendar", "notes"]

_UNIQUE_BASE = {"mail": "mcp_MailTools", "calendar": "mcp_CalendarTools", "notes": "mcp_NotesTools"}


class ServerConfig(BaseModel):
    """One emulated MCP server.

    ``audience`` ``None`` makes it a V1 server (accepts platform-audience tokens); otherwise it is a V2
    server accepting only tokens for that audience. A ``calendar`` server defaults to the V2 audience
    ``api://a365-calendar`` / scope ``Calendars.ReadWrite`` unless ``audience`` is given explicitly
    (``"audience": null`` makes a V1 calendar).
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", min_length=1)
    kind: ServerKind
    audience: str | None = None
    scope: str | None = None
    publisher: str = "Microsoft"
    unique_name: str | None = None

    @model_validator(mode="after")
    def _defaults(self) -> ServerConfig:
        if self.kind == "calendar" and "audience" not in self.model_fields_set:
            self.audience = CALENDAR_AUDIENCE
            if "scope" not in self.model_fields_set:
                self.scope = CALENDAR_SCOPE
        if self.unique_name is None:
            base = _UNIQUE_BASE[self.kind]
            self.unique_name = base if self.name == self.kind else f"{base}_{self.name}"
        return self

    @property
    def is_v2(self) -> bool:
        return self.audience is not None


def _default_servers() -> list[ServerConfig]:
    return [ServerConfig(name="mail", kind="mail"), ServerConfig(name="calendar", kind="calendar")]


class EmulatorConfig(BaseModel):
    """Configuration of an :class:`~agents_a365.emulator.Emulator`.

    ``agents`` maps an agentic app id to the names of the servers the gateway lists for it; any other agent
    id gets ``default_servers`` (``None`` = every configured server). ``gateway_shape`` and ``agents`` are
    read on every gateway request, so they may be changed while the emulator runs.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    servers: list[ServerConfig] = Field(default_factory=_default_servers)
    agents: dict[str, list[str]] = Field(default_factory=dict)
    default_servers: list[str] | None = None
    users: dict[str, list[str]] = Field(default_factory=dict)
    """User id (the token's ``oid``) -> the servers the gateway lists for that user, whatever the agent."""
    gateway_shape: Literal["wrapped", "list"] = "wrapped"
    agent_id: str = DEFAULT_AGENT_ID
    token_secret: str | None = None
    faults: dict[str, Fault] = Field(default_factory=dict)
    mcp_stateless: bool = True
    mcp_json_response: bool = True
    max_recorded_requests: int | None = Field(default=100_000, ge=1)
    shutdown_timeout: int = Field(default=2, ge=1)
    keep_alive_timeout: int = Field(default=75, ge=1)
    """Seconds an idle connection is kept open. Above clients' own idle limits (aiohttp's 15 s, httpx's 5 s), as
    a production front end's are: with uvicorn's 5 s a client reused connections the emulator was closing, and
    hosting-core's channel replies failed with ``Connection reset by peer`` in every host."""

    @model_validator(mode="after")
    def _check_references(self) -> EmulatorConfig:
        names = [s.name for s in self.servers]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate server names: {duplicates}")
        known = set(names)
        for agent, listed in {
            **self.agents,
            **self.users,
            "<default_servers>": self.default_servers or [],
        }.items():
            unknown = sorted(set(listed) - known)
            if unknown:
                raise ValueError(f"agent {agent!r} refers to unknown servers {unknown}")
        for route in self.faults:
            validate_route_key(route)
        return self

    def servers_for(self, agent_id: str, user_id: str | None = None) -> list[ServerConfig]:
        """The servers the gateway lists for ``agent_id`` (and ``user_id``, when ``users`` names them)."""
        names = self.users.get(user_id or "", self.agents.get(agent_id, self.default_servers))
        if names is None:
            return list(self.servers)
        by_name = {s.name: s for s in self.servers}
        return [by_name[n] for n in names if n in by_name]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EmulatorConfig:
        return cls.model_validate(data)

    @classmethod
    def from_file(cls, path: str | Path) -> EmulatorConfig:
        """Load a JSON config file (same fields as this model, snake_case)."""
        return cls.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))

    @classmethod
    def with_notes_servers(cls, count: int, **overrides: Any) -> EmulatorConfig:
        """The default servers plus ``count`` V1 ``notes`` servers named ``notes_1`` .. ``notes_<count>``."""
        servers = [
            *_default_servers(),
            *(ServerConfig(name=f"notes_{i}", kind="notes") for i in range(1, count + 1)),
        ]
        return cls(servers=servers, **overrides)
