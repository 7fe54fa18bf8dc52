"""Configuration pointing the SDK at a running emulator (the production code path)."""

from __future__ import annotations

from typing import Any

from agents_a365.emulator import Emulator
from agents_a365.tooling import ToolingConfiguration


def production_config(emu: Emulator, **overrides: Any) -> ToolingConfiguration:
    """Gateway discovery and token exchange against ``emu`` (no manifest)."""
    return ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False, **overrides)
