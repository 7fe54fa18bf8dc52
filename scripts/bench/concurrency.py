"""Issues 9 (target 5) and 15: 1,000 concurrent threat-protection sends.

    uv run python scripts/bench/concurrency.py [--sends 1000] [--rounds 3] [--against ../other-checkout ...]

Ours: ``McpToolServerConfigurationService.send_chat_history`` x N at once through its one pooled client
(httpx's API over aiohttp's pool, at most ``chat_history_concurrency`` sends in flight). Microsoft 2.0.0
(another process, same emulator): its ``send_chat_history`` x N at once (a new ``aiohttp.ClientSession``
per call). The floor (this process): raw aiohttp, one ``ClientSession`` with a connector limited to
``chat_history_concurrency`` connections, posting the same body with the same headers. TCP connections
are counted exactly in each process with the ``socket.connect`` audit hook, CPU with ``process_time`` (each
burst after a ``gc.collect()``, so that none pays for the garbage of the one before);
deliveries are counted by the emulator (``/_emulator/chat-messages``). 20 ms added per RTP response.

``--against`` (repeatable) adds a same-run A/B of our sends against another checkout (say, a worktree of
the previous release): each round, one burst in a fresh process of this checkout and of each other one
(its own ``uv run``, so its own packages), against the same emulator; their CPU per send and ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
from _common import (
    ROOT,
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
from agents_a365.tooling.headers import build_request_headers

BODY = b'{"conversationId":"conversation-1","messageId":"activity-1","userMessage":"hi","chatHistory":[]}'


async def floor_burst(
    url: str, body: bytes, headers: dict[str, str], n: int, limit: int
) -> tuple[float, float, int]:
    """The minimal keep-alive client: wall time, CPU time and successes of ``n`` concurrent posts."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=limit)) as session:

        async def one() -> bool:
            async with session.post(url, data=body, headers=headers) as response:
                await response.read()
                return response.status < 300

        gc.collect()  # every burst starts clean, not with the garbage of the one before
        t0, c0 = time.perf_counter(), time.process_time()
        results = await asyncio.gather(*(one() for _ in range(n)))
        return time.perf_counter() - t0, time.process_time() - c0, sum(results)


async def child_burst(url: str, n: int) -> None:
    """``--child``: a warmed-up burst of ``n`` sends to ``url`` and the floor's burst, in this process;
    prints the CPU per send (s) of each as JSON."""
    cfg = ToolingConfiguration(mcp_platform_endpoint=url, use_tooling_manifest=False)
    turn, options = make_turn(agent_id_for(1)), ToolOptions(orchestrator_name="bench")
    async with McpToolServerConfigurationService(cfg) as service:
        await asyncio.gather(*(service.send_chat_history(turn, [], options) for _ in range(100)))
        gc.collect()
        c0 = time.process_time()
        results = await asyncio.gather(*(service.send_chat_history(turn, [], options) for _ in range(n)))
        cpu = time.process_time() - c0
    headers = {**build_request_headers(turn, orchestrator_name="bench", correlation_id=True)}
    headers["Content-Type"] = "application/json"
    rtp = f"{url}/agents/real-time-threat-protection/chat-message"
    _, floor_cpu, floor_ok = await floor_burst(rtp, BODY, headers, n, cfg.chat_history_concurrency)
    ok = sum(r.succeeded for r in results) + floor_ok
    print(json.dumps({"ours": cpu / n, "floor": floor_cpu / n, "ok": ok}))


async def checkout_burst(tree: Path, url: str, n: int) -> dict[str, float]:
    """CPU per send (s) of ours and of the floor, one burst each in a fresh process of checkout ``tree``."""
    uv = os.environ.get("UV") or shutil.which("uv") or "uv"  # ``uv run`` names itself in UV
    command = [uv, "run", "--frozen", "--directory", str(tree), "python", __file__, "--child", url]
    out = await asyncio.to_thread(
        subprocess.run, [*command, "--sends", str(n)], capture_output=True, text=True
    )
    if out.returncode:
        sys.exit(f"{tree}: {out.stderr[-2000:]}")
    result = json.loads(out.stdout.splitlines()[-1])
    if result["ok"] != 2 * n:
        sys.exit(f"{tree}: {2 * n - result['ok']} sends failed")
    return {"ours": float(result["ours"]), "floor": float(result["floor"])}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sends", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, action="append", default=[], help="another checkout")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    if args.child:
        await child_burst(args.child, args.sends)
        return
    trees = {"this checkout": ROOT, **{str(p): p.absolute() for p in args.against}}
    per_tree: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    header(
        "Concurrent threat-protection sends (issue 9, target 5)", "uv run python scripts/bench/concurrency.py"
    )
    n = args.sends
    s = Samples()
    lost: dict[str, int] = {"ours": 0, "ms": 0, "floor": 0}
    with emulator_process(latency_ms=20, counts=(1,), notes_servers=1) as emu:
        cfg = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
        pool = cfg.max_connections
        turn = make_turn(agent_id_for(1))
        options = ToolOptions(orchestrator_name="bench")
        async with McpToolServerConfigurationService(cfg) as service, ms_worker(emu) as msw:
            await service.send_chat_history(turn, [], options)  # warm-up
            await msw.call("send", n=10)
            url = f"{emu.base_url}/agents/real-time-threat-protection/chat-message"

            headers = {**build_request_headers(turn, orchestrator_name="bench", correlation_id=True)}
            headers["Content-Type"] = "application/json"
            slots = cfg.chat_history_concurrency
            for _ in range(args.rounds):
                emu.control("DELETE", "/requests")
                count = tcp_connects()
                gc.collect()
                t0, c0 = time.perf_counter(), time.process_time()
                results = await asyncio.gather(
                    *(service.send_chat_history(turn, [], options) for _ in range(n))
                )
                s.add("ours", time.perf_counter() - t0)
                s.add("ours_cpu", time.process_time() - c0)
                s.add("ours_conn", count())
                ok = sum(r.succeeded for r in results)
                received = len(emu.control("GET", "/chat-messages"))
                lost["ours"] += n - min(ok, received)
                s.add("ours_ok", ok)

                emu.control("DELETE", "/requests")
                r = await msw.call("send", n=n)
                s.add("ms", r["elapsed"])
                s.add("ms_cpu", r["cpu"])
                s.add("ms_conn", r["connections"])
                received = len(emu.control("GET", "/chat-messages"))
                lost["ms"] += n - min(r["succeeded"], received)
                s.add("ms_ok", r["succeeded"])

                emu.control("DELETE", "/requests")
                count = tcp_connects()
                wall, cpu, ok = await floor_burst(url, BODY, headers, n, slots)
                s.add("floor", wall)
                s.add("floor_cpu", cpu)
                s.add("floor_conn", count())
                s.add("floor_ok", ok)
                received = len(emu.control("GET", "/chat-messages"))
                lost["floor"] += n - min(ok, received)

                for name, tree in trees.items() if args.against else ():
                    emu.control("DELETE", "/requests")
                    per_tree[name].append(await checkout_burst(tree, emu.base_url, n))
    print(
        f"{n} concurrent sends x {args.rounds} rounds (interleaved), medians; "
        f"chat_history_concurrency {slots}, max_connections {pool}"
    )
    print()

    def row(label: str, key: str) -> list[str]:
        return [
            label,
            ms(s.med(key)),
            f"{n / s.med(key):.0f}/s",
            f"{s.med(key + '_cpu') * 1000 / n:.2f} ms",
            f"{s.med(key + '_ok'):.0f}",
            str(lost[key]),
            f"{max(s.values[key + '_conn'])}",
        ]

    table(
        [
            row("ours (one pooled client)", "ours"),
            row("floor (raw aiohttp, same bodies, same limit)", "floor"),
            row("Microsoft 2.0.0 (session per call)", "ms"),
        ],
        [
            "",
            "wall time",
            "throughput",
            "CPU per send",
            "succeeded (median)",
            "lost (all rounds)",
            "TCP connections (max)",
        ],
    )
    if args.against:
        print(f"Same run, a fresh process per checkout and round (medians of {args.rounds} rounds):")
        print()
        med = {
            name: {k: statistics.median(r[k] for r in runs) for k in ("ours", "floor")}
            for name, runs in per_tree.items()
        }
        this = med["this checkout"]["ours"]
        table(
            [
                [
                    name,
                    f"{m['ours'] * 1000:.3f} ms",
                    f"{m['floor'] * 1000:.3f} ms",
                    f"{statistics.median(r['ours'] / r['floor'] for r in per_tree[name]):.2f}",
                    f"{this / m['ours']:.2f}",
                ]
                for name, m in med.items()
            ],
            ["checkout", "ours: CPU per send", "floor: CPU per send", "ours / floor", "this / checkout"],
        )
    conn = max(s.values["ours_conn"])
    cpu_ratio = s.med("ours_cpu") / s.med("floor_cpu")
    vs_ms = s.med("ms") / s.med("ours")
    table(
        [
            ["5", "ours: lost sends", str(lost["ours"]), "0", verdict(lost["ours"] == 0)],
            ["15", "ours: TCP connections opened", str(conn), f"<= {slots}", verdict(conn <= slots)],
            ["15", "throughput ours / Microsoft", f"{vs_ms:.2f}", ">= 1.5", verdict(vs_ms >= 1.5)],
            ["15", "throughput ours / floor", f"{s.med('floor') / s.med('ours'):.2f}", "(info)", ""],
            ["26", "CPU per send ours / floor", f"{cpu_ratio:.2f}", "<= 1.2", verdict(cpu_ratio <= 1.2)],
        ],
        ["target", "measure", "value", "target", ""],
    )


if __name__ == "__main__":
    asyncio.run(main())
