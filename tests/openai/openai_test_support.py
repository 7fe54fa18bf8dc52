"""Helpers shared by the OpenAI extension tests."""

from __future__ import annotations

import asyncio
from typing import Any

from agents_a365.emulator import Emulator
from agents_a365.tooling import ToolingConfiguration

AUTH_HANDLER = "agentic"


def tooling_configuration(emulator: Emulator, **overrides: Any) -> ToolingConfiguration:
    """The production path: gateway discovery on the emulator, no manifest."""
    return ToolingConfiguration(mcp_platform_endpoint=emulator.base_url, use_tooling_manifest=False, **overrides)


def other_tasks() -> set[asyncio.Task[Any]]:
    """Every unfinished task of the loop except the running one."""
    current = asyncio.current_task()
    return {t for t in asyncio.all_tasks() if t is not current and not t.done()}
