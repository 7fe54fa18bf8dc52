"""Configuration pointing the SDK at a running emulator (the production code path): the one builder."""

from __future__ import annotations

from typing import Any

from agents_a365.emulator import Emulator
from agents_a365.tooling import MCPServerConfig, ToolingConfiguration

__all__ = ["AUTH_HANDLER", "mail_server", "production_config"]

AUTH_HANDLER = "agentic"
"""The auth handler name the emulator's authorization answers for."""


def production_config(emu: Emulator, **overrides: Any) -> ToolingConfiguration:
    """Gateway discovery and token exchange against ``emu`` (no manifest); ``overrides`` win."""
    values: dict[str, Any] = {"mcp_platform_endpoint": emu.base_url, "use_tooling_manifest": False}
    values.update(overrides)
    return ToolingConfiguration(**values)


def mail_server(emu: Emulator, user_id: str | None = None) -> MCPServerConfig:
    """The emulator's mail server, with a token of its audience (for ``user_id``). A fresh token each time, its
    ``iat`` the current second: two configs built a second boundary apart are two session-pool keys, so two
    sessions (a test meaning one user's calls builds the config once)."""
    token = emu.server_token("mail", user_id=user_id)
    return MCPServerConfig(
        mcp_server_name="mail", url=emu.server_url("mail"), headers={"Authorization": f"Bearer {token}"}
    )
