"""Issue 38: a platform hiccup, window by window: does ours fail more turns than the floor, and recover?

    uv run python scripts/bench/disturbance.py                    # both modes, both orchestrators, 200 users
    uv run python scripts/bench/disturbance.py --modes stop --orchestrators langchain --conversations 50

Per mode and orchestrator: the emulator in its own process (8 notes servers, 20 ms added per response), two
host processes (``_host_server.py``: ours, the hosted example agent, and the no-SDK floor) and this process,
the load generator. Every user's first turn runs first (unmeasured); then ``--conversations`` users per
host take warm turns, each after a think time of ``--think-ms`` (±50 %), for ``--before + --stop +
--after`` seconds, both hosts at once (the same disturbance for both). ``--before`` seconds in:

- ``stop``: the emulator is stopped (SIGSTOP: its kernel still accepts connections, nothing answers) for
  ``--stop`` seconds, then continued (SIGCONT): gateway, MCP servers, threat protection and the channel;
- ``server``: one MCP server of the 8 (``notes_8``; the scripted model calls ``notes_1``'s tool) stops
  answering (a fault holding each of its requests for an hour) for ``--stop`` seconds.

Failed turns per ``--window`` seconds: the load generator's (no HTTP 2xx within ``--turn-timeout``;
counted in the window the turn started in) and the host's log (turns its AgentApplication failed, though
answered: counted in the window they were logged in, sampled every 0.5 s). Targets (PASS/MISS), per
orchestrator: ``stop``: in the windows that start ``--recovery`` (30) minus ``--window`` or more seconds after the resume
(recovered within 30 s), ours fails < 1 % of its turns; in every window ours fails no more turns
than the floor. ``server``: ours fails no turn. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from _common import agent_id_for, emulator_process, header, table, verdict
from _host_load import run_phase
from _host_procs import Host, now, start_host, stop_host

from agents_a365.emulator import channel_activity

SERVERS = 8
FROZEN = "notes_8"  # mode ``server``: not the first server, whose tool the scripted model calls
SIDES = ("ours", "floor")
RECOVERY_S = 30.0  # ``stop``: ours back under 1 % failed turns this long after the emulator resumes
MAX_FAILED = 0.01


@dataclass
class Side:
    """One host's warm turns: (start, ok) per turn from the load generator, and (time, count) of the turn
    errors its log gained."""

    host: Host
    turns: list[tuple[float, bool]] = field(default_factory=list)
    logged: list[float] = field(default_factory=list)
    first_error: str = ""


@dataclass
class Window:
    start: float  # seconds from the disturbance's start (negative: before)
    label: str
    turns: dict[str, int]
    failed_load: dict[str, int]
    failed_log: dict[str, int]

    def failed(self, side: str) -> int:
        return self.failed_load[side] + self.failed_log[side]

    def rate(self, side: str) -> float:
        return self.failed(side) / self.turns[side] if self.turns[side] else 0.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--modes", default="stop,server", help="stop (the emulator), server (1 of 8)")
    parser.add_argument("--orchestrators", default="langchain,openai")
    parser.add_argument("--conversations", type=int, default=200, help="users per host")
    parser.add_argument("--think-ms", type=float, default=6000.0, help="each user's pause before a turn")
    parser.add_argument("--before", type=float, default=20.0, help="seconds of turns before the disturbance")
    parser.add_argument("--stop", type=float, default=20.0, help="seconds the disturbance lasts")
    parser.add_argument("--after", type=float, default=40.0, help="seconds of turns after it")
    parser.add_argument("--window", type=float, default=10.0)
    parser.add_argument("--turn-timeout", type=float, default=60.0, help="the load generator's, per turn")
    parser.add_argument("--first-concurrency", type=int, default=8, help="first (cold) turns at once")
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--recovery", type=float, default=RECOVERY_S, help="stop: seconds to < 1 %% failed")
    args = parser.parse_args(argv)
    args.modes = [m for m in args.modes.split(",") if m]
    args.orchestrators = [o for o in args.orchestrators.split(",") if o]
    if not set(args.modes) <= {"stop", "server"}:
        parser.error("--modes: stop, server")
    return args


@contextlib.contextmanager
def _resumed(pid: int) -> Iterator[None]:
    try:
        yield
    finally:  # never leave the emulator stopped (an interrupted run)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


async def disturb(mode: str, emu: Any, args: argparse.Namespace) -> None:
    """The disturbance, from ``--before`` seconds in, for ``--stop`` seconds."""
    await asyncio.sleep(args.before)
    if mode == "stop":
        with _resumed(emu.process.pid):
            os.kill(emu.process.pid, signal.SIGSTOP)
            await asyncio.sleep(args.stop)
        return
    await asyncio.to_thread(emu.control, "PUT", f"/faults/mcp:{FROZEN}", {"latency_ms": 3_600_000})
    try:
        await asyncio.sleep(args.stop)
    finally:
        await asyncio.to_thread(emu.control, "DELETE", f"/faults/mcp:{FROZEN}")  # back to the "mcp" fault's


async def warm_turns(
    http: aiohttp.ClientSession, side: Side, users: list[str], service_url: str, args: argparse.Namespace
) -> None:
    """Each user's turns, one after the other after a think time, until the run's end (a turn started
    before it finishes)."""
    end = now() + args.before + args.stop + args.after
    timeout = aiohttp.ClientTimeout(total=args.turn_timeout)

    async def conversation(user: str, rng: random.Random) -> None:
        turn = 0
        while True:
            await asyncio.sleep(args.think_ms / 1000 * rng.uniform(0.5, 1.5))
            if now() >= end:
                return
            turn += 1
            activity = channel_activity(
                f"What are my notes? (warm {turn})",
                service_url=service_url,
                conversation_id=f"c-{user}",
                user_id=user,
                agent_id=agent_id_for(SERVERS),
            )
            started, ok = now(), False
            try:
                async with http.post(side.host.messages_url, json=activity, timeout=timeout) as response:
                    await response.read()
                    ok = response.status < 300
                    side.first_error = side.first_error or ("" if ok else f"HTTP {response.status}")
            except (aiohttp.ClientError, TimeoutError) as exc:
                side.first_error = side.first_error or f"{type(exc).__name__}: {exc}"
            side.turns.append((started, ok))

    await asyncio.gather(*(conversation(u, random.Random(f"{u}")) for u in users))


async def watch_logs(sides: dict[str, Side], until: asyncio.Event) -> None:
    """When each host's log gains turn errors (sampled every 0.5 s)."""
    seen = {name: side.host.turn_errors() for name, side in sides.items()}
    while True:
        for name, side in sides.items():
            count = side.host.turn_errors()
            side.logged += [now()] * (count - seen[name])
            seen[name] = count
        if until.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(until.wait(), 0.5)


def windows(sides: dict[str, Side], t0: float, args: argparse.Namespace) -> list[Window]:
    """``t0``: when the disturbance started. Windows of ``--window`` seconds over the run."""
    out, start = [], -args.before
    while start < args.stop + args.after - 1e-9:
        end = start + args.window
        label = "before" if end <= 1e-9 else "during" if start < args.stop - 1e-9 else "after"
        turns, failed_load, failed_log = {}, {}, {}
        for name, side in sides.items():
            mine = [ok for at, ok in side.turns if start <= at - t0 < end]
            turns[name], failed_load[name] = len(mine), mine.count(False)
            failed_log[name] = sum(1 for at in side.logged if start <= at - t0 < end)
        out.append(Window(start, label, turns, failed_load, failed_log))
        start = end
    return out


async def run_one(mode: str, orchestrator: str, args: argparse.Namespace) -> dict[str, Any]:
    with emulator_process(notes_servers=SERVERS, latency_ms=args.latency_ms, counts=[SERVERS]) as emu:
        hosts = await asyncio.gather(
            *(start_host(f"{orchestrator}-{s}", emu, s, orchestrator) for s in SIDES)
        )
        sides = {name: Side(host) for name, host in zip(SIDES, hosts, strict=True)}
        users = {
            name: [f"{mode}-{orchestrator}-{name}-{i}" for i in range(args.conversations)] for name in SIDES
        }
        service_url = f"{emu.base_url}/"
        failed = False
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
                # First turns (unmeasured), both hosts at once.
                firsts = await asyncio.gather(
                    *(
                        run_phase(
                            http,
                            side.host,
                            service_url,
                            emu.port,
                            users=users[name],
                            servers=SERVERS,
                            turns_each=1,
                            concurrency=args.first_concurrency,
                        )
                        for name, side in sides.items()
                    )
                )
                for name, first in zip(SIDES, firsts, strict=True):
                    if first.errors:
                        print(
                            f"  ! {orchestrator}/{name}: {first.errors} first turns failed ({first.first_error})"
                        )
                print(
                    f"{mode} / {orchestrator}: warm turns for {args.before + args.stop + args.after:g} s",
                    flush=True,
                )
                done = asyncio.Event()
                watcher = asyncio.create_task(watch_logs(sides, done))
                t0 = now() + args.before
                load = [
                    warm_turns(http, side, users[name], service_url, args) for name, side in sides.items()
                ]
                await asyncio.gather(disturb(mode, emu, args), *load)
                done.set()
                await watcher
        finally:
            for side in sides.values():
                failed = failed or any(not ok for _, ok in side.turns) or bool(side.logged)
                stop_host(side.host, keep_log=failed)
    rows = windows(sides, t0, args)
    return {"mode": mode, "orchestrator": orchestrator, "windows": rows, "sides": sides}


def targets(result: dict[str, Any], args: argparse.Namespace) -> list[tuple[str, bool, str]]:
    rows: list[Window] = result["windows"]
    if result["mode"] == "server":
        failed = sum(w.failed("ours") for w in rows)
        return [(f"{FROZEN} frozen: ours fails no turn", failed == 0, f"{failed} failed")]
    late = [w for w in rows if w.start >= args.stop + args.recovery - args.window - 1e-9]
    worst = f"worst {max(w.rate('ours') for w in late):.1%}" if late else "n/a: no window that late"
    recovered = bool(late) and max(w.rate("ours") for w in late) < MAX_FAILED
    over = [f"{w.start:+g} s" for w in rows if w.failed("ours") > w.failed("floor")]
    return [
        (f"after the resume: ours < 1 % failed within {args.recovery:g} s", recovered, worst),
        (
            "every window: ours fails no more turns than the floor",
            not over,
            "over in " + (", ".join(over) or "none"),
        ),
    ]


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> int:
    misses = 0
    for result in results:
        print(
            f"\n{result['mode']} / {result['orchestrator']} (failed turns: load generator + host log / turns)"
        )
        rows = []
        for w in result["windows"]:
            cells = [f"{w.start:+g}..{w.start + args.window:+g} s", w.label]
            for side in SIDES:
                cells.append(
                    f"{w.failed_load[side]} + {w.failed_log[side]} / {w.turns[side]} ({w.rate(side):.1%})"
                )
            rows.append(cells)
        table(rows, ["window (from the disturbance)", "phase", *SIDES])
        for side in SIDES:
            error = result["sides"][side].first_error
            if error:
                print(f"  {side}'s first load-generator error: {error}")
        for name, ok, detail in targets(result, args):
            misses += not ok
            print(f"target {result['mode']}/{result['orchestrator']}: {name}: {verdict(ok)} ({detail})")
    return misses


async def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    header(
        "A platform hiccup (issue 38)", "uv run python scripts/bench/disturbance.py " + " ".join(sys.argv[1:])
    )
    results = [await run_one(m, o, args) for m in args.modes for o in args.orchestrators]
    report(results, args)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
