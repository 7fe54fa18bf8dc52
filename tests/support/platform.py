"""Configuration pointing the SDK at a running emulator (the production code path): the one builder."""

from __future__ import annotations

from typing import Any

from agents_a365.emulator import Emulator
from agents_a365.tooling import ToolingConfiguration

__all__ = ["AUTH_HANDLER", "production_config"]

AUTH_HANDLER = "agentic"
"""The auth handler name the emulator's authorization answers for."""


def production_config(emu: Emulator, **overrides: Any) -> ToolingConfiguration:
    """Gateway discovery and token exchange against ``emu`` (no manifest); ``overrides`` win."""
    values: dict[str, Any] = {"mcp_platform_endpoint": emu.base_url, "use_tooling_manifest": False}
    values.update(overrides)
    return ToolingConfiguration(**values)
