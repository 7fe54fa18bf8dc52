"""The load generator of the host benchmarks (in the bench's process): conversations posting Activities to a host,
a phase's figures, and the windows report around a disturbance (scripts/bench/README.md)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import statistics
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from _common import EmulatorProcess, agent_id_for
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
    records: list[tuple[float, float | None]] = field(default_factory=list)  # start, latency (None: failed)
    logged: list[float] = field(default_factory=list)  # when its log gained a failed turn (answered 2xx)

    @property
    def cpu_per_turn(self) -> float:
        return self.cpu / self.turns if self.turns else float("nan")

    @property
    def throughput(self) -> float:
        return self.turns / self.wall if self.wall else float("nan")


def percentile(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


async def post_turn(
    http: aiohttp.ClientSession,
    url: str,
    activity: dict[str, Any],
    timeout: aiohttp.ClientTimeout = TURN_TIMEOUT,
) -> tuple[float | None, str]:
    """One Activity posted to ``url``: the turn's latency (``None`` when not answered with HTTP 2xx) and why not."""
    t0 = now()
    try:
        async with http.post(url, json=activity, timeout=timeout) as response:
            await response.read()
            return (now() - t0, "") if response.status < 300 else (None, f"HTTP {response.status}")
    except (aiohttp.ClientError, TimeoutError) as exc:
        return None, f"{type(exc).__name__}: {exc}"


async def run_phase(
    http: aiohttp.ClientSession,
    host: Host,
    emu: EmulatorProcess,
    *,
    users: list[str],
    servers: int,
    turns_each: int = 1,
    concurrency: int | None = None,
    think: float = 0.0,
    until: float | None = None,
    timeout: aiohttp.ClientTimeout = TURN_TIMEOUT,
) -> Phase:
    """``turns_each`` turns for every user in ``users`` (user ``u`` talks in conversation ``c-u``), or as many as
    start before ``until`` (a :func:`now`), at most ``concurrency`` users at once (all by default), each user
    waiting ``think`` seconds (±50 %, seeded) before each turn: with think time the hosts are not saturated and
    latency is the turn's own."""
    rng = random.Random(len(users) * 7919 + turns_each)
    phase, gate, done = Phase(), asyncio.Semaphore(concurrency or len(users)), asyncio.Event()

    async def sample() -> None:
        for tick in itertools.count():
            slow = tick % 5 == 0 or done.is_set()  # every 0.5 s: a read of the TCP table costs ~10 ms of CPU
            with contextlib.suppress(OSError, ValueError):
                phase.rss_mib = max(phase.rss_mib, host.rss_mib())
                if slow:
                    phase.connections = max(phase.connections, host.sockets()[emu.port, "ESTABLISHED"])
            if slow:
                phase.logged += [now()] * (host.turn_errors() - logged_before - len(phase.logged))
            if done.is_set():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), 0.1)

    async def conversation(user: str) -> None:
        async with gate:
            for i in itertools.count() if until else range(turns_each):
                if think:
                    await asyncio.sleep(think * rng.uniform(0.5, 1.5))
                if until and now() >= until:
                    return
                text = f"What are my notes? ({i})"
                activity = channel_activity(
                    text, service_url=f"{emu.base_url}/", conversation_id=f"c-{user}", user_id=user,
                    agent_id=agent_id_for(servers),
                )  # fmt: skip
                started = now()
                latency, error = await post_turn(http, host.messages_url, activity, timeout)
                phase.records.append((started, latency))
                if latency is None:
                    phase.errors += 1
                    phase.first_error = phase.first_error or error
                    host.failed = True
                else:
                    phase.latencies.append(latency)
                    phase.turns += 1

    logged_before = host.turn_errors()
    sampler = asyncio.create_task(sample())
    c0, t0 = host.cpu(), now()
    await asyncio.gather(*(conversation(u) for u in users))
    phase.wall, phase.cpu = now() - t0, host.cpu() - c0
    done.set()
    await sampler
    return phase


def merge(phases: list[Phase]) -> Phase:
    """All latencies and records pooled; CPU and throughput from the sums (rounds of the same phase)."""
    merged = Phase()
    for p in phases:
        for name in ("turns", "errors", "wall", "cpu", "latencies", "records", "logged"):
            setattr(merged, name, getattr(merged, name) + getattr(p, name))
        merged.rss_mib, merged.connections = (
            max(merged.rss_mib, p.rss_mib),
            max(merged.connections, p.connections),
        )
        merged.first_error = merged.first_error or p.first_error
    return merged


@dataclass
class Window:
    """A window of a run, from ``start`` seconds after a disturbance began (negative: before), per side: turns
    started in it, those the load generator saw fail, and the failed turns the host logged in it."""

    start: float
    label: str  # before, during or after the disturbance
    turns: dict[str, int]
    failed: dict[str, int]
    logged: dict[str, int]

    def lost(self, side: str) -> int:
        """Its failed turns: those the load generator saw and those the host logged."""
        return self.failed[side] + self.logged[side]

    def rate(self, side: str) -> float:
        return self.lost(side) / self.turns[side] if self.turns[side] else 0.0


def windows(
    sides: dict[str, Phase], t0: float, before: float, during: float, after: float, width: float
) -> list[Window]:
    """The windows of ``width`` seconds over a run whose disturbance began at ``t0`` (a :func:`now`), lasted
    ``during`` seconds and had ``before`` seconds of turns before it and ``after`` seconds after it."""
    out, start = [], -before
    while start < during + after - 1e-9:
        stop = start + width
        label = "before" if stop <= 1e-9 else "during" if start < during - 1e-9 else "after"
        mine = {
            s: [lat is not None for at, lat in p.records if start <= at - t0 < stop] for s, p in sides.items()
        }
        logged = {s: sum(start <= at - t0 < stop for at in p.logged) for s, p in sides.items()}
        turns, failed = {s: len(m) for s, m in mine.items()}, {s: m.count(False) for s, m in mine.items()}
        out.append(Window(start, label, turns, failed, logged))
        start = stop
    return out


def windows_table(rows: list[Window], width: float) -> list[list[str]]:
    """Table rows of :func:`windows`: per side, failed (load generator + host log) / turns."""
    return [
        [f"{w.start:+g}..{w.start + width:+g} s", w.label]
        + [f"{w.failed[s]} + {w.logged[s]} / {w.turns[s]} ({w.rate(s):.1%})" for s in w.turns]
        for w in rows
    ]
