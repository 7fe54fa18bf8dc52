"""Issue 26: a busy agent host's turns, next to the floor and to Microsoft's SDK.

The emulator, one host process per side and orchestrator (``SIDES``) and this process, posting Activities for C
concurrent conversations. Sides: ours (the hosted example), the floor (no SDK, ``_host_floor.py``), ours + OTel
(OTLP to a collector on loopback; global providers, and this SDK's only), Microsoft 2.0.0 (OpenAI, its own venv).
A turn: typing, the scripted model calls one tool, the reply, the history to threat protection. Warm = a user's
later turns; cold = new users. CPU is the host's (``/proc``) over a phase per turn; RSS and connections are peaks.
Sides are interleaved round by round; targets print PASS/MISS, nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import itertools
import os
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from _common import BENCH_DIR, ROOT, EmulatorProcess, emulator_process, start
from _forkserver import FREEZE
from _host_load import Phase, merge, run_phase
from _host_procs import Host, otlp_collector, running, start_host
from _host_profile import profile
from _host_report import report

PROFILES: dict[str, dict[str, Any]] = {
    "quick": {
        "servers": 8, "conversations": 32, "warm_turns": 3, "rounds": 1, "growth_servers": "1,8,32",
        "growth_base": 8,
        "growth_turns": 12,  # 96 turns a phase: fewer and the 10 ms CPU ticks and GC decide the growth ratio
        "cold_servers": 16, "cold_users": 8, "cold_concurrency": 4, "ms_turns": 1, "sends_rounds": 1,
    },
    "full": {
        "servers": 8, "conversations": 200, "warm_turns": 4, "rounds": 3, "growth_servers": "1,8,32",
        "growth_base": 50, "growth_turns": 6,
        "cold_servers": 16, "cold_users": 24, "cold_concurrency": 4, "ms_turns": 2, "sends_rounds": 3,
    },
}  # fmt: skip
SIDES: dict[str, tuple[str, str | None]] = {
    # side: (the host's mode in _host_server.py / _ms.py host, its OTel scope or None). A host variant is one
    # more entry (and its mode in _host_server.py): every phase then runs it next to the others.
    "ours": ("ours", None),
    "floor": ("floor", None),
    "otel": ("ours", "global"),
    "otel-sdk": ("ours", "sdk"),
    "ms": ("ms", None),
}
_ids = itertools.count()


def new_users(n: int, tag: str) -> list[str]:
    batch = next(_ids)
    return [f"u{batch}-{tag}-{i}" for i in range(n)]


HELPS = {
    **{
        size: f"--quick: {quick}, --full: {PROFILES['full'][size]}"
        for size, quick in PROFILES["quick"].items()
    },
    "quick": "the default sizes (~2-3 minutes on 2 cores)",
    "full": "the issue's sizes (200 conversations, 3 rounds)",
    "first_concurrency": "users whose first (unmeasured) turn runs at once: more overload the emulator's one event loop",
    "think_ms": "each user's pause before a warm turn of the main phase (±50 %%); 0 = closed loop (saturated hosts)",
    "no_ms": "skip Microsoft's host",
    "no_otel": "skip the OTel hosts",
    "no_sends": "skip concurrency.py (sends target)",
    "profile": "profile a warm phase of our hosts",
    "profiler": "auto: py-spy if installed",
    "json": "also write the figures as JSON",
    "freeze": "ours and the floor freeze their start-up heap (gc.freeze), as the hosted example's main() does",
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The flags (the sizes: ``--quick``'s unless ``--full`` or given), the log level and the report's header."""
    args = start(
        "A busy host (issue 26)", argv, quick=False, full=False, orchestrators="langchain,openai",
        **dict.fromkeys(PROFILES["quick"]), first_concurrency=8, think_ms=0.0, latency_ms=20.0, no_ms=False,
        no_otel=False, no_sends=False, profile=False, profiler=("auto", "cprofile"), json=None, freeze=False,
        helps=HELPS,
    )  # fmt: skip
    if args.quick and args.full:
        raise SystemExit("host.py: --quick or --full, not both")
    if args.freeze:  # read by the fork server and by each host (_host_server.py)
        os.environ[FREEZE] = "1"
    for key, value in PROFILES["full" if args.full else "quick"].items():
        setattr(args, key, value if getattr(args, key) is None else type(value)(getattr(args, key)))
    args.orchestrators = [o for o in args.orchestrators.split(",") if o]
    args.growth_servers = [int(x) for x in args.growth_servers.split(",") if x.strip()]
    return args


Hosts = dict[tuple[str, str], Host]  # (orchestrator, side) -> its host process


class Run:
    """The phases of one run: ``results[(orchestrator, side, phase)]`` -> the rounds' phases."""

    def __init__(self, args: argparse.Namespace, emu: EmulatorProcess, http: aiohttp.ClientSession) -> None:
        self.args, self.emu, self.http = args, emu, http
        self.results: dict[tuple[str, str, str], list[Phase]] = defaultdict(list)
        self.pool: dict[tuple[str, str], list[str]] = {}  # users warm at a server count, per host
        self.wedged: dict[str, str] = {}  # host label -> the phase where most of its turns failed
        self.profile: dict[str, Any] = {}  # orchestrator -> where ours' warm turns spent their CPU

    async def phase(
        self, host: Host, key: tuple[str, str, str], users: list[str], servers: int, turns: int,
        concurrency: int | None = None,
    ) -> Phase:  # fmt: skip
        name = "/".join(key)
        if host.label in self.wedged:  # its later phases would only wait for their timeouts
            print(f"  {name}: skipped (the host stopped answering in {self.wedged[host.label]})")
            return Phase()
        think = self.args.think_ms / 1000 if key[2] == "warm" else 0.0  # growth measures CPU per turn
        r = await run_phase(
            self.http, host, self.emu, users=users, servers=servers, turns_each=turns, concurrency=concurrency,
            think=think,
        )  # fmt: skip
        print(
            f"  {name}: {r.turns} turns in {r.wall:.1f} s, CPU {r.cpu_per_turn * 1000:.1f} ms/turn",
            flush=True,
        )
        if r.logged:  # answered HTTP 2xx: counted as turns, their latencies included
            print(f"  ! {key}: {len(r.logged)} of the answered turns failed inside the host (its log)")
        if r.errors:
            print(f"  ! {key}: {r.errors} failed turns ({r.first_error}); host log:")
            print("    " + host.log_tail(12).replace("\n", "\n    "))
            if r.errors > r.turns:
                self.wedged[host.label] = key[2]
        self.results[key].append(r)
        return r

    def get(self, orchestrator: str, side: str, phase: str) -> Phase | None:
        phases = self.results.get((orchestrator, side, phase))
        return merge(phases) if phases else None

    async def warm_users(
        self, hosts: Hosts, orchestrator: str, side: str, count: int, servers: int
    ) -> list[str]:
        """``count`` users who had their first turn at ``servers`` servers (the main phase's users first)."""
        key = (orchestrator, side if servers == self.args.servers else f"{side}-s{servers}")
        have = self.pool.setdefault(key, [])
        if len(have) < count:
            fresh = new_users(count - len(have), f"{orchestrator}-{side}-s{servers}")
            first = (orchestrator, side, f"first-s{servers}")
            await self.phase(hosts[orchestrator, side], first, fresh, servers, 1, self.args.first_concurrency)
            have += fresh
        return have[:count]


async def main_phase(run: Run, hosts: Hosts) -> None:
    """Every user's first turn once (unmeasured), then warm rounds, the sides interleaved; cold turns (new users,
    a few at a time) after each round, ours and the floor."""
    args = run.args
    for (o, side), host in hosts.items():
        run.pool[o, side] = first = new_users(args.conversations, f"{o}-{side}")
        if side == "ms":  # Microsoft keeps nothing between turns: its first turn is its warm one
            first = new_users(2, "ms-warmup")
        await run.phase(host, (o, side, "first"), first, args.servers, 1, args.first_concurrency)
    for round_no in range(args.rounds):
        print(f"round {round_no + 1}/{args.rounds}", flush=True)
        for o in args.orchestrators:
            for side in (s for s in SIDES if (o, s) in hosts):
                turns = args.ms_turns if side == "ms" else args.warm_turns
                await run.phase(hosts[o, side], (o, side, "warm"), run.pool[o, side], args.servers, turns)
            for side in ("ours", "floor"):
                fresh = new_users(args.cold_users, f"cold-{o}-{side}")
                await run.phase(
                    hosts[o, side], (o, side, "cold"), fresh, args.cold_servers, 1, args.cold_concurrency
                )


async def growth_phase(run: Run, hosts: Hosts) -> None:
    """CPU per warm turn against the servers, ours and the floor (``--growth-base`` conversations). Users already
    warm at a server count are reused; only the missing ones take their (unmeasured) first turn."""
    args = run.args
    for o in args.orchestrators:
        for servers in args.growth_servers:
            for side in ("ours", "floor"):
                group = await run.warm_users(hosts, o, side, args.growth_base, servers)
                await run.phase(hosts[o, side], (o, side, f"s{servers}"), group, servers, args.growth_turns)


async def profile_phase(run: Run, hosts: Hosts) -> None:
    """``--profile``: a warm phase of ours (the main phase's users: no new burst of cold turns) profiled."""
    args = run.args
    for o in args.orchestrators if args.profile else ():
        users = await run.warm_users(hosts, o, "ours", args.conversations, args.servers)
        key, host = (o, "ours", "profile"), hosts[o, "ours"]
        load = functools.partial(run.phase, host, key, users, args.servers, args.warm_turns)
        run.profile[o] = await profile(host, run.http, load, args.profiler)


# The phases of a run, in order: each runs its turns through ``run.phase`` (scripts/bench/README.md).
PHASES: list[Callable[[Run, Hosts], Awaitable[None]]] = [main_phase, growth_phase, profile_phase]


async def run_sends(rounds: int) -> tuple[float | None, float | None]:
    """Target 'threat-protection sends': ``concurrency.py``'s CPU per send, ours / floor, and ours (seconds)."""
    command = [sys.executable, str(BENCH_DIR / "concurrency.py"), "--sends", "1000", "--rounds", str(rounds)]
    done = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True, cwd=ROOT)
    match = re.search(r"CPU per send ours / floor\s*\|\s*([0-9.]+)", done.stdout)
    if not match:
        print(f"  ! concurrency.py gave no ratio (exit {done.returncode}): {done.stderr[-500:]}")
        return None, None
    ours = re.search(r"ours \(one pooled client\)\s*\|[^|]*\|[^|]*\|\s*([0-9.]+) ms", done.stdout)
    return float(match.group(1)), float(ours.group(1)) / 1000 if ours else None


def rtp_check(run: Run) -> dict[str, int]:
    """Threat protection's records against the turns served (the emulator keeps the last 1,000): each history
    must hold the scripted model's answer, i.e. the tool was called and answered."""
    records = run.emu.control("GET", "/chat-messages")
    answered = sum(
        any("characters of notes" in m.get("content", "") for m in r.get("chatHistory", [])) for r in records
    )
    turns = sum(p.turns for phases in run.results.values() for p in phases)
    print(f"threat-protection records: {len(records)} (the emulator keeps 1,000) for {turns} turns; ", end="")
    print(f"{answered} hold the tool's answer")
    return {"records": len(records), "turns": turns, "with_answer": answered}


async def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    counts = sorted({1, args.servers, args.cold_servers, *args.growth_servers})
    with emulator_process(notes_servers=max(counts), latency_ms=args.latency_ms, counts=counts) as emu:
        print(
            f"emulator {emu.base_url} (own process), {args.latency_ms:g} ms added per gateway/MCP/RTP response"
        )
        off = {"otel": args.no_otel, "otel-sdk": args.no_otel, "ms": args.no_ms}
        # Microsoft's host is OpenAI's only (Microsoft has no LangChain extension).
        wanted = [
            (o, s)
            for o in args.orchestrators
            for s in SIDES
            if not off.get(s) and (s != "ms" or o == "openai")
        ]
        timeout = aiohttp.ClientTimeout(300)
        async with (
            otlp_collector() as collector,
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), timeout=timeout) as http,
        ):
            otel = {s: (collector.url, scope) if scope else (None,) for s, (_, scope) in SIDES.items()}
            async with running(
                *(start_host(emu, f"{o}-{s}", SIDES[s][0], o, *otel[s]) for o, s in wanted)
            ) as started:
                run, hosts = Run(args, emu, http), dict(zip(wanted, started, strict=True))
                for phase in PHASES:
                    await phase(run, hosts)
            otel_bytes = dict(collector.received)
        rtp = rtp_check(run)
    sends = (None, None) if args.no_sends else await run_sends(args.sends_rounds)
    return report(run, args, sends, otel_bytes, rtp)


if __name__ == "__main__":
    asyncio.run(main())
