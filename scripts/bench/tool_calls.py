"""Issues 9 (target 3) and 15: the cost of one MCP tool call through our registered LangChain tools.

    uv run python scripts/bench/tool_calls.py [--calls 40]

Same tool (``notes_1.list_notes``) four ways, interleaved call by call, medians:

- raw: ``mcp`` ``ClientSession.call_tool`` on a session opened once (the floor);
- ours, per-turn session: a tool of ``service.mcp_tools(...)`` (one session per server for the turn);
- ours, seed form: a tool of ``add_tool_servers_to_agent`` / ``get_mcp_tools`` (pooled sessions, reused
  across calls and turns; before issue 15 a new session per call);
- adapters default: a tool of ``MultiServerMCPClient(...).get_tools()`` (a new session per call).

Measured with the emulator's 20 ms per MCP response and with no added latency (pure overhead).
Also checks that the turn's sessions are closed when ``mcp_tools`` exits (no session task left), and
counts the MCP requests one call costs on each path at the emulator (initialize, initialized, GET stream,
call, DELETE for a session per call; the call alone on an open session).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time
from typing import Any

import httpx
from _common import Samples, agent_id_for, emulator_process, header, make_turn, ms, table, verdict
from langchain_mcp_adapters.client import MultiServerMCPClient
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from agents_a365.emulator import PLATFORM_AUDIENCE
from agents_a365.tooling import ToolingConfiguration
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService

ARGS: dict[str, Any] = {}


async def timed(coro: Any) -> float:
    t0 = time.perf_counter()
    result = await coro
    elapsed = time.perf_counter() - t0
    if getattr(result, "isError", False):
        raise RuntimeError(f"tool error: {result}")
    return elapsed


async def measure(emu: Any, service: McpToolRegistrationService, calls: int, label: str, s: Samples) -> None:
    auth = emu.authorization()
    turn = make_turn(agent_id_for(1), "user-1")
    token = emu.issuer.mint(PLATFORM_AUDIENCE, app_id="bench", user_id="user-1")
    url = f"{emu.base_url}/agents/servers/notes_1/"
    per_call = {t.name: t for t in await service.get_mcp_tools(auth, "AGENTIC", turn)}["list_notes"]
    default = {
        t.name: t
        for t in await MultiServerMCPClient(
            {
                "notes_1": {
                    "transport": "streamable_http",
                    "url": url,
                    "headers": {"Authorization": f"Bearer {token}"},
                }
            }
        ).get_tools()
    }["list_notes"]
    async with (
        httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
        service.mcp_tools(auth, "AGENTIC", turn) as toolset,
    ):
        await session.initialize()
        ours = {t.name: t for t in toolset.tools()}["list_notes"]
        for _ in range(3):  # warm-up
            await session.call_tool("list_notes", {})
            await ours.ainvoke({})
        for _ in range(calls):
            s.add(f"raw_{label}", await timed(session.call_tool("list_notes", {})))
            s.add(f"ours_{label}", await timed(ours.ainvoke({})))
            s.add(f"per_call_{label}", await timed(per_call.ainvoke({})))
            s.add(f"default_{label}", await timed(default.ainvoke({})))
        holders = [
            t for t in asyncio.all_tasks() if t.get_name().startswith("a365-mcp-session") and not t.done()
        ]
        s.add(f"open_{label}", len(holders))
    await asyncio.sleep(0.05)
    left = [t for t in asyncio.all_tasks() if t.get_name().startswith("a365-mcp-session") and not t.done()]
    s.add(f"left_{label}", len(left))
    for name, tool in (("per_call", per_call), ("default", default)):
        await asyncio.to_thread(emu.control, "DELETE", "/requests")
        for _ in range(10):
            await tool.ainvoke({})
        recorded = await asyncio.to_thread(emu.control, "GET", "/requests?route=mcp&server=notes_1")
        s.add(f"requests_{name}_{label}", len(recorded) / 10)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=40)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    header("Tool calls (issue 9, target 3)", "uv run python scripts/bench/tool_calls.py")
    s = Samples()
    with emulator_process(latency_ms=20) as emu:
        cfg = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
        async with McpToolRegistrationService(configuration=cfg) as service:
            await measure(emu, service, args.calls, "20ms", s)
            emu.set_latency(0)
            await measure(emu, service, args.calls, "0ms", s)
    rows = []
    for label in ("20ms", "0ms"):
        raw = s.med(f"raw_{label}")
        rows.append(
            [
                label,
                ms(raw),
                ms(s.med(f"ours_{label}")),
                f"{s.med(f'ours_{label}') / raw:.2f}",
                ms(s.med(f"per_call_{label}")),
                ms(s.med(f"default_{label}")),
                f"{s.med(f'default_{label}') / s.med(f'ours_{label}'):.2f}",
            ]
        )
    print(f"{args.calls} calls per variant, interleaved; medians")
    table(
        rows,
        [
            "added latency",
            "raw call_tool",
            "ours (per-turn session)",
            "ours / raw",
            "ours seed form (add_tool_servers_to_agent)",
            "adapters default (session per call)",
            "default / ours",
        ],
    )
    ratio = s.med("ours_20ms") / s.med("raw_20ms")
    seed_ratio = s.med("per_call_20ms") / s.med("raw_20ms")
    open_during = int(s.med("open_20ms"))
    left = int(max(s.values["left_20ms"] + s.values["left_0ms"]))
    table(
        [
            ["3", "ours / raw call_tool (20 ms)", f"{ratio:.2f}", "<= 1.3", verdict(ratio <= 1.3)],
            [
                "15",
                "seed form / raw call_tool (20 ms)",
                f"{seed_ratio:.2f}",
                "<= 1.3",
                verdict(seed_ratio <= 1.3),
            ],
            [
                "15",
                "MCP requests per call: seed form / adapters default",
                f"{s.med('requests_per_call_20ms'):.1f} / {s.med('requests_default_20ms'):.1f}",
                "(info)",
                "",
            ],
            [
                "3",
                "session holders open during the turn / after it",
                f"{open_during} / {left}",
                "n / 0",
                verdict(left == 0),
            ],
        ],
        ["target", "measure", "value", "target", ""],
    )


if __name__ == "__main__":
    asyncio.run(main())
