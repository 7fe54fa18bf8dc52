"""Issue 9, target 5: 1,000 concurrent threat-protection sends.

    uv run python scripts/bench/concurrency.py [--sends 1000] [--rounds 3]

Ours: ``McpToolServerConfigurationService.send_chat_history`` x N at once through its one pooled
``httpx.AsyncClient`` (pool = ``max_connections``, default 100). Microsoft 2.0.0 (another process, same
emulator): its ``send_chat_history`` x N at once (a new ``aiohttp.ClientSession`` per call). TCP
connections are counted exactly in each process with the ``socket.connect`` audit hook; deliveries
are counted by the emulator (``/_emulator/chat-messages``). 20 ms added per RTP response.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time

from _common import (
    Samples,
    agent_id_for,
    emulator_process,
    header,
    make_turn,
    ms,
    ms_worker,
    table,
    tcp_connects,
    verdict,
)

from agents_a365.tooling import McpToolServerConfigurationService, ToolingConfiguration, ToolOptions


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sends", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    header(
        "Concurrent threat-protection sends (issue 9, target 5)", "uv run python scripts/bench/concurrency.py"
    )
    n = args.sends
    s = Samples()
    lost: dict[str, int] = {"ours": 0, "ms": 0}
    with emulator_process(latency_ms=20, counts=(1,), notes_servers=1) as emu:
        cfg = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
        pool = cfg.max_connections
        turn = make_turn(agent_id_for(1))
        options = ToolOptions(orchestrator_name="bench")
        async with McpToolServerConfigurationService(cfg) as service, ms_worker(emu) as msw:
            await service.send_chat_history(turn, [], options)  # warm-up
            await msw.call("send", n=10)
            for _ in range(args.rounds):
                emu.control("DELETE", "/requests")
                count = tcp_connects()
                t0 = time.perf_counter()
                results = await asyncio.gather(
                    *(service.send_chat_history(turn, [], options) for _ in range(n))
                )
                s.add("ours", time.perf_counter() - t0)
                s.add("ours_conn", count())
                ok = sum(r.succeeded for r in results)
                received = len(emu.control("GET", "/chat-messages"))
                lost["ours"] += n - min(ok, received)
                s.add("ours_ok", ok)

                emu.control("DELETE", "/requests")
                r = await msw.call("send", n=n)
                s.add("ms", r["elapsed"])
                s.add("ms_conn", r["connections"])
                received = len(emu.control("GET", "/chat-messages"))
                lost["ms"] += n - min(r["succeeded"], received)
                s.add("ms_ok", r["succeeded"])
    print(f"{n} concurrent sends x {args.rounds} rounds (interleaved), medians; pool size {pool}")
    print()
    table(
        [
            [
                "ours (pooled client)",
                ms(s.med("ours")),
                f"{n / s.med('ours'):.0f}/s",
                f"{s.med('ours_ok'):.0f}",
                str(lost["ours"]),
                f"{max(s.values['ours_conn'])}",
            ],
            [
                "Microsoft 2.0.0 (session per call)",
                ms(s.med("ms")),
                f"{n / s.med('ms'):.0f}/s",
                f"{s.med('ms_ok'):.0f}",
                str(lost["ms"]),
                f"{max(s.values['ms_conn'])}",
            ],
        ],
        ["", "wall time", "throughput", "succeeded (median)", "lost (all rounds)", "TCP connections (max)"],
    )
    conn = max(s.values["ours_conn"])
    table(
        [
            ["5", "ours: lost sends", str(lost["ours"]), "0", verdict(lost["ours"] == 0)],
            ["5", "ours: TCP connections opened", str(conn), f"<= {pool}", verdict(conn <= pool)],
            ["5", "throughput ours / Microsoft", f"{s.med('ms') / s.med('ours'):.2f}", "(info)", ""],
        ],
        ["target", "measure", "value", "target", ""],
    )


if __name__ == "__main__":
    asyncio.run(main())
