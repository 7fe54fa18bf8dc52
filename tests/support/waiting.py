"""Wait for something another task does (a background request reaching a server): an event, not time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["until"]


async def until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    """Return once ``condition()`` holds; ``TimeoutError`` after ``timeout`` seconds (polled, bounded).

    The timeout is a safety net against a hang, not a bound under test: generous, so a loaded CI machine (a
    background listing opening its MCP session) does not fail a test that only waits for something to happen."""
    async with asyncio.timeout(timeout):
        while not condition():  # noqa: ASYNC110 (the emulator's recorder offers no event to wait on)
            await asyncio.sleep(0.01)
