"""Replicas sharing the caches' second level: 4 processes of the hosted example behind a round-robin balancer,
users x turns spread over them, what reaches the platform counted; the same run with and without Redis, then
with Redis stopped for ``--outage`` seconds mid-run.

    uv run --frozen python scripts/bench/replicas.py [--users 1000] [--turns 3] [--replicas 4] [--outage 10]

The platform is the emulator process (``_common.emulator_process``: notes servers, 20 ms latency) behind a
counting proxy (``examples/replicas/balancer.py`` with one target): every token exchange (``/_emulator/token``:
the hosted example's development exchange), gateway request and ``tools/list`` passes it. Figures, per run (one
run is within every TTL): token exchanges per user and audience, gateway requests per user (one agent), and
``tools/list`` per user and server (each user lists with its own token: a user's definitions are never served to
another, so a distinct set of definitions is listed once per user; it is stored once). Latency: every turn, and
the warm turn (one more turn of each user, sent to the replica of its first turn: everything in memory there).
Redis comes from ``tests/support/redis_server.py`` (Debian's package).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, agent_id_for, emulator_process, ms
from _host_load import percentile

sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "examples" / "replicas")]
from balancer import balancer  # noqa: E402 (from the paths above)
from run import processes, serve, start_replicas  # noqa: E402

from agents_a365.emulator import channel_activity  # noqa: E402
from agents_a365.runtime import decode_token_payload  # noqa: E402
from support.redis_server import RedisServer, find_redis_server  # noqa: E402

SERVERS = 4
TURN_TIMEOUT = aiohttp.ClientTimeout(total=120)
FAILED = "An error occurred in the AgentApplication"


@dataclass
class Counts:
    exchanges: Counter[tuple[str, str]] = field(default_factory=Counter)  # user, scope
    gateway: Counter[str] = field(default_factory=Counter)  # user
    lists: Counter[tuple[str, str]] = field(default_factory=Counter)  # user, server

    def observe(self, method: str, path: str, headers: dict[str, str], body: bytes) -> None:
        if path.startswith("/_emulator/token"):
            data = json.loads(body)
            self.exchanges[data.get("user_id"), data.get("scope")] += 1
        elif path.endswith("/mcpServers"):
            self.gateway[_user(headers)] += 1
        elif "/agents/servers/" in path and b'"tools/list"' in body:
            self.lists[_user(headers), path.split("/")[3]] += 1

    def ratios(self) -> tuple[float, float, float]:
        return tuple(
            sum(c.values()) / len(c) if c else float("nan")
            for c in (self.exchanges, self.gateway, self.lists)
        )  # type: ignore[return-value]


def _user(headers: dict[str, str]) -> str:
    token = headers.get("Authorization", headers.get("authorization", "")).removeprefix("Bearer ")
    try:
        return str(decode_token_payload(token).get("oid"))
    except ValueError:
        return "?"


@dataclass
class Run:
    label: str
    counts: Counts
    latencies: list[float] = field(default_factory=list)
    warm: list[float] = field(default_factory=list)
    failed: int = 0
    wall: float = 0.0
    after: Counts | None = None  # the outage run: counts of the users who started after Redis returned


async def turn(http: aiohttp.ClientSession, url: str, platform: str, user: str, i: int) -> float | None:
    activity = channel_activity(
        f"What are my notes? ({i})",
        service_url=platform,
        conversation_id=f"c-{user}",
        user_id=user,
        agent_id=agent_id_for(SERVERS),
    )
    t0 = time.perf_counter()
    try:
        async with http.post(f"{url}/api/messages", json=activity, timeout=TURN_TIMEOUT) as response:
            await response.read()
            return time.perf_counter() - t0 if response.status < 300 else None
    except (aiohttp.ClientError, TimeoutError):
        return None


async def run(
    args: argparse.Namespace, label: str, emulator_url: str, redis: RedisServer | None, outage: float = 0.0
) -> Run:
    counts = Counts()
    result = Run(label, counts)
    logs = Path(tempfile.mkdtemp(prefix=f"replicas-{label}-"))
    env = (
        {
            "A365_CACHE_REDIS_URL": redis.url,
            "A365_CACHE_KEYS": "k1:" + base64.b64encode(os.urandom(32)).decode(),
        }
        if redis
        else {}
    )
    with processes() as started:
        async with serve(balancer([emulator_url], observe=counts.observe)) as platform:
            replicas = await start_replicas(started, args.replicas, platform, env, logs)
            async with (
                serve(balancer(replicas)) as front,
                aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http,
            ):
                gate = asyncio.Semaphore(args.concurrency)
                users = [f"{label}-user-{n}" for n in range(args.users)]
                late: set[str] = set()

                async def conversation(user: str) -> None:
                    async with gate:
                        for i in range(args.turns):
                            took = await turn(http, front, platform, user, i)
                            if took is None:
                                result.failed += 1
                            else:
                                result.latencies.append(took)

                async def stop_redis_mid_run() -> None:
                    assert redis is not None
                    await asyncio.sleep(result_wall_third)
                    await asyncio.to_thread(redis.stop)
                    await asyncio.sleep(outage)
                    await asyncio.to_thread(redis.start)
                    late.update(users[len(users) * 2 // 3 :])

                t0 = time.perf_counter()
                result_wall_third = args.users * args.turns / args.expected_rate / 3
                extra = [asyncio.create_task(stop_redis_mid_run())] if outage else []
                await asyncio.gather(*(conversation(u) for u in users), *extra)
                result.wall = time.perf_counter() - t0
                # The warm turn: each user once more, on the replica that took its first turn (round robin).
                for n, user in enumerate(users[: args.warm_users]):
                    took = await turn(http, replicas[(n * args.turns) % len(replicas)], platform, user, 99)
                    if took is not None:
                        result.warm.append(took)
        for log in logs.iterdir():  # noqa: ASYNC240 (the run is over)
            result.failed += log.read_text(errors="replace").count(FAILED)
    if outage:
        tail = Counts()
        for key, value in counts.exchanges.items():
            if key[0] in late:
                tail.exchanges[key] = value
        tail.gateway = Counter({k: v for k, v in counts.gateway.items() if k in late})
        tail.lists = Counter({k: v for k, v in counts.lists.items() if k[0] in late})
        result.after = tail
    return result


def report(runs: list[Run], args: argparse.Namespace) -> None:
    print(
        f"\n{args.replicas} replicas behind a round-robin balancer, {args.users} users x {args.turns} turns, {args.concurrency} users at once"
    )
    print(
        f"{'run':<22}{'exch/user+aud':>14}{'gw/user':>9}{'list/user+srv':>14}{'p50':>12}{'p99':>12}{'warm p50':>12}{'warm p99':>12}{'failed':>8}{'wall s':>8}"
    )
    for r in runs:
        e, g, li = r.counts.ratios()
        print(
            f"{r.label:<22}{e:>14.3f}{g:>9.3f}{li:>14.3f}{ms(percentile(r.latencies, 50))}{ms(percentile(r.latencies, 99))}{ms(percentile(r.warm, 50))}{ms(percentile(r.warm, 99))}{r.failed:>8}{r.wall:>8.1f}"
        )
        if r.after is not None:
            e, g, li = r.after.ratios()
            print(f"{'  users after return':<22}{e:>14.3f}{g:>9.3f}{li:>14.3f}")
    with_, without = runs[0], runs[1]
    for name, q in (("p50", 50), ("p99", 99)):
        print(
            f"warm {name} with / without the store: {percentile(with_.warm, q) / percentile(without.warm, q):.2f}"
        )
    print(
        f"all-turn p50 with / without: {percentile(with_.latencies, 50) / percentile(without.latencies, 50):.2f}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--replicas", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--outage", type=float, default=10.0)
    parser.add_argument("--warm-users", type=int, default=200)
    parser.add_argument(
        "--expected-rate", type=float, default=60.0, help="turns/s, to place the outage mid-run"
    )
    args = parser.parse_args()
    executable, why = find_redis_server()
    if executable is None:
        sys.exit(f"no redis-server: {why}")
    redis = RedisServer(executable)
    redis.start()
    try:
        with emulator_process(notes_servers=SERVERS, counts=(SERVERS,)) as emulator:
            runs = [await run(args, "with the store", emulator.base_url, redis)]
            redis.flush()
            runs.append(await run(args, "without", emulator.base_url, None))
            if args.outage:
                redis.flush()
                runs.append(
                    await run(args, f"Redis off {args.outage:.0f} s", emulator.base_url, redis, args.outage)
                )
    finally:
        redis.stop()
    report(runs, args)


if __name__ == "__main__":
    asyncio.run(main())
