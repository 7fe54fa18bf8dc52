"""Does a hosted agent recover when the emulator stops answering for a while? (docs/reliability.md)

One host process against the emulator. The users' first turns start; ``--pre`` s later the emulator is stopped
(SIGSTOP) for ``--stop`` s; then every user takes ``--later-turns`` more turns. Printed per phase: turns answered
and failed (and failed inside the host, from its log), time, host CPU and TCP sockets by peer and state; when
later turns fail (or with ``--dump``), the host's asyncio tasks and their await chains.
"""

from __future__ import annotations

import asyncio

import aiohttp
from _common import emulator_process, start
from _host_load import run_phase
from _host_procs import running, start_host


async def main() -> None:
    args = start(
        "A host that stops answering", orchestrator="langchain", side="ours", users=32, concurrency=32, stop=25.0,
        pre=1.0, later_turns=2, turn_timeout=60.0, latency_ms=20.0, dump=False,
    )  # fmt: skip
    with emulator_process(notes_servers=8, latency_ms=args.latency_ms, counts=[8]) as emu:
        label = f"{args.orchestrator}-{args.side}"
        async with (
            running(start_host(emu, label, args.side, args.orchestrator)) as (host,),
            aiohttp.ClientSession() as http,
        ):
            users = [f"stall-{i}" for i in range(args.users)]
            timeout = aiohttp.ClientTimeout(total=args.turn_timeout)

            async def stall() -> None:
                await asyncio.sleep(args.pre)
                with emu.stopped():
                    print(f"emulator stopped at +{args.pre:g} s for {args.stop:g} s", flush=True)
                    await asyncio.sleep(args.stop)
                print("emulator continued", flush=True)

            async def phase(label: str) -> int:
                r = await run_phase(
                    http, host, emu, users=users, servers=8, concurrency=args.concurrency, timeout=timeout
                )
                failed = f" (first: {r.first_error})" if r.errors else ""
                print(
                    f"{label}: {r.turns} answered, {r.errors} failed{failed}; {len(r.logged)} turn errors in the ",
                    end="",
                )
                print(f"host's log; {r.wall:.1f} s, host CPU {r.cpu:.1f} s", flush=True)
                sockets = {
                    f"{'emulator' if peer == emu.port else peer} {state}": n
                    for (peer, state), n in host.sockets().items()
                }
                print(f"  host sockets: {dict(sorted(sockets.items()))}", flush=True)
                return r.errors

            stopper = asyncio.create_task(stall())
            await phase("first turns (the emulator stopped during them)")
            await stopper
            failed_later = [await phase(f"later turns, round {n + 1}") for n in range(args.later_turns)]
            if any(failed_later) or args.dump:
                print(await host.dump_tasks())


if __name__ == "__main__":
    asyncio.run(main())
