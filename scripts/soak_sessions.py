"""Soak of pooled MCP sessions with expiring caches (issue 27): warm LangChain turns against the emulator.

    python scripts/soak_sessions.py [--turns 5000] [--parallel 8]

Eight turns at a time, each registering the per-call tools (``get_mcp_tools``) of one of five users and
calling both servers' tools, while time passes on an injected clock: 1 s per step of a background ticker
that prunes the pool (as its idle timer does) and 15 s between batches, against TTLs of 30 to 60 s (the
issue's 1 to 2 s TTLs for turns 0.5 s apart, scaled by 30). Sessions go idle, tokens expire and cached
definitions expire while calls are in flight. Prints turns, failures, and tasks / sockets / RSS before
and after (the test ``tests/reliability/test_session_lifetime.py`` runs the same soak, shorter).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import time

from agents_a365.emulator import Emulator, EmulatorConfig
from agents_a365.emulator.turns import make_turn_context
from agents_a365.tooling import McpToolServerConfigurationService, ToolingConfiguration
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _sockets() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    return count


def _rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _state() -> str:
    return f"tasks {len(asyncio.all_tasks())}, sockets {_sockets()}, RSS {_rss_mib():.0f} MiB"


async def soak(turns: int, parallel: int) -> None:
    async with Emulator(EmulatorConfig(mcp_stateless=False, max_recorded_requests=10_000)) as emu:
        before = _state()
        clock = Clock()
        config = ToolingConfiguration(
            mcp_platform_endpoint=emu.base_url,
            use_tooling_manifest=False,
            tool_cache_ttl=30.0,
            discovery_cache_ttl=30.0,
            mcp_session_idle_timeout=45.0,
            token_expiry_skew=3600 - 60,  # one-hour tokens: 60 s left on the pool's clock
        )
        failures: collections.Counter[str] = collections.Counter()
        started = time.perf_counter()
        core = McpToolServerConfigurationService(config, clock=clock)
        async with core, McpToolRegistrationService(core) as service:

            async def turn(number: int) -> None:
                activity = make_turn_context(user_id=f"user-{number % 5}", agentic_app_id=emu.config.agent_id)
                try:
                    tools = {
                        t.name: t
                        for t in await service.get_mcp_tools(emu.authorization(), "agentic", activity)
                    }
                    await asyncio.gather(
                        tools["list_emails"].ainvoke({}), tools["list_events"].ainvoke({"date": "2026-01-01"})
                    )
                except Exception as exc:
                    failures[type(exc).__name__] += 1

            async def time_passes(done: asyncio.Event) -> None:
                while not done.is_set():
                    clock.now += 1.0
                    service.session_pool.prune()
                    await asyncio.sleep(0.002)

            for start in range(0, turns, parallel):
                done = asyncio.Event()
                ticker = asyncio.create_task(time_passes(done))
                await asyncio.gather(*(turn(n) for n in range(start, min(start + parallel, turns))))
                done.set()
                await ticker
                clock.now += 15.0
            during = _state()
            opened = service.session_pool.opened
        await asyncio.sleep(0.5)  # the emulator's handlers finish after the client closed
        after = _state()
        print(
            f"turns {turns}, failures {sum(failures.values())} {dict(failures)}, "
            f"{time.perf_counter() - started:.0f} s, pooled sessions opened {opened}"
        )
        print(f"before: {before}\nwith the service open: {during}\nafter aclose: {after}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument("--parallel", type=int, default=8)
    args = parser.parse_args()
    asyncio.run(soak(args.turns, args.parallel))


if __name__ == "__main__":
    main()
