"""The load generator of the host benchmark (runs in ``host.py``'s process, never in a host's).

Each conversation is one user posting Activities to ``/api/messages`` one after the other (the next
when the previous turn's response came back: the hosted turn runs before hosting-core answers), all
conversations at once. A phase's result: turns, errors, wall time, latencies, the host's CPU over the
phase, and its peak RSS and connections to the emulator (sampled every 100 ms).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import statistics
from dataclasses import dataclass, field

import aiohttp
from _common import agent_id_for
from _host_procs import Host, now

from agents_a365.emulator import channel_activity

TURN_TIMEOUT = aiohttp.ClientTimeout(total=60)
"""A turn that takes longer is counted as an error (the run goes on)."""


@dataclass
class Phase:
    turns: int = 0
    errors: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    latencies: list[float] = field(default_factory=list)
    rss_mib: float = 0.0
    connections: int = 0
    first_error: str = ""

    @property
    def cpu_per_turn(self) -> float:
        return self.cpu / self.turns if self.turns else float("nan")

    @property
    def throughput(self) -> float:
        return self.turns / self.wall if self.wall else float("nan")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


async def run_phase(
    http: aiohttp.ClientSession,
    host: Host,
    service_url: str,
    emulator_port: int,
    *,
    users: list[str],
    servers: int,
    turns_each: int,
    concurrency: int | None = None,
    think: float = 0.0,
) -> Phase:
    """``turns_each`` turns for every user in ``users`` (user ``u`` talks in conversation ``c-u``), at
    most ``concurrency`` users at once (all by default), each user waiting ``think`` seconds (±50 %,
    seeded) before each turn: with think time the hosts are not saturated and latency is the turn's own."""
    rng = random.Random(len(users) * 7919 + turns_each)
    phase = Phase()
    agent_id = agent_id_for(servers)
    gate = asyncio.Semaphore(concurrency or len(users))
    done = asyncio.Event()

    async def sample() -> None:
        while not done.is_set():
            with contextlib.suppress(OSError, ValueError):
                phase.rss_mib = max(phase.rss_mib, host.rss_mib())
                phase.connections = max(phase.connections, host.connections_to(emulator_port))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), 0.1)

    async def conversation(user: str) -> None:
        async with gate:
            for i in range(turns_each):
                if think:
                    await asyncio.sleep(think * rng.uniform(0.5, 1.5))
                activity = channel_activity(
                    f"What are my notes? ({i})",
                    service_url=service_url,
                    conversation_id=f"c-{user}",
                    user_id=user,
                    agent_id=agent_id,
                )
                t0 = now()
                try:
                    async with http.post(host.messages_url, json=activity, timeout=TURN_TIMEOUT) as response:
                        await response.read()
                        ok = response.status < 300
                        if not ok and not phase.first_error:
                            phase.first_error = f"HTTP {response.status}"
                except (aiohttp.ClientError, TimeoutError) as exc:
                    ok = False
                    phase.first_error = phase.first_error or f"{type(exc).__name__}: {exc}"
                if ok:
                    phase.latencies.append(now() - t0)
                    phase.turns += 1
                else:
                    phase.errors += 1

    sampler = asyncio.create_task(sample())
    c0, t0 = host.cpu(), now()
    await asyncio.gather(*(conversation(u) for u in users))
    phase.wall, phase.cpu = now() - t0, host.cpu() - c0
    done.set()
    await sampler
    return phase


def merge(phases: list[Phase]) -> Phase:
    """All latencies pooled; CPU and throughput from the sums (rounds of the same phase)."""
    merged = Phase()
    for p in phases:
        merged.turns += p.turns
        merged.errors += p.errors
        merged.wall += p.wall
        merged.cpu += p.cpu
        merged.latencies += p.latencies
        merged.rss_mib = max(merged.rss_mib, p.rss_mib)
        merged.connections = max(merged.connections, p.connections)
        merged.first_error = merged.first_error or p.first_error
    return merged
