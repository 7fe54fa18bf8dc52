"""Part of mcp2_probe.py's run inside the mcp 2.x venv (``tests`` on its path, for the hostile MCP server).

One call of a tool listed with an output schema per structured answer of the hostile MCP server (a matching
one, then ``STRUCTURED_BREAKS``), through ``McpSessionPool`` and through the OpenAI extension's
``A365MCPServer`` (which reads the schema from the definition itself); prints what each call gave as JSON.
"""

from __future__ import annotations

from typing import Any

from agents_a365.tooling import MCPServerConfig, McpServerConnectionError
from agents_a365.tooling.extensibility import McpSessionPool
from agents_a365.tooling.extensions.openai import A365MCPServer
from support.hostile_mcp import STRUCTURED_BREAKS, HostileMcp
from support.hostile_server import HostileServer


async def _call(structured: dict[str, Any] | None, through_server: bool) -> str:
    async with HostileServer() as server:
        server.route("/mcp", HostileMcp(output_schema=True, structured=structured))
        config = MCPServerConfig(mcp_server_name="s", url=f"{server.base_url}/mcp")
        async with McpSessionPool(timeout=10) as pool:
            (tool,) = await pool.list_tools(config)
            try:
                if through_server:
                    await A365MCPServer(config, [tool], pool=pool).call_tool(tool.name, {})
                else:
                    await pool.call_tool(config, tool.name, {}, output_schema=tool.output_schema)
            except McpServerConnectionError as exc:
                return str(exc)
            return "ok"


async def structured_outcomes() -> dict[str, list[str]]:
    answers = [{"n": 1}] + [structured for structured, _ in STRUCTURED_BREAKS]
    return {way: [await _call(s, way == "server") for s in answers] for way in ("pool", "server")}
