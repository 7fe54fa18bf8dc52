"""Targets 5, 15 and 26: 1,000 concurrent threat-protection sends; with ``--layers``, where a send's CPU goes.

Ours: ``send_chat_history`` x N at once through its one pooled client; Microsoft 2.0.0 (own process, same
emulator): a new ``aiohttp.ClientSession`` per call; the floor: raw aiohttp, one ``ClientSession`` limited to
``chat_history_concurrency`` connections, the same body and headers. Connections are counted with the
``socket.connect`` audit hook, CPU with ``process_time`` (each burst after a ``gc.collect()``), deliveries at the
emulator. 20 ms added per RTP response.

``--against`` (repeatable): each round, a burst in a fresh process of this checkout and of each other one (its
own ``uv run``), against the same emulator: CPU per send and ratios. ``--layers``: the same burst through each
layer (the floor; httpx's transport over aiohttp; ``request_bounded`` through httpx, as with ``http_client=``, and
on aiohttp's API; the send loop ``send_chat_history_request``; ours), median CPU per send.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import httpx
from _common import (
    ROOT,
    Samples,
    agent_id_for,
    check,
    checks,
    emulator_process,
    make_turn,
    median,
    ms,
    ms_worker,
    start,
    table,
    verdict,
)
from _ms import tcp_connects
from httpx_aiohttp import AiohttpTransport

from agents_a365.tooling import (
    McpToolServerConfigurationService,
    ToolingConfiguration,
    ToolOptions,
    shared_ssl_context,
)
from agents_a365.tooling._bounded_http import request_bounded
from agents_a365.tooling._rtp_send import send_chat_history_request
from agents_a365.tooling._telemetry_hooks import SendTelemetry
from agents_a365.tooling._transport import core_client
from agents_a365.tooling._turn import read_turn
from agents_a365.tooling.headers import build_request_headers

BODY = b'{"conversationId":"conversation-1","messageId":"activity-1","userMessage":"hi","chatHistory":[]}'
OPTIONS = ToolOptions(orchestrator_name="bench")
Send = Callable[[], Awaitable[Any]]


async def burst(send: Send, n: int) -> tuple[float, float, int]:
    """Wall time, CPU time and successes of ``n`` concurrent ``send()``, after a ``gc.collect()`` (every burst
    starts clean, not with the garbage of the one before)."""
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    results = await asyncio.gather(*(send() for _ in range(n)))
    return time.perf_counter() - t0, time.process_time() - c0, sum(map(bool, results))


def ours(service: McpToolServerConfigurationService, turn: Any) -> Send:
    async def send() -> bool:
        return (await service.send_chat_history(turn, [], OPTIONS)).succeeded

    return send


def raw_post(session: aiohttp.ClientSession, url: str, headers: dict[str, str]) -> Send:
    """The floor's send: the same body and headers, raw aiohttp."""

    async def post() -> bool:
        async with session.post(url, data=BODY, headers=headers) as response:
            await response.read()
            return response.status < 300

    return post


async def floor_burst(url: str, headers: dict[str, str], n: int, limit: int) -> tuple[float, float, int]:
    """The minimal keep-alive client (a new one, its connector limited to ``limit``): see :func:`burst`."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=limit)) as session:
        return await burst(raw_post(session, url, headers), n)


def floor_target(base_url: str, turn: Any) -> tuple[str, dict[str, str]]:
    headers = build_request_headers(turn, orchestrator_name="bench", correlation_id=True)
    headers["Content-Type"] = "application/json"
    return f"{base_url}/agents/real-time-threat-protection/chat-message", headers


async def child_burst(url: str, n: int) -> None:
    """``--child``: a warmed-up burst of ``n`` sends to ``url`` and the floor's, in this process; prints the CPU
    per send (s) of each as JSON."""
    cfg = ToolingConfiguration(mcp_platform_endpoint=url, use_tooling_manifest=False)
    turn = make_turn(agent_id_for(1))
    async with McpToolServerConfigurationService(cfg) as service:
        await burst(ours(service, turn), 100)
        _, cpu, ok = await burst(ours(service, turn), n)
    _, floor_cpu, floor_ok = await floor_burst(*floor_target(url, turn), n, cfg.chat_history_concurrency)
    print(json.dumps({"ours": cpu / n, "floor": floor_cpu / n, "ok": ok + floor_ok}))


async def checkout_burst(tree: Path, url: str, n: int) -> dict[str, float]:
    """CPU per send (s) of ours and of the floor, one burst each in a fresh process of checkout ``tree``."""
    uv = os.environ.get("UV") or shutil.which("uv") or "uv"  # ``uv run`` names itself in UV
    python = [uv, "run", "--frozen", "--directory", str(tree), "python"]
    command = [*python, __file__, f"--child={url}", f"--sends={n}"]
    out = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"{tree}: {out.stderr[-2000:]}")
    result = json.loads(out.stdout.splitlines()[-1])
    if result["ok"] != 2 * n:
        sys.exit(f"{tree}: {2 * n - result['ok']} sends failed")
    return {"ours": float(result["ours"]), "floor": float(result["floor"])}


async def layers(
    args: argparse.Namespace, service: McpToolServerConfigurationService, turn: Any, base_url: str
) -> None:
    """``--layers``: CPU per send of the same burst through each layer, rounds interleaved."""
    url, headers = floor_target(base_url, turn)
    slots, deadline, cap = service.configuration.chat_history_concurrency, 10.0, 8 * 1024
    limit, loop_slots = asyncio.Semaphore(slots), asyncio.Semaphore(slots)
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=slots), cookie_jar=aiohttp.DummyCookieJar()
    )
    through_httpx = core_client(verify=shared_ssl_context(), max_connections=slots, timeout=deadline)
    through_httpx.direct = None  # as with a client of the user's (http_client=)
    async with (
        AiohttpTransport(client=session) as transport,
        through_httpx,
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=slots)) as floor_session,
    ):

        async def through_transport() -> bool:
            async with limit, asyncio.timeout(deadline):
                timeouts: dict[str, Any] = {"timeout": {}}
                request = httpx.Request("POST", url, headers=headers, content=BODY, extensions=timeouts)
                response = await transport.handle_async_request(request)
                try:
                    async for _ in response.aiter_raw():
                        pass
                finally:
                    await response.aclose()
                return response.status_code < 300

        async def bounded(client: httpx.AsyncClient) -> bool:
            async with limit:
                response = await request_bounded(
                    client, "POST", url, headers=headers, content=BODY, timeout=deadline, max_bytes=cap
                )
                return response.is_success

        async def send_loop() -> bool:
            cfg, telemetry = service.configuration, SendTelemetry(read_turn(turn))
            sent = await send_chat_history_request(
                service.http_client, url, BODY, headers, cfg, loop_slots, telemetry
            )
            return sent.succeeded

        runs: dict[str, Send] = {
            "floor: raw aiohttp": raw_post(floor_session, url, headers),
            "httpx transport (handle_async_request)": through_transport,
            "request_bounded through httpx (http_client=)": lambda: bounded(through_httpx),
            "request_bounded (aiohttp's API)": lambda: bounded(service.http_client),
            "send loop (send_chat_history_request)": send_loop,
            "ours (service.send_chat_history)": ours(service, turn),
        }
        for run in runs.values():  # warm-up: connections open, code paths loaded
            await asyncio.gather(*(run() for _ in range(100)))
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, run in runs.items():
                _, used, ok = await burst(run, args.sends)
                assert ok == args.sends, f"{name}: {args.sends - ok} sends failed"
                cpu[name].append(used / args.sends)
    print(f"{args.sends} concurrent sends x {args.rounds} rounds (interleaved), {slots} in flight; medians\n")
    floor_cpu = median(cpu["floor: raw aiohttp"])
    rows = [[name, f"{median(v) * 1000:.3f} ms", f"{median(v) / floor_cpu:.2f}"] for name, v in cpu.items()]
    table(rows, ["layer", "CPU per send", "/ floor"])


async def main() -> None:
    title = "Concurrent threat-protection sends (targets 5, 15, 26)"
    args = start(title, sends=1000, rounds=3, against=[], child=None, layers=False)
    if args.child:
        return await child_burst(args.child, args.sends)
    trees = {"this checkout": ROOT, **{p: Path(p) for p in args.against}}
    per_tree: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    n, s, lost = args.sends, Samples(), {"ours": 0, "ms": 0, "floor": 0}
    with emulator_process(latency_ms=20, counts=(1,), notes_servers=1) as emu:
        cfg = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
        turn, slots = make_turn(agent_id_for(1)), cfg.chat_history_concurrency
        baseline = contextlib.nullcontext() if args.layers else ms_worker(emu)
        async with McpToolServerConfigurationService(cfg) as service, baseline as msw:
            if args.layers:
                return await layers(args, service, turn, emu.base_url)
            await service.send_chat_history(turn, [], OPTIONS)  # warm-up
            await msw("send", n=10)

            async def side_burst(side: str) -> tuple[float, float, int, int]:
                """Wall time, CPU, successes and TCP connections opened (counted in the sending process)."""
                if side == "ms":
                    r = await msw("send", n=n)
                    return r["elapsed"], r["cpu"], r["succeeded"], r["connections"]
                count = tcp_connects()
                if side == "ours":
                    return (*await burst(ours(service, turn), n), count())
                return (*await floor_burst(*floor_target(emu.base_url, turn), n, slots), count())

            for _ in range(args.rounds):
                for side in ("ours", "ms", "floor"):
                    emu.control("DELETE", "/requests")
                    wall, cpu, ok, connections = await side_burst(side)
                    for key, value in (("", wall), ("_cpu", cpu), ("_ok", ok), ("_conn", connections)):
                        s.add(side + key, value)
                    lost[side] += n - min(ok, len(emu.control("GET", "/chat-messages")))
                for name, tree in trees.items() if args.against else ():
                    emu.control("DELETE", "/requests")
                    per_tree[name].append(await checkout_burst(tree, emu.base_url, n))
    limits = f"chat_history_concurrency {slots}, max_connections {cfg.max_connections}"
    print(f"{n} concurrent sends x {args.rounds} rounds (interleaved), medians; {limits}\n")
    sides = {
        "ours": "ours (one pooled client)",
        "floor": "floor (raw aiohttp, same bodies, same limit)",
        "ms": "Microsoft 2.0.0 (session per call)",
    }
    table(
        [[label, ms(s.med(k)), f"{n / s.med(k):.0f}/s", f"{s.med(k + '_cpu') * 1000 / n:.2f} ms", f"{s.med(k + '_ok'):.0f}",
          lost[k], max(s.values[k + "_conn"])] for k, label in sides.items()],
        ["", "wall time", "throughput", "CPU per send", "succeeded (median)", "lost (all rounds)", "TCP connections (max)"],
    )  # fmt: skip
    if args.against:
        print(f"Same run, a fresh process per checkout and round (medians of {args.rounds} rounds):\n")
        this, rows = median([r["ours"] for r in per_tree["this checkout"]]), []
        for name, runs in per_tree.items():
            mine, floor = (median([r[k] for r in runs]) for k in ("ours", "floor"))
            ratio = median([r["ours"] / r["floor"] for r in runs])
            mine_ms, floor_ms = f"{mine * 1000:.3f} ms", f"{floor * 1000:.3f} ms"
            rows.append([name, mine_ms, floor_ms, f"{ratio:.2f}", f"{this / mine:.2f}"])
        table(
            rows, ["checkout", "ours: CPU per send", "floor: CPU per send", "ours / floor", "this / checkout"]
        )
    connections = max(s.values["ours_conn"])
    checks(
        [
            ["5", "ours: lost sends", lost["ours"], "0", verdict(lost["ours"] == 0)],
            ["15", "ours: TCP connections opened", connections, f"<= {slots}", verdict(connections <= slots)],
            check("15", "throughput ours / Microsoft", s.med("ms") / s.med("ours"), 1.5, at_least=True),
            check("15", "throughput ours / floor", s.med("floor") / s.med("ours")),
            check("26", "CPU per send ours / floor", s.med("ours_cpu") / s.med("floor_cpu"), 1.2),
        ]
    )


if __name__ == "__main__":
    asyncio.run(main())
