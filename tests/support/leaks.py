"""Leak detection shared by every suite: tasks the SDK started and left running.

The emulator serves in the same event loop as the SDK under test, so its own tasks (uvicorn, starlette,
the MCP server side, sse-starlette's per-loop shutdown watcher) are told apart from the client's by the
files of their frames.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = [
    "POOLED",
    "SERVER_SIDE",
    "is_pooled",
    "is_server_side",
    "leaked_tasks",
    "other_tasks",
    "our_tasks",
    "pooled_tasks",
]

# Frames of tasks that belong to the in-process emulator (server side), not to the SDK.
SERVER_SIDE = ("/uvicorn/", "/starlette/", "/mcp/server/", "/agents_a365/emulator/", "/sse_starlette/")


def is_server_side(task: asyncio.Task[Any]) -> bool:
    # sse-starlette starts one shutdown watcher per event loop that lives as long as the loop.
    if getattr(task.get_coro(), "__qualname__", "") == "_shutdown_watcher":
        return True
    if task.get_name().startswith(("sse_starlette.", "mcp.server.", "uvicorn.", "starlette.")):
        return True  # anyio names its tasks after their function: the server's own (an open GET stream)
    files = " ".join(frame.f_code.co_filename for frame in task.get_stack())
    return any(marker in files for marker in SERVER_SIDE)


POOLED = "a365-mcp-pooled"
"""The name prefix of the tooling service's pooled MCP sessions: the service's, not a turn's. They outlive
a turn on purpose (reused by the user's next turn) and end with the service (``aclose``), when idle, or
when their token expires; the pool's tests check that."""


def is_pooled(task: asyncio.Task[Any]) -> bool:
    """A pooled session's holder, or one of the ``mcp`` client's own tasks (every MCP session of this SDK
    lives in a pool, so those are a pooled session's)."""
    return task.get_name().startswith((POOLED, "mcp."))


def our_tasks() -> list[asyncio.Task[Any]]:
    """Unfinished tasks a turn of this SDK started by name (``a365-mcp*``), pooled sessions left out."""
    return [
        t
        for t in asyncio.all_tasks()
        if t.get_name().startswith("a365-mcp") and not t.done() and not is_pooled(t)
    ]


def pooled_tasks() -> list[asyncio.Task[Any]]:
    """The pooled sessions' holder tasks still running."""
    return [t for t in asyncio.all_tasks() if t.get_name().startswith(POOLED) and not t.done()]


def other_tasks() -> set[asyncio.Task[Any]]:
    """Every unfinished task of the loop except the running one and the emulator's per-loop singletons."""
    current = asyncio.current_task()
    return {
        t
        for t in asyncio.all_tasks()
        if t is not current
        and not t.done()
        and getattr(t.get_coro(), "__qualname__", "") != "_shutdown_watcher"
    }


async def leaked_tasks(
    before: set[asyncio.Task[Any]], *, grace: float = 2.0, pooled: bool = False
) -> set[asyncio.Task[Any]]:
    """Client-side tasks started since ``before`` still running after at most ``grace`` seconds, the
    the service's pooled sessions left out (a turn's leak is what this finds) unless ``pooled`` (after the
    service's ``aclose``: nothing at all may be left).

    The emulator's request handlers may need a moment to finish after the client closed (they are
    not counted anyway); a client-side leak stays. Returns as soon as none is left.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while True:
        extra = {t for t in other_tasks() - before if not is_server_side(t) and (pooled or not is_pooled(t))}
        if not extra or loop.time() >= deadline:
            return extra
        await asyncio.sleep(0.02)
