"""Every page of an MCP server's ``tools/list``, with a page cap (one helper for core and extensions)."""

from __future__ import annotations

from typing import Any

from mcp import ClientSession
from mcp.types import PaginatedRequestParams, Tool

__all__ = ["MAX_LIST_PAGES", "list_all_tools"]

MAX_LIST_PAGES = 1000
"""A server repeating or inventing cursors must not keep a listing going; callers add the deadline."""


def _next_cursor(page: Any) -> str | None:
    # mcp 2 types are snake_case, mcp 1 camelCase.
    cursor = getattr(page, "next_cursor", None) or getattr(page, "nextCursor", None)
    return cursor if isinstance(cursor, str) and cursor else None


async def list_all_tools(session: ClientSession, *, max_pages: int = MAX_LIST_PAGES) -> list[Tool]:
    """The tools of every page of ``session``'s ``tools/list``; ``RuntimeError`` past ``max_pages``.

    No deadline of its own: run it under the caller's (``asyncio.timeout``), which bounds the whole listing.
    """
    if isinstance(max_pages, bool) or not isinstance(max_pages, int) or max_pages < 1:
        raise ValueError("max_pages must be a positive integer")
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(max_pages):
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(page.tools)
        cursor = _next_cursor(page)
        if cursor is None:
            return tools
    raise RuntimeError(f"tools/list returned more than {max_pages} pages")
