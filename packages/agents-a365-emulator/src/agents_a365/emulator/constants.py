"""Well-known identifiers of the Agent 365 platform, as used by the emulator."""

from __future__ import annotations

from typing import Final

PLATFORM_AUDIENCE: Final = "ea9ffc3e-8a23-4a7d-836d-234d7c7565c1"
"""Audience (application id) of the Agent 365 tooling platform."""

PLATFORM_AUDIENCE_URI: Final = f"api://{PLATFORM_AUDIENCE}"
"""The same audience in its ``api://`` form, also accepted by the gateway and V1 servers."""

PLATFORM_AUDIENCES: Final = frozenset({PLATFORM_AUDIENCE, PLATFORM_AUDIENCE_URI})

PLATFORM_SCOPE: Final = f"{PLATFORM_AUDIENCE}/.default"
"""Scope an agent requests to call the gateway and V1 MCP servers."""

DEFAULT_AGENT_ID: Final = "6f1c2b8e-5d4a-4e3b-9c7f-2a1b0c9d8e7f"
"""Fixed GUID used as the default agentic app id (token ``appid`` and gateway agent id)."""

DEFAULT_TENANT_ID: Final = "0b5e8a6c-3f2d-4c1b-8a9e-7d6c5b4a3f2e"
"""Fixed GUID used as the tenant id (``tid``) of minted tokens unless one is given."""

CALENDAR_AUDIENCE: Final = "api://a365-calendar"
"""Default audience of the V2 ``calendar`` server."""

CALENDAR_SCOPE: Final = "Calendars.ReadWrite"
"""Default scope of the V2 ``calendar`` server."""
