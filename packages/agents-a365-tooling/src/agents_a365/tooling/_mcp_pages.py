"""Every page of an MCP server's ``tools/list``, with a page cap (one helper for core and extensions)."""

from __future__ import annotations

from typing import Any

from mcp import ClientSession
from mcp.types import ListToolsRequest, PaginatedRequestParams, Tool
from pydantic import BaseModel, ConfigDict

from ._tool_names import usable_tools
from .tool_cache import prime_output_schemas

__all__ = ["MAX_LIST_PAGES", "list_all_tools"]

MAX_LIST_PAGES = 1000
"""A server repeating or inventing cursors must not keep a listing going; callers add the deadline."""


class _Page(BaseModel):
    """A ``tools/list`` result read item by item: one bad definition must not fail the whole server
    (``ListToolsResult`` validates every tool at once)."""

    model_config = ConfigDict(extra="allow")
    tools: list[Any]
    nextCursor: str | None = None


async def list_all_tools(
    session: ClientSession, *, max_pages: int = MAX_LIST_PAGES, server_name: str = "MCP server"
) -> list[Tool]:
    """The usable tools of every page of ``session``'s ``tools/list``; ``RuntimeError`` past ``max_pages``.

    A tool whose definition is unusable is left out with a WARNING (see ``usable_tools``). No deadline
    of its own: run it under the caller's (``asyncio.timeout``), which bounds the whole listing.
    """
    if isinstance(max_pages, bool) or not isinstance(max_pages, int) or max_pages < 1:
        raise ValueError("max_pages must be a positive integer")
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(max_pages):
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        # The request itself (mcp 2 takes it as is; mcp 1 sends the same JSON as for its ClientRequest).
        page = await session.send_request(ListToolsRequest(params=params), _Page)  # type: ignore[arg-type]
        tools.extend(usable_tools(page.tools, server_name))
        cursor = page.nextCursor or None
        if cursor is None:
            # What ClientSession.list_tools records for validating results; without it the session's
            # first call would list again, strictly, and fail on the definitions left out here.
            prime_output_schemas(session, tools)
            return tools
    raise RuntimeError(f"tools/list returned more than {max_pages} pages")
