"""Every page of ``tools/list`` on an open MCP session, parsed and validated in steps on the event loop.

The session (``initialize``, its id, its end) is the official client's; only the ``tools/list`` requests
are sent here, on the session's own HTTP client. Why: mcp's transport validates each answer with
``JSONRPCMessage.model_validate_json``, which holds the GIL (and the event loop) for the whole answer:
2.7 s for a 15 MiB listing of 3,000 tools in ``tests/reliability/test_loop_stalls.py``'s setting. Here the
answer is parsed element by element and each tool validated on its own (``_stepwise.py``), the loop
running every 5 ms. Measured in docs/performance.md.
"""

from __future__ import annotations

from typing import Any

from httpx_sse import EventSource
from mcp.types import Tool

from ._stepwise import Steps, json_value, mapped, run_cooperatively
from ._tool_names import distinct_tools, usable_tool
from .models import MCPServerConfig

__all__ = ["MAX_LIST_PAGES", "SessionGone", "list_tool_pages"]

MAX_LIST_PAGES = 1000
"""A server repeating or inventing cursors must not keep a listing going; callers add the deadline."""


class SessionGone(Exception):
    """The server does not know the session any more (HTTP 404 on its id): a new session may list."""


class ListingError(ValueError):
    """The server answered, but not with the tools."""


def _page(
    text: str | bytes, request_id: str, server_name: str
) -> Steps[tuple[list[Tool], str | None] | None]:
    """The tools and next cursor of the answer to ``request_id`` in ``text`` (``None``: not that answer)."""
    try:
        message = yield from json_value(text)
    except ValueError as exc:
        raise ListingError(f"tools/list: the server's answer is not JSON ({type(exc).__name__})") from None
    for item in message if isinstance(message, list) else [message]:
        if not isinstance(item, dict) or item.get("id") != request_id:
            continue  # a notification, or a request of the server's
        if "error" in item:
            error = item["error"] if isinstance(item["error"], dict) else {}
            raise ListingError(f"tools/list: JSON-RPC error {error.get('code')}: {error.get('message')}")
        result = item.get("result")
        if not isinstance(result, dict):
            raise ListingError("tools/list: the server's result is not an object")
        raw = result.get("tools")
        if not isinstance(raw, list):
            raise ListingError("tools/list: the result has no list of tools")
        # One tool per step; an unusable definition is left out, not the server.
        usable = yield from mapped(raw, lambda definition: usable_tool(definition, server_name))
        tools, cursor = [tool for tool in usable if tool is not None], result.get("nextCursor")
        return tools, cursor if isinstance(cursor, str) and cursor else None
    return None


async def _request(client: Any, server: MCPServerConfig, message: dict[str, Any]) -> Any:
    headers = {"accept": "application/json, text/event-stream"}  # the client's carry the protocol version
    if client.mcp_session_id:
        headers["mcp-session-id"] = client.mcp_session_id
    request_id = message["id"]
    async with client.stream("POST", server.url, json=message, headers=headers) as response:
        if response.status_code == 404:
            raise SessionGone("tools/list: HTTP 404 (the server ended the session)")
        if not 200 <= response.status_code < 300:  # redirects too: never followed with the token
            raise ListingError(f"tools/list: HTTP {response.status_code}")
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            async for event in EventSource(response).aiter_sse():  # the answer may come before the end
                if event.event == "message" and event.data:
                    page = await run_cooperatively(_page(event.data, request_id, server.name))
                    if page is not None:
                        return page
        else:
            page = await run_cooperatively(_page(await response.aread(), request_id, server.name))
            if page is not None:
                return page
    raise ListingError("tools/list: the server sent no answer")


async def list_tool_pages(
    client: Any, server: MCPServerConfig, *, max_pages: int = MAX_LIST_PAGES
) -> list[Tool]:
    """Every tool, page after page, on the open session's HTTP client ``client``."""
    tools: list[Tool] = []
    cursor: str | None = None
    for number in range(1, max_pages + 1):
        params = {"cursor": cursor} if cursor else {}
        message = {"jsonrpc": "2.0", "id": f"a365-list-{number}", "method": "tools/list", "params": params}
        page, cursor = await _request(client, server, message)
        tools.extend(page)
        if cursor is None:
            return distinct_tools(tools, server.name)  # one definition per name, across pages too
    raise ListingError(f"tools/list returned more than {max_pages} pages")
