"""Replicas sharing the caches' second level (issue 40): processes of the hosted example behind a round-robin
balancer; the same run with the store, without, then with Redis stopped for ``--outage`` s mid-run.

Counted at the emulator (its default agent, 20 ms per platform request; ``GET /_emulator/counts``): token
exchanges per user and audience, gateway requests per agent and user, ``tools/list`` per user and server
(``list/user+srv``; ``list/set`` is per distinct set of definitions); warm p50 / p99 over ``--warm-users`` users
(a turn, then the timed one on the same replica); with the outage (once a third of the users are done): failed
turns and the figures of the users who started after Redis returned. ``--store-timeout``: the replicas'
``A365_CACHE_STORE_TIMEOUT`` (s). Redis: ``tests/support/redis_server.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import functools
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict, astuple, dataclass, field
from pathlib import Path
from typing import Any

import _forkserver as forkserver
import aiohttp
from _common import ROOT, EmulatorProcess, emulator_process, ms, start, table
from _host_load import percentile, post_turn

sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "examples" / "replicas")]
from balancer import balancer  # noqa: E402 (from the paths above)
from run import processes, serve, start_replicas  # noqa: E402

from agents_a365.emulator import channel_activity  # noqa: E402
from support.installs import ensure_redis_server  # noqa: E402
from support.redis_server import RedisServer  # noqa: E402

SERVERS = 2  # the emulator's default agent: mail and calendar
TURN_TIMEOUT = aiohttp.ClientTimeout(total=120)
SPAWN = functools.partial(forkserver.popen, preload=forkserver.HOSTED)  # the emulator's and the replicas'
FAILED = "An error occurred in the AgentApplication"  # the hosted example's reply to a failed turn


@dataclass
class Figures:
    exchanges: float  # per user and audience
    gateway: float  # per agent and user
    lists: float  # per distinct set of definitions (per server): about the users, each listing their own
    lists_per_user: float  # per user and server: the figure


def figures(rows: list[dict[str, Any]], users: set[str] | None = None) -> Figures:
    """The run's figures from the emulator's counts (of ``users`` only, when given)."""
    counts: defaultdict[str, Counter[Any]] = defaultdict(Counter)
    for row in rows:
        user, n, route = row["user"], row["count"], row["route"]
        if users is not None and user not in users:
            continue
        if route == "token":
            counts["exchanges"][user, row["method"]] += n
        elif route == "gateway":
            counts["gateway"][user] += n
        elif route == "mcp" and row["method"] == "tools/list":
            counts["lists"][row["server"]] += n
            counts["lists_per_user"][user, row["server"]] += n

    def per(name: str, by: int | None = None) -> float:
        total, by = sum(counts[name].values()), by or len(counts[name])
        return total / by if by else float("nan")

    return Figures(per("exchanges"), per("gateway"), per("lists", SERVERS), per("lists_per_user"))


@dataclass
class Run:
    label: str
    figures: Figures | None = None
    latencies: list[float] = field(default_factory=list)
    warm: list[float] = field(default_factory=list)
    failed: int = 0
    wall: float = 0.0
    after: Figures | None = None  # the outage run: the users who started after Redis returned


async def turn(http: aiohttp.ClientSession, url: str, platform: str, user: str, i: int) -> float | None:
    text = f"What are my notes? ({i})"
    activity = channel_activity(text, service_url=platform, conversation_id=f"c-{user}", user_id=user)
    return (await post_turn(http, f"{url}/api/messages", activity, TURN_TIMEOUT))[0]


async def run(
    args: argparse.Namespace, emu: EmulatorProcess, label: str, redis: RedisServer | None, outage: float = 0.0
) -> Run:
    result, platform = Run(label), emu.base_url
    await asyncio.to_thread(emu.control, "DELETE", "/requests")  # this run's counts only
    logs = Path(tempfile.mkdtemp(prefix="replicas-"))
    keys = "k1:" + base64.b64encode(os.urandom(32)).decode()
    store = {"A365_CACHE_KEYS": keys, "A365_CACHE_STORE_TIMEOUT": str(args.store_timeout)}
    env = {"A365_CACHE_REDIS_URL": redis.url, **store} if redis is not None else {}
    users = [f"user-{n}" for n in range(args.users)]
    late: set[str] = set()  # users whose first turn began after Redis returned
    with processes() as started:
        replicas = await start_replicas(started, args.replicas, platform, env, logs, SPAWN)
        async with (
            serve(balancer(replicas)) as front,
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http,
        ):
            gate = asyncio.Semaphore(args.concurrency)
            third, back = asyncio.Event(), asyncio.Event()
            done = 0

            async def conversation(user: str) -> None:
                nonlocal done
                async with gate:
                    if back.is_set():
                        late.add(user)
                    for i in range(args.turns):
                        took = await turn(http, front, platform, user, i)
                        if took is None:
                            result.failed += 1
                        else:
                            result.latencies.append(took)
                done += 1
                if done >= len(users) // 3:
                    third.set()

            async def stop_redis_mid_run() -> None:
                assert redis is not None
                await third.wait()
                await asyncio.to_thread(redis.stop)
                await asyncio.sleep(outage)
                await asyncio.to_thread(redis.start)
                back.set()

            t0 = time.perf_counter()
            extra = [asyncio.create_task(stop_redis_mid_run())] if outage else []
            await asyncio.gather(*(conversation(u) for u in users), *extra)
            result.wall = time.perf_counter() - t0
            for n, user in enumerate(f"warm-{n}" for n in range(args.warm_users)):
                replica = replicas[n % len(replicas)]
                await turn(http, replica, platform, user, 0)  # its first turn there: tokens, servers, tools
                took = await turn(http, replica, platform, user, 1)
                if took is not None:
                    result.warm.append(took)
            async with http.get(f"{platform}/_emulator/counts") as response:
                rows = [r for r in await response.json() if not str(r["user"]).startswith("warm-")]
    for log in logs.iterdir():  # noqa: ASYNC240 (the run is over)
        result.failed += log.read_text(errors="replace").count(FAILED)
    result.figures = figures(rows)
    if outage:
        result.after = figures(rows, late)
    return result


def report(runs: list[Run], args: argparse.Namespace) -> None:
    print(
        f"\n{args.replicas} replicas behind a round-robin balancer, {args.users} users x {args.turns} turns, "
        f"{args.concurrency} users at once, {SERVERS} MCP servers, 2 audiences (one tenant's agent)\n"
    )
    rows = []
    for r in runs:
        times = [ms(percentile(t, q)) for t, q in ((r.latencies, 50), (r.latencies, 99), (r.warm, 50))]
        for label, f, tail in (
            (r.label, r.figures, [*times, r.failed, f"{r.wall:.1f}"]),
            ("  users after return", r.after, [""] * 5),
        ):
            if f is not None:
                rows.append([label, *(f"{v:.3f}" for v in astuple(f)), *tail])
    head = ["run", "exch/user+aud", "gw/agent+user", "list/set", "list/user+srv", "p50", "p99", "warm p50"]
    table(rows, [*head, "failed", "wall s"])
    out: dict[str, Any] = {"runs": [asdict(r) | {"latencies": None} for r in runs]}
    for name, q in (("p50", 50), ("p99", 99)):
        out[f"warm_{name}_ratio"] = ratio = percentile(runs[0].warm, q) / percentile(runs[1].warm, q)
        print(f"warm {name} with the store / without: {ratio:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


async def main() -> None:
    args = start(
        "Replicas sharing one cache (issue 40)", users=1000, turns=3, replicas=4, concurrency=32, outage=10.0,
        warm_users=100, store_timeout=0.05, json=None,
        helps={"outage": "seconds; 0: no outage run", "store_timeout": "A365_CACHE_STORE_TIMEOUT, s",
               "json": "write the figures here"},
    )  # fmt: skip
    executable, why = ensure_redis_server()
    if executable is None:
        sys.exit(f"no redis-server: {why}")
    redis = RedisServer(executable)
    redis.start()
    try:
        with emulator_process(notes_servers=0) as emu:  # its default agent, 20 ms on each platform request
            runs = [await run(args, emu, "with the store", redis)]
            redis.flush()
            runs.append(await run(args, emu, "without", None))
            if args.outage:
                redis.flush()
                runs.append(await run(args, emu, f"Redis off {args.outage:g} s", redis, args.outage))
    finally:
        redis.stop()
    report(runs, args)


if __name__ == "__main__":
    asyncio.run(main())
