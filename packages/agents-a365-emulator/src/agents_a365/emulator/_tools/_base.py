"""Building an MCP server (official low-level SDK) from a list of tool specifications."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from pydantic import BaseModel, ValidationError

logger = logging.getLogger("agents_a365.emulator.mcp")

_EMAIL_RE = re.compile(r"^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")


class ToolFailure(Exception):
    """Raised by a tool to make the call fail with an MCP error result (``isError=true``)."""


def check_email(address: str) -> str:
    """Return the stripped address, or raise :class:`ToolFailure` when it is not a valid email address."""
    candidate = address.strip()
    if not _EMAIL_RE.fullmatch(candidate):
        raise ToolFailure(f"Invalid email address: {address!r}")
    return candidate


class EchoArguments(BaseModel):
    """The arguments of :meth:`Emulator.add_tool`'s tools."""

    text: str = ""


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, description, argument model (gives the input schema) and implementation.

    ``run`` receives the validated arguments model and returns a JSON-serialisable value, sent back as
    JSON text content.
    """

    name: str
    description: str
    arguments: type[BaseModel]
    run: Callable[[Any], Any]

    def to_mcp(self) -> types.Tool:
        return types.Tool(
            name=self.name, description=self.description, inputSchema=self.arguments.model_json_schema()
        )


def _error(message: str) -> types.ServerResult:
    return types.ServerResult(
        types.CallToolResult(content=[types.TextContent(type="text", text=message)], isError=True)
    )


def _describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def build_mcp_server(name: str, tools: Sequence[ToolSpec]) -> Server[dict[str, Any], Any]:
    """A low-level MCP server exposing ``tools`` (``tools/list`` and ``tools/call``)."""
    server: Server[dict[str, Any], Any] = Server(name, version="0.1.0")
    # ``tools`` may grow while the server runs (``Emulator.add_tool``): the listing follows it.
    built: list[Any] = [-1, {}, []]  # tool count, by name, listing

    def current() -> tuple[dict[str, ToolSpec], list[types.Tool]]:
        if built[0] != len(tools):
            built[:] = [len(tools), {t.name: t for t in tools}, [t.to_mcp() for t in tools]]
        return built[1], built[2]

    async def list_tools(_: types.ListToolsRequest) -> types.ServerResult:
        return types.ServerResult(types.ListToolsResult(tools=current()[1]))

    async def call_tool(request: types.CallToolRequest) -> types.ServerResult:
        tool_name = request.params.name
        spec = current()[0].get(tool_name)
        if spec is None:
            return _error(f"Unknown tool: {tool_name!r}")
        try:
            arguments = spec.arguments.model_validate(request.params.arguments or {})
        except ValidationError as exc:
            return _error(f"Invalid arguments for {tool_name}: {_describe(exc)}")
        try:
            value = spec.run(arguments)
        except ToolFailure as exc:
            logger.info("Tool %s on server %s failed: %s", tool_name, name, exc)
            return _error(str(exc))
        logger.debug("Tool %s on server %s succeeded", tool_name, name)
        text = json.dumps(value, default=str)
        return types.ServerResult(types.CallToolResult(content=[types.TextContent(type="text", text=text)]))

    server.request_handlers[types.ListToolsRequest] = list_tools
    server.request_handlers[types.CallToolRequest] = call_tool
    return server
