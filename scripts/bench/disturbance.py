"""Issue 38: a platform hiccup, window by window: does ours fail more turns than the floor, and recover?

Per mode and orchestrator: the emulator (8 notes servers), ours and the floor's host, each user's first turn
(unmeasured), then ``--conversations`` users per host taking warm turns after ``--think-ms`` (±50 %) for
``--before + --stop + --after`` s, both hosts at once. ``--before`` s in, ``stop``: the emulator SIGSTOPped for
``--stop`` s; ``server``: ``notes_8`` stops answering for ``--stop`` s (the model calls ``notes_1``'s tool).

Failed turns per ``--window`` s: the load generator's (by start) and the host log's (by when logged), then the
first error lines ours' log gained. Targets: ``stop``: ours fails < 1 % in the windows from ``--recovery`` s
after the resume, and never more than the floor in a window; ``server``: ours fails no turn.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import re
from typing import Any

import aiohttp
from _common import emulator_process, start, table, verdict
from _host_load import Phase, Window, run_phase, windows, windows_table
from _host_procs import Host, now, running, start_host

SERVERS, FROZEN, SIDES, MAX_FAILED = 8, "notes_8", ("ours", "floor"), 0.01
ERROR = re.compile(r"^(ERROR:|\w+(\.\w+)*(Error|Exception|Timeout)\b)")  # a log record, an exception


async def run_one(mode: str, orchestrator: str, args: argparse.Namespace) -> None:
    with emulator_process(notes_servers=SERVERS, latency_ms=args.latency_ms, counts=[SERVERS]) as emu:
        starts = (start_host(emu, f"{orchestrator}-{side}", side, orchestrator) for side in SIDES)
        async with (
            running(*starts) as hosts,
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http,
        ):
            users = [
                [f"{mode}-{orchestrator}-{side}-{i}" for i in range(args.conversations)] for side in SIDES
            ]

            async def both(**options: Any) -> list[Phase]:
                pairs = zip(hosts, users, strict=True)
                return await asyncio.gather(
                    *(run_phase(http, h, emu, users=u, servers=SERVERS, **options) for h, u in pairs)
                )

            for side, first in zip(SIDES, await both(concurrency=args.first_concurrency), strict=True):
                if first.errors:
                    print(
                        f"  ! {orchestrator}/{side}: {first.errors} first turns failed ({first.first_error})"
                    )
            print(
                f"{mode} / {orchestrator}: warm turns for {args.before + args.stop + args.after:g} s",
                flush=True,
            )
            t0, timeout = now() + args.before, aiohttp.ClientTimeout(total=args.turn_timeout)
            marks = asyncio.create_task(log_marks(hosts[0], t0, args))
            warm = both(think=args.think_ms / 1000, until=t0 + args.stop + args.after, timeout=timeout)
            _, phases = await asyncio.gather(disturb(mode, emu, args), warm)
            sides = dict(zip(SIDES, phases, strict=True))
            rows = windows(sides, t0, args.before, args.stop, args.after, args.window)
            lines = error_lines(hosts[0], await marks + [hosts[0].log.stat().st_size])
        print(f"\n{mode} / {orchestrator} (failed turns: load generator + host log / turns)")
        table(windows_table(rows, args.window), ["window (from the disturbance)", "phase", *SIDES])
        for w, found in zip(rows, lines, strict=False):
            for line in found:
                print(f"  ours' log {w.start:+g}..{w.start + args.window:+g} s: {line}")
        for side, phase in sides.items():
            if phase.first_error:
                print(f"  {side}'s first load-generator error: {phase.first_error}")
        for name, ok, detail in targets(mode, rows, args):
            print(f"target {mode}/{orchestrator}: {name}: {verdict(ok)} ({detail})")


async def disturb(mode: str, emu: Any, args: argparse.Namespace) -> None:
    """The disturbance, from ``--before`` seconds in, for ``--stop`` seconds."""
    await asyncio.sleep(args.before)
    with emu.stopped() if mode == "stop" else emu.faulted(f"mcp:{FROZEN}", latency_ms=3_600_000):
        await asyncio.sleep(args.stop)


async def log_marks(host: Host, t0: float, args: argparse.Namespace) -> list[int]:
    """The size of ``host``'s log when the run starts and at each window's end but the last."""
    marks, end = [host.log.stat().st_size], args.window - args.before
    while end < args.stop + args.after - 1e-9:
        await asyncio.sleep(t0 + end - now())
        marks.append(host.log.stat().st_size)
        end += args.window
    return marks


def error_lines(host: Host, marks: list[int], first: int = 3) -> list[list[str]]:
    """Per window (between two marks), the first ``first`` distinct error lines ``host``'s log gained."""
    text = host.log.read_bytes()
    out = []
    for a, b in itertools.pairwise(marks):
        found = [line[:200] for line in text[a:b].decode(errors="replace").splitlines() if ERROR.match(line)]
        out.append(list(dict.fromkeys(found))[:first])
    return out


def targets(mode: str, rows: list[Window], args: argparse.Namespace) -> list[tuple[str, bool, str]]:
    if mode == "server":
        n = sum(w.lost("ours") for w in rows)
        return [(f"{FROZEN} frozen: ours fails no turn", n == 0, f"{n} failed")]
    late = [w for w in rows if w.start >= args.stop + args.recovery - args.window - 1e-9]
    worst = max((w.rate("ours") for w in late), default=None)
    over = ", ".join(f"{w.start:+g} s" for w in rows if w.lost("ours") > w.lost("floor"))
    late_detail = "n/a: no window that late" if worst is None else f"worst {worst:.1%}"
    return [
        (f"after the resume: ours < 1 % failed within {args.recovery:g} s", worst is not None and worst < MAX_FAILED,
         late_detail),
        ("every window: ours fails no more turns than the floor", not over, "over in " + (over or "none")),
    ]  # fmt: skip


async def main() -> None:
    args = start(
        "A platform hiccup (issue 38)", modes="stop,server", orchestrators="langchain,openai", conversations=200,
        think_ms=6000.0, before=20.0, stop=20.0, after=40.0, window=10.0, recovery=30.0, turn_timeout=60.0,
        first_concurrency=8, latency_ms=20.0,
    )  # fmt: skip
    modes, orchestrators = args.modes.split(","), args.orchestrators.split(",")
    if not set(modes) <= {"stop", "server"}:
        raise SystemExit("--modes: stop, server")
    for mode in modes:
        for orchestrator in orchestrators:
            await run_one(mode, orchestrator, args)


if __name__ == "__main__":
    asyncio.run(main())
