"""An OpenAI turn with a huge tool list holds the event loop for no long step (issue 27: 969 ms cold,
1,033 ms warm).

3,000 tools with ~5 KB input schemas (a ~15 MiB ``tools/list``, under the 16 MiB cap): the cold turn lists
(parsed and validated in steps), digests and caches them; the warm turn registers from the cache and answers
``list_tools`` without copying the definitions. The lag monitor (``support/loop_lag.py``) measures the
longest step in CPU time of the process, so a busy machine does not add to it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agents import Agent

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.tooling import ToolingConfiguration
from agents_a365.tooling.extensions.openai import McpToolRegistrationService
from support.hostile_mcp import HostileMcp
from support.hostile_server import HostileServer, Request, behaviours
from support.loop_lag import LagMonitor
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
        self.listings = 0
        self._answers: dict[bytes, bytes] = {}  # built once per request id: the server's own work must
        # not show as a stall of ours (it runs on the same loop)

    async def __call__(self, request: Request, writer: asyncio.StreamWriter) -> None:
        message = json.loads(request.body) if request.method == "POST" and request.body else {}
        if message.get("method") != "tools/list":
            await super().__call__(request, writer)
            return
        self.listings += 1
        request_id = json.dumps(message["id"]).encode()
        if request_id not in self._answers:
            body = b'{"jsonrpc": "2.0", "id": %s, "result": {"tools": %s}}' % (request_id, self.tools)
            head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            self._answers[request_id] = head.encode() + body
        writer.write(self._answers[request_id])
        await writer.drain()


@pytest.mark.serial  # CPU time between ticks: alone (tests/support/serial.py)
async def test_cold_and_warm_turns_with_3000_tools_hold_the_loop_under_50_ms_per_step(
    emulator: Emulator,
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

            await one_turn()  # a first turn: the process's one-time costs (imports, TLS) are not measured
            service.configuration_service.clear_caches()
            turns = {}
            for phase in ("cold", "warm"):
                async with LagMonitor() as monitor:
                    listed = await one_turn()
                turns[phase] = (monitor, listed)
    assert huge.listings == 2  # the first turn's and the cold turn's; the warm turn's came from the cache
    print({phase: monitor.report() for phase, (monitor, _) in turns.items()})
    for phase, (monitor, listed) in turns.items():
        assert [len(tools) for tools in listed] == [TOOLS] * 3
        assert monitor.cpu < STEP_LIMIT, f"{phase}: {monitor.report()}"
    assert turns["warm"][1][0][0] is turns["cold"][1][0][0]  # the cached definitions: never copied per turn
