"""A 15 MiB ``tools/list`` answer (3,000 tools, under the 16 MiB cap) must not stall the event loop (issue 27).

A monitor task measures its own scheduling delay while LangChain's ``mcp_tools`` registers the server cold
(listed, parsed, cached) and warm (from the cache). Two figures per run: the wall-clock lag (what every
other conversation on the host waits; a loaded machine adds to it) and the event loop thread's own CPU time
between two ticks of the monitor (a step of ours holding the loop; the machine's load does not add to it).
"""

from __future__ import annotations

import asyncio
import functools
import gc
import json
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID
from agents_a365.tooling import ToolingConfiguration
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService
from support.hostile_server import HostileServer, Request, behaviours
from support.jwt import make_jwt
from support.turns import make_turn_context

TOKEN = make_jwt(appid=DEFAULT_AGENT_ID)
TOOLS = 3000
STEP = 0.050  # no step of ours may hold the loop longer


def _result() -> bytes:
    schema = {
        "type": "object",
        "properties": {f"p{p}": {"type": "string", "description": "d" * 44} for p in range(60)},
    }
    tools = [{"name": f"tool_{n}", "description": f"tool {n}", "inputSchema": schema} for n in range(TOOLS)]
    return json.dumps({"tools": tools}).encode()


RESULT = _result()
SMALL = json.dumps({"tools": [{"name": "ping", "inputSchema": {"type": "object"}}]}).encode()


@functools.cache  # the server answers from memory: its own work must not show as a stall
def _answer(message_id: Any, result: bytes) -> bytes:
    data = b'{"jsonrpc": "2.0", "id": ' + json.dumps(message_id).encode() + b', "result": ' + result + b"}"
    return (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode()
        + data
    )


_answer("a365-list-1", RESULT)  # built at import, not while measured


async def _mcp(request: Request, writer: asyncio.StreamWriter) -> None:
    message = json.loads(request.body)
    if "id" not in message:
        writer.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
    elif message["method"] == "initialize":
        hello = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}}}
        writer.write(
            _answer(
                message["id"], json.dumps({**hello, "serverInfo": {"name": "big", "version": "1"}}).encode()
            )
        )
    else:
        writer.write(_answer(message["id"], RESULT if request.path.endswith("/big") else SMALL))
    await writer.drain()


class LagMonitor:
    """A task measuring its own scheduling delay (wall) and the loop thread's CPU time between its ticks,
    without the garbage collector's pauses (CPython's full collections traverse every live object: the
    definitions of 3,000 tools are a million of them; reported apart, see docs/performance.md)."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0
        self.gc = 0.0  # the longest collection
        self._gc_total = 0.0
        self._gc_started = 0.0
        self._since: tuple[float, float, float] | None = None
        self._task: asyncio.Task[None] | None = None

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        if phase == "start":
            self._gc_started = time.thread_time()
        else:
            pause = time.thread_time() - self._gc_started
            self._gc_total += pause
            self.gc = max(self.gc, pause)

    def _tick(self) -> None:
        """Close the interval since the last tick (the one a step may have held) and open the next."""
        loop = asyncio.get_running_loop()
        now, cpu, collected = loop.time(), time.thread_time(), self._gc_total
        if self._since is not None:
            wall0, cpu0, collected0 = self._since
            self.wall = max(self.wall, now - wall0 - 0.005)
            self.cpu = max(self.cpu, cpu - cpu0 - (collected - collected0))
        self._since = (now, cpu, collected)

    async def _run(self) -> None:
        while True:
            self._tick()
            await asyncio.sleep(0.005)

    async def __aenter__(self) -> LagMonitor:
        gc.callbacks.append(self._on_gc)
        self._task = asyncio.create_task(self._run())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._task is not None
        self._tick()  # the last interval too: a step that never yielded shows here
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        gc.callbacks.remove(self._on_gc)


@pytest.fixture
async def server() -> AsyncIterator[HostileServer]:
    async with HostileServer() as hostile:
        hostile.route("/small", _mcp)
        hostile.route("/big", _mcp)
        yield hostile


def _lists(server: HostileServer, name: str) -> None:
    """The gateway lists one server: ``small`` (warming the process up) or ``big``."""
    entry = {"mcpServerName": name, "url": f"{server.base_url}/{name}"}
    server.route("/mcpServers", behaviours.respond(200, {"mcpServers": [entry]}))


async def test_a_15_mib_listing_does_not_stall_the_loop_cold_or_warm(server: HostileServer) -> None:
    assert 14 * 2**20 < len(RESULT) < 16 * 2**20  # 15 MiB, under the default cap
    config = ToolingConfiguration(
        mcp_platform_endpoint=server.base_url, use_tooling_manifest=False, request_timeout=60.0
    )
    turn: TurnContext = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    figures = {}
    async with McpToolRegistrationService(configuration=config) as service:
        # A first turn on a small server: the process's one-time costs (imports, the CA bundle) are not
        # what this test is about.
        _lists(server, "small")
        async with service.mcp_tools(None, None, turn, auth_token=TOKEN):
            pass
        service.configuration_service.clear_caches()  # discovery again: now the big server
        _lists(server, "big")
        for phase in ("cold", "warm"):
            async with (
                LagMonitor() as monitor,
                service.mcp_tools(None, None, turn, auth_token=TOKEN) as toolset,
            ):
                assert len(toolset) == TOOLS
            figures[phase] = (monitor.wall, monitor.cpu, monitor.gc)
    print(
        "loop lag (wall, loop-thread CPU per tick, longest GC pause), ms:",
        {k: tuple(round(v * 1e3) for v in values) for k, values in figures.items()},
    )
    for phase, (_, cpu, _) in figures.items():
        assert cpu < STEP, f"{phase}: a step held the loop {cpu * 1e3:.0f} ms"
