"""Issue 9, targets 1 and 2: registration flat in the number of servers, and warm turns.

    uv run python scripts/bench/registration.py [--rounds 7] [--latency-ms 20]

Registration = gateway discovery + tokens + connecting the MCP servers + listing their tools, i.e.
until the agent can call tools:

- LangChain extension: ``add_tool_servers_to_agent`` (its tools are listed inside the call; the agent is
  built with ``create_agent`` over a fake chat model).
- OpenAI extension: ``add_tool_servers_to_agent`` (connects the servers) + ``agent.get_mcp_tools()``
  (what ``Runner.run`` calls before the first model call: the SDK lists the servers one by one), closed
  afterwards outside the timing. Reported as ``add`` and ``add+list``.
- Microsoft 2.0.0 (another process, own venv, same emulator): the same two steps.
- Plain ``MultiServerMCPClient.get_tools()`` on connections with ready-made headers (no discovery,
  no tokens): the floor for listing N servers with langchain-mcp-adapters.

Cold = the first turn of a new user (a fresh user id every time: empty discovery/token caches);
warm = the same user's next turn. Every server is V1 (``notes_<i>``): one platform token each side;
tokens are minted in-process on both sides (emulator issuer), so exchanges cost no network.
All variants are interleaved round by round; medians of ``--rounds``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import logging
import time
from typing import Any

import aiohttp
from _common import (
    SERVER_COUNTS,
    Samples,
    agent_id_for,
    emulator_process,
    header,
    make_turn,
    median,
    ms,
    ms_worker,
    proc_cpu,
    table,
    verdict,
)
from _floor import floor_listing
from _otel_modes import MODES as OTEL_MODES
from _otel_modes import otel_mode
from agents import Agent, RunContextWrapper
from agents.mcp import MCPUtil
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_mcp_adapters.client import MultiServerMCPClient

from agents_a365.emulator import PLATFORM_AUDIENCE
from agents_a365.tooling import ToolingConfiguration
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService as LangChainService
from agents_a365.tooling.extensions.openai import McpToolRegistrationService as OpenAIService

_users = itertools.count()


def new_user() -> str:
    return f"user-{next(_users)}"


CPU: dict[
    str, float
] = {}  # this process's CPU seconds of the last measured call (ours only, not the emulator's)


EMULATOR_PID = 0  # the emulator process, whose CPU is measured around the LangChain registrations


async def lc_register(service: LangChainService, auth: Any, n: int, user: str) -> tuple[float, int]:
    model = GenericFakeChatModel(messages=iter([]))
    turn = make_turn(agent_id_for(n), user)
    gc.collect()  # a full collection must not land inside one side's measurement
    e0 = proc_cpu(EMULATOR_PID)
    t0, c0 = time.perf_counter(), time.process_time()
    agent = await service.add_tool_servers_to_agent(
        auth, "AGENTIC", turn, agent_options={"model": model, "tools": []}
    )
    elapsed = time.perf_counter() - t0
    CPU["lc"] = time.process_time() - c0
    e1 = proc_cpu(EMULATOR_PID)
    CPU["emu"] = e1 - e0 if e0 is not None and e1 is not None else float("nan")
    tools = agent.nodes["tools"].bound.tools_by_name if "tools" in agent.nodes else {}
    return elapsed, len(tools)


async def oa_register(service: OpenAIService, auth: Any, n: int, user: str) -> tuple[float, float, int]:
    template = Agent(name="bench", instructions="bench", model="gpt-4o")
    turn = make_turn(agent_id_for(n), user)
    gc.collect()  # a full collection must not land inside one side's measurement
    t0, c0 = time.perf_counter(), time.process_time()
    agent = await service.add_tool_servers_to_agent(template, auth, "AGENTIC", turn)
    t1 = time.perf_counter()
    # What Runner.run does before the first model call (servers listed one by one); server-prefixed
    # names because every notes server has the same tools (Microsoft's clone drops mcp_config).
    tools = await MCPUtil.get_all_function_tools(
        agent.mcp_servers, False, RunContextWrapper(context=None), agent, include_server_in_tool_names=True
    )
    t2 = time.perf_counter()
    CPU["oa"] = time.process_time() - c0
    await service.close_tool_servers(agent)
    return t1 - t0, t2 - t0, len(tools)


async def plain_get_tools(base_url: str, token: str, n: int) -> tuple[float, int]:
    connections: Any = {
        f"notes_{i}": {
            "transport": "streamable_http",
            "url": f"{base_url}/agents/servers/notes_{i}/",
            "headers": {"Authorization": f"Bearer {token}"},
        }
        for i in range(1, n + 1)
    }
    gc.collect()  # a full collection must not land inside one side's measurement
    t0 = time.perf_counter()
    tools = await MultiServerMCPClient(connections).get_tools()
    return time.perf_counter() - t0, len(tools)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    header(
        "Registration (issue 9, targets 1 and 2)",
        "uv run python scripts/bench/registration.py"
        + (f" --rounds {args.rounds}" if args.rounds != 7 else ""),
    )
    s = Samples()
    tool_counts: dict[str, int] = {}
    global EMULATOR_PID
    with emulator_process(latency_ms=args.latency_ms) as emu:
        EMULATOR_PID = emu.process.pid
        print(f"emulator {emu.base_url} (own process), {args.latency_ms:g} ms added per gateway/MCP response")
        cfg = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
        cfg2 = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
        auth = emu.authorization()
        platform_token = emu.issuer.mint(PLATFORM_AUDIENCE, app_id="bench", user_id="user-plain")
        async with (
            LangChainService(configuration=cfg) as lc,
            OpenAIService(configuration=cfg2) as oa,
            ms_worker(emu) as msw,
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(keepalive_timeout=4)) as raw,
        ):
            # Warm-up (imports, first connections), not measured.
            for n in (1, 2 if 2 in SERVER_COUNTS else 1):
                await lc_register(lc, auth, n, new_user())
                await oa_register(oa, auth, n, new_user())
                await msw.call("register", agent_id=agent_id_for(n), user=new_user())
                await plain_get_tools(emu.base_url, platform_token, n)
                await floor_listing(raw, emu.base_url, platform_token, n)
            for _ in range(args.rounds):
                for n in SERVER_COUNTS:
                    user = new_user()
                    t, k = await lc_register(lc, auth, n, user)
                    s.add(f"lc_cold_{n}", t)
                    s.add(f"lc_cpu_{n}", CPU["lc"])
                    s.add(f"emu_cpu_{n}", CPU["emu"])
                    tool_counts[f"lc_{n}"] = k
                    t, k = await lc_register(lc, auth, n, user)
                    s.add(f"lc_warm_{n}", t)

                    user = new_user()
                    add, total, k = await oa_register(oa, auth, n, user)
                    s.add(f"oa_cold_add_{n}", add)
                    s.add(f"oa_cold_{n}", total)
                    s.add(f"oa_cpu_{n}", CPU["oa"])
                    tool_counts[f"oa_{n}"] = k
                    add, total, k = await oa_register(oa, auth, n, user)
                    s.add(f"oa_warm_add_{n}", add)
                    s.add(f"oa_warm_{n}", total)

                    r = await msw.call("register", agent_id=agent_id_for(n), user=new_user())
                    s.add(f"ms_add_{n}", r["add"])
                    s.add(f"ms_{n}", r["total"])
                    tool_counts[f"ms_{n}"] = r["tools"]

                    t, k = await plain_get_tools(emu.base_url, platform_token, n)
                    s.add(f"plain_{n}", t)
                    tool_counts[f"plain_{n}"] = k

                    gc.collect()
                    t0, c0 = time.perf_counter(), time.process_time()
                    k = await floor_listing(raw, emu.base_url, platform_token, n)
                    s.add(f"floor_{n}", time.perf_counter() - t0)
                    s.add(f"floor_cpu_{n}", time.process_time() - c0)
                    tool_counts[f"floor_{n}"] = k

                for mode in OTEL_MODES:  # issue 19: the telemetry hooks, absent / no provider / on
                    with otel_mode(mode):
                        t, _ = await lc_register(lc, auth, 8, new_user())
                    s.add(f"otel_{mode}", t)

    print(
        f"rounds: {args.rounds} (medians); tools listed per run at 16 servers: "
        f"langchain {tool_counts['lc_16']}, openai {tool_counts['oa_16']}, microsoft {tool_counts['ms_16']}, "
        f"plain {tool_counts['plain_16']}"
    )
    print()
    rows = []
    for n in SERVER_COUNTS:
        rows.append(
            [
                str(n),
                ms(s.med(f"lc_cold_{n}")),
                ms(s.med(f"lc_cpu_{n}") / n),
                ms(s.med(f"emu_cpu_{n}") / n),
                ms(s.med(f"lc_warm_{n}")),
                ms(s.med(f"oa_cold_add_{n}")),
                ms(s.med(f"oa_cold_{n}")),
                ms(s.med(f"oa_cpu_{n}") / n),
                ms(s.med(f"oa_warm_{n}")),
                ms(s.med(f"ms_add_{n}")),
                ms(s.med(f"ms_{n}")),
                ms(s.med(f"plain_{n}")),
                ms(s.med(f"floor_{n}")),
                ms(s.med(f"floor_cpu_{n}") / n),
            ]
        )
    table(
        rows,
        [
            "servers",
            "langchain cold",
            "our CPU / server",
            "emulator CPU / server",
            "langchain warm",
            "openai cold add",
            "openai cold add+list",
            "our CPU / server",
            "openai warm add+list",
            "microsoft add",
            "microsoft add+list",
            "plain get_tools()",
            "floor (raw listing)",
            "floor CPU / server",
        ],
    )

    def ratio(a: str, b: str) -> float:
        return s.med(a) / s.med(b)

    checks = [
        ("1", "langchain cold: 8 servers / 1 server", ratio("lc_cold_8", "lc_cold_1"), 1.3),
        ("1", "openai cold add: 8 servers / 1 server", ratio("oa_cold_add_8", "oa_cold_add_1"), 1.3),
        ("1", "openai cold add+list: 8 servers / 1 server", ratio("oa_cold_8", "oa_cold_1"), 1.3),
        ("15", "langchain cold: 16 servers / 1 server", ratio("lc_cold_16", "lc_cold_1"), 1.3),
        ("15", "openai cold add+list: 16 servers / 1 server", ratio("oa_cold_16", "oa_cold_1"), 1.3),
        ("15", "floor (raw aiohttp listing): 16 servers / 1 server", ratio("floor_16", "floor_1"), None),
        (
            "15",
            "added time 1 -> 16 servers, langchain cold / floor",
            (s.med("lc_cold_16") - s.med("lc_cold_1")) / (s.med("floor_16") - s.med("floor_1")),
            None,
        ),
        (
            "15",
            "added time 1 -> 16 servers, openai cold add+list / floor",
            (s.med("oa_cold_16") - s.med("oa_cold_1")) / (s.med("floor_16") - s.med("floor_1")),
            None,
        ),
        ("15", "langchain cold: 32 servers / 1 server", ratio("lc_cold_32", "lc_cold_1"), None),
        ("15", "openai cold add+list: 32 servers / 1 server", ratio("oa_cold_32", "oa_cold_1"), None),
        ("1", "langchain cold / microsoft add+list @8", ratio("lc_cold_8", "ms_8"), 0.25),
        ("1", "openai cold add+list / microsoft add+list @8", ratio("oa_cold_8", "ms_8"), 0.25),
        # Unequal work: our add also lists every server's tools (concurrently); Microsoft's add does
        # not, its tools are listed by the runner afterwards. The add+list row above compares like with like.
        (
            "1",
            "openai cold add (lists too) / microsoft add (no list) @8",
            ratio("oa_cold_add_8", "ms_add_8"),
            None,
        ),
        ("1", "langchain cold / plain get_tools() @8", ratio("lc_cold_8", "plain_8"), None),
        ("1", "plain get_tools(): 8 servers / 1 server", ratio("plain_8", "plain_1"), None),
        ("1", "microsoft add+list: 8 servers / 1 server", ratio("ms_8", "ms_1"), None),
    ]
    checks.append(
        ("19", "langchain cold @8: otel, no provider / otel absent", ratio("otel_noop", "otel_absent"), 1.1)
    )
    checks.append(
        ("19", "langchain cold @8: otel on (SDK) / otel absent", ratio("otel_on", "otel_absent"), None)
    )
    for n in SERVER_COUNTS:
        checks.append(("2", f"langchain warm / cold @{n}", ratio(f"lc_warm_{n}", f"lc_cold_{n}"), 0.2))
    for n in SERVER_COUNTS:
        checks.append(
            ("2", f"openai warm / cold (add+list) @{n}", ratio(f"oa_warm_{n}", f"oa_cold_{n}"), 0.2)
        )
    rows = [
        [
            target,
            what,
            f"{value:.2f}",
            f"<= {limit}" if limit else "(info)",
            verdict(value <= limit) if limit else "",
        ]
        for target, what, value, limit in checks
    ]
    table(rows, ["target", "ratio (same run)", "value", "target", ""])
    print(
        f"overall median of microsoft add+list per server: {median([s.med(f'ms_{n}') / n for n in SERVER_COUNTS]) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    asyncio.run(main())
