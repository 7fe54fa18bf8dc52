"""Does a host recover from a burst of turns that hit the deadline? (host.py's "host that never recovers")

    uv run python scripts/bench/host_recovery.py [--orchestrator langchain|openai] [--turns 32]
        [--stop 3] [--timeout 2] [--pre 0.3] [--warm]

One long-lived registration service (as a host keeps it) against the emulator in its own process. A warm-up
turn, then ``--turns`` new users' turns at once; ``--pre`` seconds later the emulator is stopped (SIGSTOP:
an overloaded server, its kernel still accepting connections) for ``--stop`` seconds, so their requests
pass the ``--timeout`` deadline. Then three later turns must succeed. Prints this process's sockets to the
emulator by TCP state (from ``/proc``) after the burst, 7 s later (past the emulator's 5 s keep-alive, so
a connection we still hold shows as ``CLOSE_WAIT``), after the later turns and after the service closed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import time

from _common import agent_id_for, emulator_process, make_turn
from agents import Agent

from agents_a365.tooling import ToolingConfiguration
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService as LangChainService
from agents_a365.tooling.extensions.openai import McpToolRegistrationService as OpenAIService

AUTH_HANDLER = "agentic"  # the emulator authorization's handler name (as in the tests)

_STATES = {"01": "ESTABLISHED", "02": "SYN_SENT", "04": "FIN_WAIT1", "06": "TIME_WAIT", "08": "CLOSE_WAIT"}


def sockets_to(port: int) -> dict[str, int]:
    """This process's open TCP sockets to ``port``, counted by state."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    states: dict[str, int] = {}
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        with open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if int(fields[2].rsplit(":", 1)[1], 16) == port and fields[9] in inodes:
                    state = _STATES.get(fields[3], fields[3])
                    states[state] = states.get(state, 0) + 1
    return states


async def main(args: argparse.Namespace) -> None:
    with emulator_process(notes_servers=8, latency_ms=20, counts=[8]) as emu:
        cfg = ToolingConfiguration(
            mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False, request_timeout=args.timeout
        )
        async with LangChainService(configuration=cfg) as lc, OpenAIService(configuration=cfg) as oa:

            async def turn(user: str) -> int:
                context = make_turn(agent_id_for(8), user)
                if args.orchestrator == "openai":
                    async with oa.connected_agent(
                        Agent(name="a"), emu.authorization(), AUTH_HANDLER, context
                    ) as agent:
                        server = agent.mcp_servers[0]
                        tools = await server.list_tools()
                        await server.call_tool(next(t.name for t in tools if "list_notes" in t.name), {})
                        return len(tools)
                async with lc.mcp_tools(emu.authorization(), AUTH_HANDLER, context) as toolset:
                    lc_tools = toolset.tools()
                    await next(t for t in lc_tools if "list_notes" in t.name).ainvoke({})
                    return len(lc_tools)

            print("warm-up turn:", await turn("warm-up"), "tools; sockets", sockets_to(emu.port))
            if args.warm:  # the burst users' first turns first: the burst is of warm turns (cached tools)
                for first in range(0, args.turns, 8):  # 8 at a time: within the deadline on a loaded machine
                    await asyncio.gather(
                        *(turn(f"user-{i}") for i in range(first, min(first + 8, args.turns)))
                    )
            started = time.monotonic()
            burst = [asyncio.ensure_future(turn(f"user-{i}")) for i in range(args.turns)]
            await asyncio.sleep(args.pre)
            os.kill(emu.process.pid, signal.SIGSTOP)
            await asyncio.sleep(args.stop)
            os.kill(emu.process.pid, signal.SIGCONT)
            results = await asyncio.gather(*burst, return_exceptions=True)
            failed = [r for r in results if isinstance(r, BaseException)]
            print(f"burst: {len(failed)} of {args.turns} turns failed, {time.monotonic() - started:.1f} s")
            if failed:
                print("  first failure:", str(failed[0])[:200])
            print("sockets right after the burst:", sockets_to(emu.port))
            await asyncio.sleep(7)
            print("sockets 7 s later:", sockets_to(emu.port))
            for i in range(3):
                begun = time.monotonic()
                try:
                    count = await asyncio.wait_for(turn(f"later-{i}"), 30)
                    print(f"later turn {i}: ok, {count} tools, {time.monotonic() - begun:.1f} s")
                except Exception as exc:
                    print(f"later turn {i}: FAILED after {time.monotonic() - begun:.1f} s: {exc}"[:300])
            print("sockets after the later turns:", sockets_to(emu.port))
        print("sockets after the services closed:", sockets_to(emu.port))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--orchestrator", choices=("langchain", "openai"), default="langchain")
    parser.add_argument("--turns", type=int, default=32)
    parser.add_argument("--stop", type=float, default=3.0, help="seconds the emulator stays stopped")
    parser.add_argument("--timeout", type=float, default=2.0, help="the service's request_timeout")
    parser.add_argument("--warm", action="store_true", help="a burst of warm turns (users seen before)")
    parser.add_argument("--pre", type=float, default=0.3, help="seconds between the burst and the stop")
    asyncio.run(main(parser.parse_args()))
