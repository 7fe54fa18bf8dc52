"""Issue 26: a busy agent host's turns, next to the floor and to Microsoft's SDK.

    uv run python scripts/bench/host.py --quick        # ~2-3 minutes on 2 cores
    uv run python scripts/bench/host.py --full         # the issue's sizes (200 and 1,000 conversations)
    uv run python scripts/bench/host.py --quick --profile   # + where a warm turn's CPU goes (py-spy)

Processes: the emulator (8..32 notes servers, 20 ms added per gateway/MCP/RTP response), one host process
per side and orchestrator, and this process, the load generator (it posts Activities for C concurrent
conversations of C users). Hosts (``_host_server.py``, ``_ms_host.py``):

- ours: the hosted example agent (``examples/hosted_agent``) with the Agent 365 SDK;
- floor: the same host with no SDK (raw ``mcp`` sessions kept per user, tokens as given, raw aiohttp POST
  of the history; ``_host_floor.py``);
- ours + OTel: ours with the SDK tracer and meter providers exporting OTLP/HTTP (batch span processor,
  periodic metric reader) to a collector on loopback (in this process);
- Microsoft 2.0.0 (OpenAI only): the same hosted turn with ``microsoft-agents-a365-tooling-extensions-openai``
  in its own venv (``.bench-venv/ms``, plus ``microsoft-agents-hosting-aiohttp``).

Each turn: a typing indicator, the scripted model calls one tool (``list_notes`` of the first server), the
reply to the channel (the emulator's connector), the chat history to threat protection. Warm = a user's
later turns (after the first); cold = new users. CPU is the host process's (``/proc/<pid>/stat``, 10 ms
ticks) over a phase divided by its turns; RSS and connections to the emulator are the peaks sampled during
the main warm phase. Every ratio compares numbers of the same run; phases of the sides are interleaved
round by round. Nothing is asserted: the targets print PASS/MISS.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from _common import BENCH_DIR, ROOT, emulator_process, header
from _host_load import Phase, merge, run_phase
from _host_procs import Host, otlp_collector, start_host, start_py_spy, stop_host, summarize_py_spy
from _host_report import report

PROFILES: dict[str, dict[str, Any]] = {
    "quick": {
        "servers": 8,
        "conversations": 32,
        "warm_turns": 3,
        "rounds": 1,
        "growth_servers": "1,8,32",
        "growth_conversations": "8,32",
        "growth_base": 8,
        "growth_turns": 12,  # 96 turns a phase: fewer and the 10 ms CPU ticks and GC decide the growth ratio
        "cold_servers": 16,
        "cold_users": 8,
        "cold_concurrency": 4,
        "ms_turns": 1,
        "sends_rounds": 1,
    },
    "full": {
        "servers": 8,
        "conversations": 200,
        "warm_turns": 4,
        "rounds": 3,
        "growth_servers": "1,8,32",
        "growth_conversations": "50,200,1000",
        "growth_base": 50,
        "growth_turns": 6,
        "cold_servers": 16,
        "cold_users": 24,
        "cold_concurrency": 4,
        "ms_turns": 2,
        "sends_rounds": 3,
    },
}

THINK_PHASES = {"warm"}  # --think-ms applies to the main warm phase only (growth measures CPU per turn)

_ids = itertools.count()


def new_users(n: int, tag: str) -> list[str]:
    batch = next(_ids)
    return [f"u{batch}-{tag}-{i}" for i in range(n)]


def ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_const", dest="profile_name", const="quick")
    size.add_argument("--full", action="store_const", dest="profile_name", const="full")
    parser.add_argument("--orchestrators", default="langchain,openai")
    parser.add_argument("--servers", type=int, help="servers of the main warm phase (8)")
    parser.add_argument("--conversations", type=int, help="concurrent conversations of the main phase")
    parser.add_argument("--warm-turns", type=int, help="warm turns per conversation per round")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--growth-servers", help="comma-separated server counts ('' = skip)")
    parser.add_argument("--growth-conversations", help="comma-separated conversation counts ('' = skip)")
    parser.add_argument("--growth-base", type=int, help="conversations of the server-growth phases")
    parser.add_argument("--growth-turns", type=int)
    parser.add_argument("--cold-servers", type=int)
    parser.add_argument("--cold-users", type=int)
    parser.add_argument("--cold-concurrency", type=int)
    parser.add_argument(
        "--first-concurrency",
        type=int,
        default=8,
        help="users whose first (unmeasured) turn runs at once: a larger burst of cold turns overloads the "
        "emulator's one event loop",
    )
    parser.add_argument("--ms-turns", type=int, help="turns per conversation of Microsoft's host")
    parser.add_argument("--sends-rounds", type=int)
    parser.add_argument(
        "--think-ms",
        type=float,
        default=0.0,
        help="each user's pause before a warm turn of the main phase (±50 %%); 0 = closed loop (saturated hosts)",
    )
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--no-ms", action="store_true", help="skip Microsoft's host")
    parser.add_argument("--no-otel", action="store_true", help="skip the OTel host")
    parser.add_argument("--no-sends", action="store_true", help="skip concurrency.py (sends target)")
    parser.add_argument("--profile", action="store_true", help="profile a warm phase of our hosts")
    parser.add_argument(
        "--profiler",
        choices=["auto", "cprofile"],
        default="auto",
        help="auto: py-spy when installed, else cProfile inside the host",
    )
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    args.profile_name = args.profile_name or "quick"
    for key, value in PROFILES[args.profile_name].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.orchestrators = [o for o in args.orchestrators.split(",") if o]
    args.growth_servers = ints(args.growth_servers)
    args.growth_conversations = ints(args.growth_conversations)
    return args


Hosts = dict[tuple[str, str], Host]  # (orchestrator, side) -> its host process


class Run:
    """The phases of one run: ``results[(orchestrator, side, phase)]`` -> the rounds' phases."""

    def __init__(self, args: argparse.Namespace, emu: Any, http: aiohttp.ClientSession) -> None:
        self.args = args
        self.emu = emu
        self.http = http
        self.results: dict[tuple[str, str, str], list[Phase]] = defaultdict(list)
        self.service_url = f"{emu.base_url}/"
        self.pool: dict[tuple[str, str], list[str]] = {}  # users warm at the main server count, per host
        self.wedged: dict[str, str] = {}  # host label -> the phase where most of its turns failed
        self.profile: dict[
            str, Any
        ] = {}  # orchestrator -> where ours' warm turns spent their CPU (--profile)

    async def phase(
        self,
        host: Host,
        key: tuple[str, str, str],
        users: list[str],
        servers: int,
        turns: int,
        concurrency: int | None = None,
    ) -> Phase:
        if host.label in self.wedged:  # its later phases would only wait for their timeouts
            print(f"  {'/'.join(key)}: skipped (the host stopped answering in {self.wedged[host.label]})")
            return Phase()
        failed_before = host.turn_errors()
        result = await run_phase(
            self.http,
            host,
            self.service_url,
            self.emu.port,
            users=users,
            servers=servers,
            turns_each=turns,
            concurrency=concurrency,
            think=self.args.think_ms / 1000 if key[2] in THINK_PHASES else 0.0,
        )
        print(
            f"  {'/'.join(key)}: {result.turns} turns in {result.wall:.1f} s, CPU {result.cpu_per_turn * 1000:.1f} ms/turn",
            flush=True,
        )
        failed_inside = host.turn_errors() - failed_before
        if failed_inside:  # answered HTTP 2xx: counted as turns, their latencies included
            print(f"  ! {key}: {failed_inside} of the answered turns failed inside the host (its log)")
        if result.errors:
            print(f"  ! {key}: {result.errors} failed turns ({result.first_error}); host log:")
            print("    " + host.log_tail(12).replace("\n", "\n    "))
            if result.errors > result.turns:
                self.wedged[host.label] = key[2]
        self.results[key].append(result)
        return result

    def get(self, orchestrator: str, side: str, phase: str) -> Phase | None:
        phases = self.results.get((orchestrator, side, phase))
        return merge(phases) if phases else None


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


async def profile_phase(run: Run, hosts: Hosts) -> None:
    """``--profile``: a warm phase of ours under py-spy (or cProfile inside the host)."""
    args, out = run.args, run.profile
    for orchestrator in args.orchestrators if args.profile else ():
        host = hosts[(orchestrator, "ours")]
        # The main phase's users: already warm, no new burst of cold turns.
        users = await warm_users(run, hosts, run.pool, orchestrator, "ours", args.conversations, args.servers)
        raw = Path(tempfile.mkstemp(prefix=f"pyspy-{orchestrator}-", suffix=".txt")[1])
        spy = start_py_spy(host, 600, raw) if args.profiler != "cprofile" else None
        if spy is not None:
            await asyncio.sleep(1.0)  # py-spy attaches
            await run.phase(host, (orchestrator, "ours", "profile"), users, args.servers, args.warm_turns)
            spy.send_signal(signal.SIGINT)
            await asyncio.to_thread(spy.wait, 30)
            summary_ = summarize_py_spy(raw)
            print(f"  py-spy's collapsed stacks: {raw}")
            out[orchestrator] = {
                "raw": str(raw),
                "tool": "py-spy",
                "packages": summary_.packages,
                "functions": summary_.self_functions,
                "inclusive": summary_.inclusive,
                "under_sdk": summary_.under_sdk,
            }
        else:
            os.unlink(raw)
            stats = Path(tempfile.mkstemp(prefix=f"cprofile-{orchestrator}-", suffix=".pstats")[1])
            async with run.http.post(f"{host.url}/_bench/profile/start") as response:
                response.raise_for_status()
            await run.phase(host, (orchestrator, "ours", "profile"), users, args.servers, args.warm_turns)
            async with run.http.post(
                f"{host.url}/_bench/profile/stop", params={"path": str(stats)}
            ) as response:
                response.raise_for_status()
            import pstats

            entries = pstats.Stats(str(stats)).stats  # type: ignore[attr-defined]
            total = sum(v[2] for v in entries.values()) or 1.0
            top = sorted(entries.items(), key=lambda kv: kv[1][2], reverse=True)[:15]
            functions = [(f"{fn} ({Path(file).name}:{line})", v[2] / total) for (file, line, fn), v in top]
            os.unlink(stats)
            by_cumulative = sorted(entries.items(), key=lambda kv: kv[1][3], reverse=True)[:25]
            inclusive = [
                (f"{fn} ({Path(file).name}:{line})", v[3] / total) for (file, line, fn), v in by_cumulative
            ]
            out[orchestrator] = {
                "tool": "cProfile",
                "packages": [],
                "functions": functions,
                "inclusive": inclusive,
                "under_sdk": None,
            }


SIDES: dict[str, tuple[str, str | None]] = {
    # side: (the host's ``--mode`` in _host_server.py / _ms_host.py, its OTel scope or None). A host variant is
    # one more entry (and its mode in _host_server.py): every phase then runs it next to the others.
    "ours": ("ours", None),
    "floor": ("floor", None),
    "otel": ("ours", "global"),
    "otel-sdk": ("ours", "sdk"),
    "ms": ("ms", None),
}


def wanted_sides(args: argparse.Namespace, orchestrator: str) -> list[str]:
    skip = {"otel", "otel-sdk"} if args.no_otel else set()
    if args.no_ms or orchestrator != "openai":
        skip.add("ms")  # Microsoft's SDK has no LangChain extension
    return [side for side in SIDES if side not in skip]


async def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    header("A busy host (issue 26)", "uv run python scripts/bench/host.py " + " ".join(sys.argv[1:]))
    counts = sorted({1, args.servers, args.cold_servers, *args.growth_servers})
    with emulator_process(notes_servers=max(counts), latency_ms=args.latency_ms, counts=counts) as emu:
        print(
            f"emulator {emu.base_url} (own process), {args.latency_ms:g} ms added per gateway/MCP/RTP response"
        )
        connector = aiohttp.TCPConnector(limit=0, force_close=False)
        timeout = aiohttp.ClientTimeout(total=300)
        async with (
            otlp_collector() as collector,
            aiohttp.ClientSession(connector=connector, timeout=timeout) as http,
        ):
            run = Run(args, emu, http)
            wanted = [(o, side) for o in args.orchestrators for side in wanted_sides(args, o)]
            started = await asyncio.gather(
                *(
                    start_host(
                        f"{o}-{side}",
                        emu,
                        SIDES[side][0],
                        o,
                        collector.url if SIDES[side][1] else None,
                        otel_scope=SIDES[side][1] or "global",
                    )
                    for o, side in wanted
                )
            )
            hosts = dict(zip(wanted, started, strict=True))
            try:
                for phase in PHASES:
                    await phase(run, hosts)
            finally:
                failed = {
                    (o, side) for (o, side, _), got in run.results.items() if any(p.errors for p in got)
                }
                for key, host in hosts.items():
                    stop_host(host, keep_log=key in failed)
            otel_bytes = dict(collector.received)
        rtp = rtp_check(run, emu)
    sends: tuple[float | None, float | None] = (None, None)
    if not args.no_sends:
        sends = await run_sends(args.sends_rounds)
    return report(run, args, args.servers, run.profile, sends, otel_bytes, rtp)


def rtp_check(run: Run, emu: Any) -> dict[str, int]:
    """Threat protection's records against the turns served (the emulator keeps the last 1,000): each
    history must hold the scripted model's answer, i.e. the tool was called and answered."""
    records = emu.control("GET", "/chat-messages")
    answered = sum(
        1
        for r in records
        if any("characters of notes" in m.get("content", "") for m in r.get("chatHistory", []))
    )
    turns = sum(p.turns for phases in run.results.values() for p in phases)
    print(
        f"threat-protection records: {len(records)} (the emulator keeps 1,000) for {turns} turns; "
        f"{answered} hold the tool's answer"
    )
    return {"records": len(records), "turns": turns, "with_answer": answered}


async def main_phase(run: Run, hosts: Hosts) -> None:
    """Every user's first turn once (unmeasured), then warm rounds, the sides interleaved; cold turns (new
    users, a few at a time) after each round, ours and the floor."""
    args, users = run.args, run.pool
    for (orchestrator, side), host in hosts.items():
        users[(orchestrator, side)] = new_users(args.conversations, f"{orchestrator}-{side}")
        if side == "ms":  # Microsoft keeps nothing between turns: its first turn is its warm one
            await run.phase(host, (orchestrator, side, "first"), new_users(2, "ms-warmup"), args.servers, 1)
            continue
        first = users[(orchestrator, side)]
        await run.phase(host, (orchestrator, side, "first"), first, args.servers, 1, args.first_concurrency)
    for round_no in range(args.rounds):
        print(f"round {round_no + 1}/{args.rounds}", flush=True)
        for orchestrator in args.orchestrators:
            for side in SIDES:
                if (orchestrator, side) in hosts:
                    turns = args.ms_turns if side == "ms" else args.warm_turns
                    key = (orchestrator, side, "warm")
                    await run.phase(
                        hosts[(orchestrator, side)], key, users[(orchestrator, side)], args.servers, turns
                    )
            for side in ("ours", "floor"):
                fresh = new_users(args.cold_users, f"cold-{orchestrator}-{side}")
                key = (orchestrator, side, "cold")
                await run.phase(
                    hosts[(orchestrator, side)], key, fresh, args.cold_servers, 1, args.cold_concurrency
                )


async def growth_phase(run: Run, hosts: Hosts) -> None:
    """CPU per warm turn against servers and conversations, ours and the floor. Users already warm at the
    main phase's server count are reused; only the missing ones take their (unmeasured) first turn."""
    args = run.args
    for orchestrator in args.orchestrators:
        sizes = [(f"s{n}", n, args.growth_base) for n in args.growth_servers]
        sizes += [(f"c{c}", args.servers, c) for c in args.growth_conversations]
        for name, servers, conversations in sizes:
            for side in ("ours", "floor"):
                group = await warm_users(run, hosts, run.pool, orchestrator, side, conversations, servers)
                key = (orchestrator, side, name)
                await run.phase(hosts[(orchestrator, side)], key, group, servers, args.growth_turns)


# The phases of a run, in order: each runs its turns through ``run.phase`` (which records them under
# (orchestrator, side, name) for the report). A new phase is one more function here; the report prints any
# phase it has no table for in "other phases" (scripts/bench/README.md).
PHASES: list[Callable[[Run, Hosts], Awaitable[None]]] = [main_phase, growth_phase, profile_phase]


async def warm_users(
    run: Run,
    hosts: dict[tuple[str, str], Host],
    pool: dict[tuple[str, str], list[str]],
    orchestrator: str,
    side: str,
    count: int,
    servers: int,
) -> list[str]:
    """``count`` users who had their first turn at ``servers`` servers (the main phase's users first)."""
    key = (orchestrator, side) if servers == run.args.servers else (orchestrator, f"{side}-s{servers}")
    have = pool.setdefault(key, [])
    if len(have) < count:
        fresh = new_users(count - len(have), f"{orchestrator}-{side}-s{servers}")
        await run.phase(
            hosts[(orchestrator, side)],
            (orchestrator, side, f"first-s{servers}"),
            fresh,
            servers,
            1,
            run.args.first_concurrency,
        )
        have += fresh
    return have[:count]


if __name__ == "__main__":
    asyncio.run(main())
