"""The floor of listing N MCP servers: raw aiohttp, one session, the three requests of a listing each.

No SDK, no MCP client objects: ``initialize``, ``notifications/initialized`` and ``tools/list`` per server,
concurrently, on one keep-alive pool. What is left is the network (the emulator's added latency) and the
emulator's own CPU per request, on its one event loop; a ratio a client cannot beat on this emulator.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

__all__ = ["floor_listing"]

_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


async def _rpc(
    session: aiohttp.ClientSession, url: str, headers: dict[str, str], body: dict[str, Any]
) -> Any:
    async with session.post(url, data=json.dumps(body), headers=headers) as response:
        response.raise_for_status()
        raw = await response.read()
        if "id" not in body:
            return None, None
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            raw = next(line[5:] for line in raw.decode().splitlines() if line.startswith("data:")).encode()
        return json.loads(raw)["result"], response.headers.get("mcp-session-id")


async def _list_one(session: aiohttp.ClientSession, url: str, token: str) -> int:
    headers = {**_HEADERS, "authorization": f"Bearer {token}"}
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "floor", "version": "0"},
    }
    result, session_id = await _rpc(
        session, url, headers, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
    )
    headers["mcp-protocol-version"] = result["protocolVersion"]
    if session_id:
        headers["mcp-session-id"] = session_id
    await _rpc(session, url, headers, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    result, _ = await _rpc(session, url, headers, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    return len(result["tools"])


async def floor_listing(session: aiohttp.ClientSession, base_url: str, token: str, n: int) -> int:
    """List ``notes_1..notes_n`` concurrently; the number of tools."""
    counts = await asyncio.gather(
        *(_list_one(session, f"{base_url}/agents/servers/notes_{i}/", token) for i in range(1, n + 1))
    )
    return sum(counts)
