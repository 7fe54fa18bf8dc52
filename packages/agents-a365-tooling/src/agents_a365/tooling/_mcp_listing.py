"""``tools/list`` of an MCP server over streamable HTTP, on the core's pooled HTTP client.

Listing needs three exchanges (``initialize``, ``notifications/initialized``, ``tools/list`` per page)
and, for a server that keeps sessions, a ``DELETE`` at the end. The official client opens a new HTTP
client, a transport task group, a session task group and (for stateful servers) the standalone GET
event stream per server: about 4 ms of CPU per server in ``scripts/bench/registration.py``, which is
what made registration grow with the number of servers. Here the exchanges are plain requests on the
service's keep-alive pool (one connection reused across the servers of a host), under one total
deadline and a size cap per response, which the official client has neither of. Tool calls still go
through the official clients; only listing is done here. The messages and the result model are the
``mcp`` package's (:class:`mcp.types.Tool`); only the sequencing of the requests is ours.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
from mcp.types import Tool

from ._mcp_pages import MAX_LIST_PAGES
from ._redact import scrub
from ._tool_names import usable_tools
from ._transport import open_response

__all__ = ["PROTOCOL_VERSIONS", "McpListingError", "list_tools_over_http"]

logger = logging.getLogger(__name__)

# Versions whose initialize and tools/list this lister speaks (the shapes it reads are the same in all).
PROTOCOL_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05", "2025-11-25")
_SESSION = "mcp-session-id"
_VERSION = "mcp-protocol-version"
_DELETE_TIMEOUT = 2.0  # ending the server's session is a courtesy: never hold a turn for it


class McpListingError(Exception):
    """The server answered, but not with the tools: an HTTP error, a JSON-RPC error or a malformed reply.

    The message never holds a token (server text is scrubbed); ``status_code`` is the HTTP status
    when the failure was one.
    """

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(scrub(message))
        self.status_code = status_code


class _TooLarge(McpListingError):
    pass


class _SseDecoder:
    """Server-sent events, fed chunk by chunk (linear in the bytes: a long line is joined once)."""

    __slots__ = ("_data", "_event", "_partial", "_pending_cr")

    def __init__(self) -> None:
        self._partial: list[bytes] = []
        self._pending_cr = False
        self._data: list[str] = []
        self._event = "message"

    def feed(self, chunk: bytes) -> Iterator[str]:
        """The data of each ``message`` event completed by ``chunk``."""
        if self._pending_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]  # the CRLF was split between two chunks
        if not chunk:
            return
        self._pending_cr = chunk.endswith(b"\r")
        if b"\n" not in chunk and b"\r" not in chunk:
            self._partial.append(chunk)  # still inside one line: joined once, when it ends
            return
        lines = chunk.splitlines()
        if self._partial:  # the line the previous chunks began
            lines[0] = b"".join([*self._partial, lines[0]])
            self._partial.clear()
        if not chunk.endswith((b"\n", b"\r")):
            self._partial.append(lines.pop())
        for line in lines:
            if line:
                self._field(line.decode("utf-8", "replace"))
            elif self._data:
                data, event = "\n".join(self._data), self._event
                self._data, self._event = [], "message"
                if event == "message":
                    yield data
            else:
                self._event = "message"

    def _field(self, line: str) -> None:
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value


def _answer(text: str | bytes, request_id: int) -> dict[str, Any] | None:
    """The JSON-RPC response to ``request_id`` in ``text`` (one message or a batch), else ``None``."""
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise McpListingError(f"the server's reply is not JSON ({type(exc).__name__})") from None
    for item in message if isinstance(message, list) else [message]:
        if isinstance(item, dict) and item.get("id") == request_id and ("result" in item or "error" in item):
            if "error" in item:
                error = item["error"] if isinstance(item["error"], dict) else {}
                raise McpListingError(f"JSON-RPC error {error.get('code')}: {error.get('message')}")
            result = item["result"]
            if not isinstance(result, dict):
                raise McpListingError("the server's result is not an object")
            return result
    return None  # a notification, or a request of the server's: not what we wait for


class _Target:
    """The server: its URL parsed once for every request of the listing, and the HTTP deadline."""

    __slots__ = ("client", "timeout", "url")

    def __init__(self, client: httpx.AsyncClient, url: str, timeout: float) -> None:
        self.client = client
        self.url = httpx.URL(url)
        self.timeout = timeout


async def _send(target: _Target, headers: Mapping[str, str], message: dict[str, Any]) -> httpx.Response:
    content = json.dumps(message).encode()
    response = await open_response(
        target.client, "POST", target.url, headers=headers, content=content, timeout=target.timeout
    )
    if not 200 <= response.status_code < 300:  # redirects too: never followed with the token
        await response.aclose()
        raise McpListingError(
            f"{message['method']}: HTTP {response.status_code}", status_code=response.status_code
        )
    return response


async def _notify(target: _Target, headers: Mapping[str, str], method: str) -> None:
    response = await _send(target, headers, {"jsonrpc": "2.0", "method": method})
    await response.aclose()  # 202 Accepted, no body to read


async def _request(
    target: _Target, headers: Mapping[str, str], message: dict[str, Any], max_bytes: int
) -> tuple[dict[str, Any], httpx.Headers]:
    """POST one JSON-RPC request: the result of its response (JSON or an SSE stream) and the headers."""
    response = await _send(target, headers, message)
    try:
        declared = response.headers.get("content-length", "")
        if declared.isascii() and declared.isdigit() and int(declared) > max_bytes:
            raise _TooLarge(f"{message['method']}: response larger than {max_bytes} bytes")
        events = (
            _SseDecoder()
            if response.headers.get("content-type", "").startswith("text/event-stream")
            else None
        )
        body, size = bytearray(), 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise _TooLarge(f"{message['method']}: response larger than {max_bytes} bytes")
            if events is None:
                body += chunk
                continue
            for data in events.feed(chunk):  # the answer may come before the stream ends: stop there
                result = _answer(data, message["id"])
                if result is not None:
                    return result, response.headers
        result = _answer(bytes(body), message["id"]) if body else None
        if result is None:
            raise McpListingError(f"{message['method']}: the server sent no answer")
        return result, response.headers
    finally:
        await response.aclose()


async def list_tools_over_http(
    client: httpx.AsyncClient,
    url: str,
    headers: Mapping[str, str],
    *,
    timeout: float,
    max_bytes: int,
    client_name: str,
    client_version: str,
    max_pages: int = MAX_LIST_PAGES,
    server_name: str = "",
) -> list[Tool]:
    """Every tool of the server at ``url`` (all pages) within ``timeout`` s in total.

    Raises ``TimeoutError`` at the deadline, :class:`McpListingError` for an answer that is not the
    tools, and ``httpx.HTTPError`` for transport failures. ``headers`` (``Authorization`` included) go
    to ``url`` only: redirects are not followed. A connection that fails on the wire (a keep-alive
    connection the server closed as it was reused) is retried once, within the same deadline.
    """
    base = {**headers, "accept": "application/json, text/event-stream", "content-type": "application/json"}
    target = _Target(client, url, timeout)
    hello = {"name": client_name, "version": client_version}
    sessions: list[str] = []  # every session the server opened for us: ended at the end
    try:
        async with asyncio.timeout(max(timeout, 0.0)):
            try:
                return await _list_once(target, base, hello, sessions, max_bytes, max_pages, server_name)
            except httpx.TransportError as exc:
                if isinstance(exc, httpx.TimeoutException):
                    raise
                logger.debug("listing %s failed on the wire (%s): once more", url, type(exc).__name__)
                return await _list_once(target, base, hello, sessions, max_bytes, max_pages, server_name)
    finally:
        if sessions and not _cancelling():
            await asyncio.gather(*(_end_session(target, {**base, _SESSION: sid}) for sid in sessions))


async def _list_once(
    target: _Target,
    base: dict[str, str],
    hello: dict[str, str],
    sessions: list[str],
    max_bytes: int,
    max_pages: int,
    server_name: str,
) -> list[Tool]:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": PROTOCOL_VERSIONS[0], "capabilities": {}, "clientInfo": hello},
    }
    result, answer_headers = await _request(target, base, init, max_bytes)
    version = result.get("protocolVersion")
    session_id = answer_headers.get(_SESSION)
    if session_id:
        sessions.append(session_id)
    if version not in PROTOCOL_VERSIONS:
        raise McpListingError(f"unsupported MCP protocol version {str(version)[:40]!r}")
    session = {**base, _VERSION: version, **({_SESSION: session_id} if session_id else {})}
    await _notify(target, session, "notifications/initialized")
    tools: list[Tool] = []
    cursor: str | None = None
    for page in range(1, max_pages + 1):
        params = {"cursor": cursor} if cursor else {}
        request = {"jsonrpc": "2.0", "id": page, "method": "tools/list", "params": params}
        result, _ = await _request(target, session, request, max_bytes)
        raw = result.get("tools")
        if not isinstance(raw, list):
            raise McpListingError("tools/list: the result has no list of tools")
        tools.extend(usable_tools(raw, server_name or str(target.url)))  # a bad definition is skipped, not the server
        next_cursor = result.get("nextCursor")
        cursor = next_cursor if isinstance(next_cursor, str) and next_cursor else None
        if cursor is None:
            logger.debug("listed %d tool(s) at %s in %d page(s)", len(tools), target.url, page)
            return tools
    raise McpListingError(f"tools/list returned more than {max_pages} pages")


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def _end_session(target: _Target, headers: dict[str, str]) -> None:
    try:
        async with asyncio.timeout(_DELETE_TIMEOUT):
            response = await open_response(
                target.client, "DELETE", target.url, headers=headers, timeout=_DELETE_TIMEOUT
            )
            await response.aclose()
        logger.debug("MCP session at %s ended (HTTP %d)", target.url, response.status_code)
    except (TimeoutError, httpx.HTTPError) as exc:
        logger.debug("ending the MCP session at %s failed: %s", target.url, type(exc).__name__)
