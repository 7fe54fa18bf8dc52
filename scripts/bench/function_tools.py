"""Issue 26: an OpenAI Agents SDK turn with the servers on ``mcp_servers`` or as function tools.

    uv run python scripts/bench/function_tools.py [--servers 8,32] [--runs 3]

A whole ``Runner.run`` per turn with a scripted two-step model (call ``list_notes``, then answer), after
``connected_agent`` with the default (``mcp_servers``: the Agents SDK converts every server's tools before each
model call) and with ``function_tools=True`` (converted once, at registration). 8 users, each warm, then 10
rounds of their turns at once; each (count, mode) in a fresh process against one emulator (no latency added),
alternating, ``--runs`` times; the table gives the median CPU per turn (``time.process_time``).
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import sys
from pathlib import Path
from typing import Any

from _common import (
    ROOT,
    EmulatorProcess,
    agent_id_for,
    child_parser,
    child_runs,
    cpu_per_turn,
    header,
    make_turn,
    table,
)

MODES = {"mcp_servers": False, "function_tools": True}


async def child(url: str, secret: str, servers: int, function_tools: bool, users: int, rounds: int) -> float:
    sys.path.insert(0, str(ROOT / "tests"))  # the scripted model of the tests: the run is otherwise real
    from agents import Agent, Runner, set_tracing_disabled

    from agents_a365.tooling import McpToolServerConfigurationService, ToolingConfiguration
    from agents_a365.tooling.extensions.openai import McpToolRegistrationService
    from support.scripted_openai import ScriptedModel, assistant_message, function_call

    set_tracing_disabled(True)

    def call(items: list[Any], tools: list[Any]) -> list[Any]:
        return [function_call(next(t.name for t in tools if t.name.endswith("list_notes")), {})]

    def answer(items: list[Any], tools: list[Any]) -> list[Any]:
        return [assistant_message("done")]

    config = ToolingConfiguration(
        mcp_platform_endpoint=url, use_tooling_manifest=False, allow_insecure_http=True
    )
    auth = EmulatorProcess(url, secret, None).authorization()
    turns = [make_turn(agent_id_for(servers), user=f"u{i}") for i in range(users)]
    async with McpToolServerConfigurationService(config) as core:
        service = McpToolRegistrationService(core)

        async def one(turn: Any) -> None:
            template = Agent(name="Mailer", instructions="x", model=ScriptedModel([call, answer]))
            async with service.connected_agent(
                template, auth, "AGENTIC", turn, function_tools=function_tools
            ) as agent:
                await Runner.run(agent, "What is in my notes?")

        return await cpu_per_turn(one, turns, rounds)


def main() -> None:
    parser = child_parser(__doc__, users=8, rounds=10, child=("SERVERS", "MODE"))
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    if args.child:
        url, secret, servers, mode = args.child
        cpu = asyncio.run(child(url, secret, int(servers), MODES[mode], args.users, args.rounds))
        print(f"{cpu:.6f}")
        return
    counts = [int(n) for n in args.servers.split(",")]
    header(
        "OpenAI turns: mcp_servers or function tools (issue 26)",
        "uv run python scripts/bench/function_tools.py",
    )
    keys = [(str(n), mode) for n in counts for mode in MODES]
    flags = [f"--users={args.users}", f"--rounds={args.rounds}"]
    cpu = child_runs(Path(__file__), keys, args.runs, counts, flags)
    rows = []
    for n in counts:
        servers_, functions = (statistics.median(cpu[(str(n), m)]) for m in MODES)
        rows.append(
            [str(n), f"{servers_ * 1000:.2f} ms", f"{functions * 1000:.2f} ms", f"{functions / servers_:.2f}"]
        )
    table(
        rows,
        ["servers", "mcp_servers: CPU/turn", "function_tools=True: CPU/turn", "function tools / servers"],
    )


if __name__ == "__main__":
    main()
