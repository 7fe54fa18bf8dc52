"""Targets 3 and 15: the cost of one MCP tool call through our registered LangChain tools.

``notes_1.list_notes`` four ways, interleaved call by call, medians, with 20 ms per MCP response and with none:
raw ``ClientSession.call_tool`` on a session opened once (the floor); ours, a tool of ``service.mcp_tools(...)``;
ours, seed form (``get_mcp_tools``: pooled sessions); the adapters' default (``MultiServerMCPClient``: a session
per call).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
from _common import (
    ROUTES,
    Samples,
    agent_id_for,
    check,
    checks,
    emulator_process,
    make_turn,
    ms,
    start,
    table,
)
from langchain_mcp_adapters.client import MultiServerMCPClient
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from agents_a365.emulator import PLATFORM_AUDIENCE
from agents_a365.tooling import ToolingConfiguration
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService


async def timed(s: Samples, key: str, coro: Any) -> None:
    t0 = time.perf_counter()
    if getattr(await coro, "isError", False):
        raise RuntimeError(f"{key}: the tool failed")
    s.add(key, time.perf_counter() - t0)


async def measure(emu: Any, service: McpToolRegistrationService, calls: int, label: str, s: Samples) -> None:
    auth, turn = emu.authorization(), make_turn(agent_id_for(1), "user-1")
    token = emu.issuer.mint(PLATFORM_AUDIENCE, app_id="bench", user_id="user-1")
    url = f"{emu.base_url}/agents/servers/notes_1/"
    seed = {t.name: t for t in await service.get_mcp_tools(auth, "AGENTIC", turn)}["list_notes"]
    connection: Any = {
        "transport": "streamable_http",
        "url": url,
        "headers": {"Authorization": f"Bearer {token}"},
    }
    default = {t.name: t for t in await MultiServerMCPClient({"notes_1": connection}).get_tools()}[
        "list_notes"
    ]
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
            await timed(s, f"raw_{label}", session.call_tool("list_notes", {}))
            for name, tool in (("ours", ours), ("seed", seed), ("default", default)):
                await timed(s, f"{name}_{label}", tool.ainvoke({}))


async def main() -> None:
    args = start("Tool calls (targets 3 and 15)", calls=40)
    s = Samples()
    with emulator_process(latency_ms=20) as emu:
        cfg = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
        async with McpToolRegistrationService(configuration=cfg) as service:
            await measure(emu, service, args.calls, "20ms", s)
            for route in ROUTES:
                emu.control("DELETE", f"/faults/{route}")
            await measure(emu, service, args.calls, "0ms", s)
    print(f"{args.calls} calls per variant, interleaved; medians")
    rows = [
        [label, ms(s.med(f"raw_{label}")), ms(s.med(f"ours_{label}")), f"{s.med(f'ours_{label}') / s.med(f'raw_{label}'):.2f}",
         ms(s.med(f"seed_{label}")), ms(s.med(f"default_{label}")), f"{s.med(f'default_{label}') / s.med(f'ours_{label}'):.2f}"]
        for label in ("20ms", "0ms")
    ]  # fmt: skip
    table(rows, ["added latency", "raw call_tool", "ours (per-turn tools)", "ours / raw",
                 "ours seed form (add_tool_servers_to_agent)", "adapters default (session per call)", "default / ours"])  # fmt: skip
    checks(
        [
            check("3", "ours / raw call_tool (20 ms)", s.med("ours_20ms") / s.med("raw_20ms"), 1.3),
            check("15", "seed form / raw call_tool (20 ms)", s.med("seed_20ms") / s.med("raw_20ms"), 1.3),
        ]
    )


if __name__ == "__main__":
    asyncio.run(main())
