"""Targets 1, 2 and 15: registration flat in the number of servers, warm turns, against Microsoft and the floor;
and (issue 19) what the telemetry hooks cost it.

Registration = discovery + tokens + connecting the servers + listing their tools. LangChain:
``add_tool_servers_to_agent``; OpenAI and Microsoft 2.0.0 (own process and venv, same emulator):
``add_tool_servers_to_agent`` + ``MCPUtil.get_all_function_tools`` ("add+list"); the floor: raw aiohttp,
``initialize``, ``notifications/initialized`` and ``tools/list`` per server, concurrently. Cold = a new user, warm =
the same user's next turn. Telemetry modes (LangChain, 8 servers): ``absent`` (no ``[otel]`` extra), ``noop`` (no
provider), ``on`` (SDK providers in memory). All interleaved round by round; medians.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import json
import time
from collections.abc import Iterator
from typing import Any

import aiohttp
from _common import (
    SERVER_COUNTS,
    Samples,
    agent_id_for,
    check,
    checks,
    emulator_process,
    make_turn,
    ms,
    ms_worker,
    proc_cpu,
    start,
    table,
)
from agents import Agent, RunContextWrapper
from agents.mcp import MCPUtil
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import agents_a365.tooling._telemetry as _telemetry
from agents_a365.emulator import PLATFORM_AUDIENCE
from agents_a365.tooling import ToolingConfiguration, configure_telemetry
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService as LangChainService
from agents_a365.tooling.extensions.openai import McpToolRegistrationService as OpenAIService

_users = itertools.count()
_MCP = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def new_user() -> str:
    return f"user-{next(_users)}"


async def timed(s: Samples, key: str, call: Any, pid: int | None = None) -> Any:
    """``call()`` after a ``gc.collect()`` (no full collection inside a measurement): its wall time under
    ``key``, this process's CPU under ``key_cpu`` (and process ``pid``'s under ``key_emu``)."""
    gc.collect()
    e0, t0, c0 = proc_cpu(pid) if pid else None, time.perf_counter(), time.process_time()
    result = await call()
    s.add(key, time.perf_counter() - t0)
    s.add(f"{key}_cpu", time.process_time() - c0)
    if e0 is not None:
        s.add(f"{key}_emu", (proc_cpu(pid) or e0) - e0)
    return result


async def lc_register(service: LangChainService, auth: Any, n: int, user: str) -> Any:
    model = GenericFakeChatModel(messages=iter([]))
    turn = make_turn(agent_id_for(n), user)
    return await service.add_tool_servers_to_agent(
        auth, "AGENTIC", turn, agent_options={"model": model, "tools": []}
    )


async def oa_register(service: OpenAIService, auth: Any, n: int, user: str) -> Any:
    template = Agent(name="bench", instructions="bench", model="gpt-4o")
    agent = await service.add_tool_servers_to_agent(
        template, auth, "AGENTIC", make_turn(agent_id_for(n), user)
    )
    # Server-prefixed names: every notes server has the same tools (Microsoft's clone drops mcp_config).
    context = RunContextWrapper(context=None)
    tools = await MCPUtil.get_all_function_tools(
        agent.mcp_servers, False, context, agent, include_server_in_tool_names=True
    )
    return agent, tools


async def floor_listing(session: aiohttp.ClientSession, base_url: str, token: str, n: int) -> int:
    """The floor: list ``notes_1..notes_n`` concurrently; the number of tools."""

    async def rpc(url: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[Any, str | None]:
        async with session.post(url, data=json.dumps(body), headers=headers) as response:
            response.raise_for_status()
            raw = await response.read()
            if "id" not in body:
                return None, None
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                raw = next(
                    line[5:] for line in raw.decode().splitlines() if line.startswith("data:")
                ).encode()
            return json.loads(raw)["result"], response.headers.get("mcp-session-id")

    async def one(url: str) -> int:
        headers = {**_MCP, "authorization": f"Bearer {token}"}
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "floor", "version": "0"},
        }
        result, session_id = await rpc(
            url, headers, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
        )
        headers["mcp-protocol-version"] = result["protocolVersion"]
        headers |= {"mcp-session-id": session_id} if session_id else {}
        await rpc(url, headers, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        return len((await rpc(url, headers, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))[0]["tools"])

    return sum(await asyncio.gather(*(one(f"{base_url}/agents/servers/notes_{i}/") for i in range(1, n + 1))))


@contextlib.contextmanager
def otel_mode(mode: str) -> Iterator[None]:
    """``absent``: the hooks' module globals ``None``, as the ``ImportError`` branch leaves them; ``noop``: no
    provider configured; ``on``: SDK providers recording in memory."""
    saved, tracer, meter = (
        (_telemetry._trace, _telemetry._metrics),
        TracerProvider(),
        MeterProvider(metric_readers=[InMemoryMetricReader()]),
    )
    tracer.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    if mode == "absent":
        _telemetry._trace = _telemetry._metrics = None  # type: ignore[assignment]
    configure_telemetry(**({"tracer_provider": tracer, "meter_provider": meter} if mode == "on" else {}))
    try:
        yield
    finally:
        _telemetry._trace, _telemetry._metrics = saved
        configure_telemetry()
        tracer.shutdown()
        meter.shutdown()


async def main() -> None:
    args = start("Registration (targets 1, 2 and 15; issue 19)", rounds=7, latency_ms=20.0)
    s, tools = Samples(), {}
    with emulator_process(latency_ms=args.latency_ms) as emu:
        print(f"emulator {emu.base_url} (own process), {args.latency_ms:g} ms added per gateway/MCP response")
        config = {"mcp_platform_endpoint": emu.base_url, "use_tooling_manifest": False}
        auth, pid = emu.authorization(), emu.process.pid
        token = emu.issuer.mint(PLATFORM_AUDIENCE, app_id="bench", user_id="user-plain")
        async with (
            LangChainService(configuration=ToolingConfiguration(**config)) as lc,
            OpenAIService(configuration=ToolingConfiguration(**config)) as oa,
            ms_worker(emu) as msw,
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(keepalive_timeout=4)) as raw,
        ):

            async def openai(s: Samples, key: str, n: int, user: str) -> Any:
                agent, listed = await timed(s, key, lambda: oa_register(oa, auth, n, user))
                await oa.close_tool_servers(agent)
                return listed

            async def variants(n: int, s: Samples) -> None:
                user = new_user()
                agent = await timed(s, f"lc_cold_{n}", lambda: lc_register(lc, auth, n, user), pid)
                tools["langchain"] = (
                    len(agent.nodes["tools"].bound.tools_by_name) if "tools" in agent.nodes else 0
                )
                await timed(s, f"lc_warm_{n}", lambda: lc_register(lc, auth, n, user))
                user = new_user()
                tools["openai"] = len(await openai(s, f"oa_cold_{n}", n, user))
                await openai(s, f"oa_warm_{n}", n, user)
                r = await msw("register", agent_id=agent_id_for(n), user=new_user())
                s.add(f"ms_{n}", r["total"])
                tools["microsoft"] = r["tools"]
                tools["floor"] = await timed(
                    s, f"floor_{n}", lambda: floor_listing(raw, emu.base_url, token, n)
                )

            for _ in range(2):  # warm-up (imports, first connections), not measured
                await variants(1, Samples())
            for _ in range(args.rounds):
                for n in SERVER_COUNTS:
                    await variants(n, s)
                for mode in ("absent", "noop", "on"):  # issue 19: the telemetry hooks
                    with otel_mode(mode):
                        await timed(s, f"otel_{mode}", lambda: lc_register(lc, auth, 8, new_user()))
    listed = ", ".join(f"{side} {count}" for side, count in tools.items())
    print(f"rounds: {args.rounds} (medians); tools listed at {SERVER_COUNTS[-1]} servers: {listed}\n")
    table(
        [
            [n, ms(s.med(f"lc_cold_{n}")), ms(s.med(f"lc_cold_{n}_cpu") / n), ms(s.med(f"lc_cold_{n}_emu") / n),
             ms(s.med(f"lc_warm_{n}")), ms(s.med(f"oa_cold_{n}")), ms(s.med(f"oa_warm_{n}")), ms(s.med(f"floor_{n}")),
             ms(s.med(f"ms_{n}"))]
            for n in SERVER_COUNTS
        ],
        ["servers", "langchain cold", "our CPU / server", "emulator CPU / server", "langchain warm",
         "openai cold add+list", "openai warm add+list", "floor (raw listing)", "microsoft add+list"],
    )  # fmt: skip

    def r(a: str, b: str) -> float:
        return s.med(a) / s.med(b)

    def added(side: str) -> float:  # the time added from 1 to 16 servers, against the floor's
        return (s.med(f"{side}_cold_16") - s.med(f"{side}_cold_1")) / (s.med("floor_16") - s.med("floor_1"))

    checks(
        [
            check("1", "langchain cold: 8 servers / 1 server", r("lc_cold_8", "lc_cold_1"), 1.3),
            check("1", "openai cold add+list: 8 servers / 1 server", r("oa_cold_8", "oa_cold_1"), 1.3),
            check("15", "langchain cold: 16 servers / 1 server", r("lc_cold_16", "lc_cold_1"), 1.3),
            check("15", "openai cold add+list: 16 servers / 1 server", r("oa_cold_16", "oa_cold_1"), 1.3),
            check("15", "floor (raw aiohttp listing): 16 servers / 1 server", r("floor_16", "floor_1")),
            check("15", "added time 1 -> 16 servers, langchain cold / floor", added("lc")),
            check("15", "added time 1 -> 16 servers, openai cold add+list / floor", added("oa")),
            check("1", "langchain cold / microsoft add+list @8", r("lc_cold_8", "ms_8"), 0.25),
            check("1", "openai cold add+list / microsoft add+list @8", r("oa_cold_8", "ms_8"), 0.25),
            check("19", "langchain cold @8: otel, no provider / otel absent", r("otel_noop", "otel_absent"), 1.1),
            check("19", "langchain cold @8: otel on (SDK) / otel absent", r("otel_on", "otel_absent")),
            *(check("2", f"{name} warm / cold @{n}", r(f"{side}_warm_{n}", f"{side}_cold_{n}"), 0.2)
              for side, name in (("lc", "langchain"), ("oa", "openai add+list")) for n in SERVER_COUNTS),
        ]
    )  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
