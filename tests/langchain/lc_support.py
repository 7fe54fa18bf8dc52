"""Helpers shared by the LangChain extension tests."""

from __future__ import annotations

import asyncio

from agents_a365.emulator import Emulator
from agents_a365.tooling import ToolingConfiguration

AUTH_HANDLER = "agentic"


def tooling_configuration(emu: Emulator) -> ToolingConfiguration:
    return ToolingConfiguration(
        mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False, allow_insecure_http=True
    )


def our_tasks() -> list[asyncio.Task[object]]:
    """Unfinished tasks this package started (MCP session holders and tool listings)."""
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("a365-mcp") and not t.done()]


async def client_side_tasks(before: set[asyncio.Task[object]]) -> list[asyncio.Task[object]]:
    """Unfinished tasks created since ``before`` that are not the emulator's own."""
    await asyncio.sleep(0.05)
    server_side = ("/uvicorn/", "/starlette/", "/mcp/server/", "/agents_a365/emulator/", "/sse_starlette/")
    leftover = []
    for task in asyncio.all_tasks() - before:
        if task.done() or task is asyncio.current_task():
            continue
        stack = task.get_stack()
        files = " ".join(frame.f_code.co_filename for frame in stack)
        if any(marker in files for marker in server_side):
            continue
        leftover.append(task)
    return leftover
