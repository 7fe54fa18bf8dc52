"""A warm OpenAI turn with a huge tool list holds the event loop for no long step (issue 27: 1,033 ms).

3,000 tools with ~5 KB input schemas (a ~15 MiB ``tools/list``, under the 16 MiB cap): the cold turn lists
and caches them; the warm turn registers from the cache and answers ``list_tools`` without copying the
definitions. asyncio's own slow-callback report (debug mode) names every step that ran longer than 50 ms.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from agents import Agent

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.tooling import ToolingConfiguration
from agents_a365.tooling.extensions.openai import McpToolRegistrationService
from support.hostile_mcp import HostileMcp
from support.hostile_server import HostileServer, Request, behaviours
from support.turns import make_turn_context

TOOLS = 3000
STEP_LIMIT = 0.05


def _definitions() -> bytes:
    schema = {
        "type": "object",
        "properties": {f"field_{i}": {"type": "string", "description": "x" * 50} for i in range(50)},
    }
    tools = [{"name": f"tool_{i}", "description": f"tool {i}", "inputSchema": schema} for i in range(TOOLS)]
    return json.dumps(tools).encode()


class _Huge(HostileMcp):
    def __init__(self) -> None:
        super().__init__()
        self.tools = _definitions()

    async def __call__(self, request: Request, writer: asyncio.StreamWriter) -> None:
        message = json.loads(request.body) if request.method == "POST" and request.body else {}
        if message.get("method") != "tools/list":
            await super().__call__(request, writer)
            return
        request_id = json.dumps(message["id"]).encode()
        body = b'{"jsonrpc": "2.0", "id": %s, "result": {"tools": %s}}' % (request_id, self.tools)
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        writer.write(head.encode() + body)
        await writer.drain()


async def test_a_warm_turn_with_3000_tools_holds_the_loop_under_50_ms_per_step(
    emulator: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    huge = _Huge()
    assert 10 * 2**20 < len(huge.tools) < 16 * 2**20
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    async with HostileServer() as platform:
        platform.route("/huge/mcp", huge)
        entry = {"mcpServerName": "huge", "url": f"{platform.base_url}/huge/mcp"}
        platform.route("/mcpServers", behaviours.respond(200, {"mcpServers": [entry]}))
        config = ToolingConfiguration(
            mcp_platform_endpoint=platform.base_url, use_tooling_manifest=False, request_timeout=60
        )
        async with McpToolRegistrationService(configuration=config) as service:

            async def one_turn() -> list[Any]:
                async with service.connected_agent(
                    Agent(name="a"), emulator.authorization(), "AGENTIC", turn
                ) as agent:
                    (server,) = agent.mcp_servers
                    return [await server.list_tools() for _ in range(3)]  # the runner lists per model call

            cold = await one_turn()  # listed and cached (its own stall is the listing's, not measured here)
            loop = asyncio.get_running_loop()
            loop.slow_callback_duration = STEP_LIMIT
            loop.set_debug(True)
            try:
                with caplog.at_level(logging.WARNING, logger="asyncio"):
                    warm = await one_turn()
            finally:
                loop.set_debug(False)
    slow = [r.getMessage() for r in caplog.records if r.name == "asyncio" and "took" in r.getMessage()]
    assert not slow, slow
    assert [len(tools) for tools in warm] == [TOOLS] * 3
    assert warm[0][0] is cold[0][0]  # the cached definitions themselves: never copied per turn
