"""Helpers shared by the OpenAI extension tests."""

from __future__ import annotations

import asyncio
from typing import Any

from agents_a365.emulator import Emulator
from agents_a365.tooling import ToolingConfiguration

AUTH_HANDLER = "agentic"


def tooling_configuration(emulator: Emulator, **overrides: Any) -> ToolingConfiguration:
    """The production path: gateway discovery on the emulator, no manifest."""
    return ToolingConfiguration(
        mcp_platform_endpoint=emulator.base_url, use_tooling_manifest=False, **overrides
    )


def _server_singleton(task: asyncio.Task[Any]) -> bool:
    # sse-starlette (under the emulator's MCP servers, same loop) starts one shutdown watcher
    # per event loop that lives as long as the loop: server side, not ours.
    return getattr(task.get_coro(), "__qualname__", "") == "_shutdown_watcher"


def other_tasks() -> set[asyncio.Task[Any]]:
    """Every unfinished task of the loop except the running one (and server-side singletons)."""
    current = asyncio.current_task()
    return {t for t in asyncio.all_tasks() if t is not current and not t.done() and not _server_singleton(t)}


async def leaked_tasks(before: set[asyncio.Task[Any]], *, grace: float = 2.0) -> set[asyncio.Task[Any]]:
    """Tasks started since ``before`` still running after ``grace`` seconds.

    The emulator runs in the same loop: its request handlers may need a moment to finish
    after the client closed; a client-side leak stays.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while (extra := other_tasks() - before) and loop.time() < deadline:  # noqa: ASYNC110 - no event to wait on
        await asyncio.sleep(0.02)
    return extra
