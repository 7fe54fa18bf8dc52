"""Does the whole hosted agent recover when the emulator stops answering for a while? (issue 26's "host that
stops answering"; docs/performance.md)

    uv run python scripts/bench/host_stall.py [--orchestrator langchain|openai] [--users 32]
        [--concurrency 32] [--stop 25] [--pre 1] [--later-turns 2] [--turn-timeout 60] [--side ours|floor]
        [--dump] [--dump-at SECONDS] [--undrained-stdout]

One host process (``_host_server.py``: the hosted example agent on aiohttp, or the floor) against the
emulator in its own process. The ``--users`` new users' first turns start (``--concurrency`` at once);
``--pre`` seconds later the emulator is stopped (SIGSTOP: an overloaded server whose kernel still accepts
connections) for ``--stop`` seconds. Then every user takes ``--later-turns`` more turns. Printed: each
phase's answered and failed turns (and the turns the host failed but answered HTTP 2xx, from its log), time
and host CPU, the host's TCP sockets by peer and state (``/proc``) after each phase, and, when later turns
fail (or with ``--dump``), the host's asyncio tasks with their await chains (its ``SIGUSR1`` dump),
``py-spy dump`` (when installed) and the kernel function its main thread sleeps in. ``--dump-at`` also dumps
the tasks that many seconds into the first turns (while the emulator is stopped). ``--undrained-stdout``
leaves the host's stdout unread as ``host.py`` did before: hosting-core's tracebacks then fill the pipe and
block the host.
"""

from __future__ import annotations

import argparse
import array
import asyncio
import contextlib
import fcntl
import os
import signal
import subprocess
import termios
from collections import Counter

import _host_load
import aiohttp
from _common import emulator_process
from _host_load import run_phase
from _host_procs import Host, py_spy, start_host, stop_host

_STATES = {"01": "ESTABLISHED", "02": "SYN_SENT", "06": "TIME_WAIT", "08": "CLOSE_WAIT", "0A": "LISTEN"}


def sockets(pid: int, own_port: int, ports: dict[int, str]) -> dict[str, int]:
    """The process's TCP sockets, counted by (peer, state): ``inbound`` (to its ``own_port``) or the peer's
    port, named by ``ports``."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    counts: Counter[str] = Counter()
    for table in ("tcp", "tcp6"):
        with open(f"/proc/{pid}/net/{table}") as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if fields[9] not in inodes:
                    continue
                state = _STATES.get(fields[3], fields[3])
                local = int(fields[1].rsplit(":", 1)[1], 16)
                remote = int(fields[2].rsplit(":", 1)[1], 16)
                peer = "inbound" if local == own_port else ports.get(remote, f":{remote}")
                counts[f"{peer} {state}"] += 1
    return dict(sorted(counts.items()))


async def task_dump(host: Host) -> str:
    """The host's asyncio tasks with their stacks (its ``SIGUSR1`` handler writes them to its log)."""
    mark = len(host.log.read_text(errors="replace"))
    os.kill(host.pid, signal.SIGUSR1)
    for _ in range(50):
        text = host.log.read_text(errors="replace")[mark:]
        if "=== end of tasks ===" in text:
            return text[text.find("=== ") :]
        await asyncio.sleep(0.1)
    return "(no task dump: the host's event loop did not run its signal handler within 5 s: it is blocked)"


async def thread_dump(host: Host) -> str:
    """The host's threads' stacks (``py-spy dump``): where a blocked event loop is."""
    spy = py_spy()
    if spy is None:
        return "(py-spy is not installed: no thread dump)"
    command = [spy, "dump", "--pid", str(host.pid)]
    done = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True)
    return done.stdout + done.stderr


def blocked_in(host: Host) -> str:
    """The kernel function the host's main thread sleeps in, and its stdout pipe's unread bytes."""
    with open(f"/proc/{host.pid}/wchan") as wchan:
        where = wchan.read().strip()
    unread = array.array("i", [0])
    with contextlib.suppress(OSError, ValueError, AttributeError):
        fcntl.ioctl(host.process.stdout.fileno(), termios.FIONREAD, unread)  # type: ignore[union-attr]
    return f"main thread's wchan: {where}; unread bytes in the host's stdout pipe: {unread[0]}"


async def main(args: argparse.Namespace) -> None:
    with emulator_process(notes_servers=8, latency_ms=args.latency_ms, counts=[8]) as emu:
        host = await start_host(
            f"{args.orchestrator}-{args.side}",
            emu,
            args.side,
            args.orchestrator,
            drain_stdout=not args.undrained_stdout,
        )
        host_port = int(host.url.rsplit(":", 1)[1])
        _host_load.TURN_TIMEOUT = aiohttp.ClientTimeout(total=args.turn_timeout)
        users = [f"stall-{i}" for i in range(args.users)]

        async def stall() -> None:
            await asyncio.sleep(args.pre)
            os.kill(emu.process.pid, signal.SIGSTOP)
            print(f"emulator stopped at +{args.pre:g} s for {args.stop:g} s", flush=True)
            try:
                await asyncio.sleep(args.stop)
            finally:
                os.kill(emu.process.pid, signal.SIGCONT)
            print("emulator continued", flush=True)

        async def phase(http: aiohttp.ClientSession, label: str) -> int:
            errors_before = host.turn_errors()
            result = await run_phase(
                http,
                host,
                f"{emu.base_url}/",
                emu.port,
                users=users,
                servers=8,
                turns_each=1,
                concurrency=args.concurrency,
            )
            failed = f" (first: {result.first_error})" if result.errors else ""
            print(
                f"{label}: {result.turns} answered, {result.errors} failed{failed}; "
                f"{host.turn_errors() - errors_before} turn errors in the host's log; {result.wall:.1f} s, "
                f"host CPU {result.cpu:.1f} s",
                flush=True,
            )
            print(f"  host sockets: {sockets(host.pid, host_port, {emu.port: 'emulator'})}", flush=True)
            return result.errors

        try:
            async with aiohttp.ClientSession() as http:
                stopper = asyncio.create_task(stall())
                if args.dump_at is not None:  # what the turns wait on while the emulator is stopped

                    async def dump_later() -> None:
                        await asyncio.sleep(args.dump_at)
                        print(f"--- the host's tasks at +{args.dump_at:g} s ---\n{await task_dump(host)}")

                    dumper = asyncio.create_task(dump_later())
                await phase(http, "first turns (the emulator stopped during them)")
                await stopper
                if args.dump_at is not None:
                    await dumper
                failed_later = 0
                for n in range(args.later_turns):
                    failed_later += await phase(http, f"later turns, round {n + 1}")
                if failed_later or args.dump:
                    print(await task_dump(host))
                    print(await thread_dump(host))
                    print(blocked_in(host))
        finally:
            stop_host(host, keep_log=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--orchestrator", choices=("langchain", "openai"), default="langchain")
    parser.add_argument("--side", choices=("ours", "floor"), default="ours")
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=32, help="users' turns at once")
    parser.add_argument("--stop", type=float, default=25.0, help="seconds the emulator stays stopped")
    parser.add_argument("--pre", type=float, default=1.0, help="seconds between the first turns and the stop")
    parser.add_argument("--later-turns", type=int, default=2, help="rounds of later turns (one per user)")
    parser.add_argument("--turn-timeout", type=float, default=60.0, help="the load generator's turn timeout")
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument(
        "--dump", action="store_true", help="dump the host's tasks even when all turns passed"
    )
    parser.add_argument(
        "--dump-at", type=float, help="also dump the host's tasks this many seconds into the first turns"
    )
    parser.add_argument(
        "--undrained-stdout",
        action="store_true",
        help="leave the host's stdout pipe unread after its ready line (host.py before the fix)",
    )
    asyncio.run(main(parser.parse_args()))
