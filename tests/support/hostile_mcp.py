"""A misbehaving MCP server (streamable HTTP, JSON answers) as a ``hostile_server`` behaviour.

Just enough of the protocol for the official clients: ``initialize``, notifications (202),
``tools/list`` and ``tools/call``; each hostile trait is a flag: a ``nextCursor`` that never
repeats, a ``tools/call`` error echoing the request's headers (the bearer token included), structured content
that does not match the output schema the tool was listed with (``structured``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from support.hostile_server import HostileServer, Request

__all__ = ["STRUCTURED_BREAKS", "HostileMcp", "structured_echo"]

#: ``(structured content a server answers, the error a call then fails with)`` for a tool whose definition lists
#: an output schema ``{"n": integer}``: both extensions check it as mcp's own client does.
STRUCTURED_BREAKS = [
    ({"n": "one"}, "returned structured content that does not match"),
    (None, "returned no structured"),
]

TOOL = {"name": "echo", "description": "echo", "inputSchema": {"type": "object", "properties": {}}}


def _answer(writer: asyncio.StreamWriter, status: int, payload: Any = None) -> None:
    data = b"" if payload is None else json.dumps(payload).encode()
    head = f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    writer.write(head.encode("latin-1") + data)


@dataclass
class HostileMcp:
    endless_cursor: bool = False
    echo_headers_on_call: bool = False
    # Lists the tool with an output schema (an object with an integer "n") and answers calls with this
    # structured content (None: no structured content at all).
    structured: dict[str, Any] | None = field(default_factory=lambda: {"n": 1})
    output_schema: bool = False
    methods: list[str] = field(default_factory=list)
    _pages: itertools.count[int] = field(default_factory=itertools.count)

    async def __call__(self, request: Request, writer: asyncio.StreamWriter) -> None:
        if request.method != "POST":  # the optional SSE stream (GET) and session end (DELETE)
            _answer(writer, 405 if request.method == "GET" else 200)
            await writer.drain()
            return
        message = json.loads(request.body)
        method = message.get("method", "")
        self.methods.append(method)
        if "id" not in message:  # a notification
            _answer(writer, 202)
            await writer.drain()
            return
        result: dict[str, Any]
        if method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }
        elif method == "tools/list":
            schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
            result = {"tools": [{**TOOL, "outputSchema": schema} if self.output_schema else TOOL]}
            if self.endless_cursor:
                result["nextCursor"] = f"page-{next(self._pages)}"  # never the same twice
        elif method == "tools/call" and self.echo_headers_on_call:
            text = "; ".join(f"{k}: {v}" for k, v in request.headers.items())
            error = {"code": -32001, "message": f"denied, you sent {text}"}
            _answer(writer, 200, {"jsonrpc": "2.0", "id": message["id"], "error": error})
            await writer.drain()
            return
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "ok"}], "isError": False}
            if self.output_schema and self.structured is not None:
                result["structuredContent"] = self.structured
        else:
            result = {}
        _answer(writer, 200, {"jsonrpc": "2.0", "id": message["id"], "result": result})
        await writer.drain()


@contextlib.asynccontextmanager
async def structured_echo() -> AsyncIterator[tuple[HostileServer, HostileMcp]]:
    """A gateway listing one server, ``echo``, whose one tool has an output schema and answers ``{"n": 1}``
    until the test changes ``mcp.structured`` (the structured-content cases of both extensions)."""
    mcp = HostileMcp(output_schema=True, structured={"n": 1})
    async with HostileServer() as server:
        server.route("/mcp", mcp)
        server.gateway({"mcpServerName": "echo", "url": f"{server.base_url}/mcp"})
        yield server, mcp
