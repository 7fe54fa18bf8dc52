"""Issue 26: the SDK's own CPU in a warm turn, and how it grows with the number of servers.

    uv run python scripts/bench/warm_turn.py [--servers 8,32] [--runs 3]

No orchestrator run and no model: per turn, what the SDK does for the user's agent, by itself.

- LangChain: ``mcp_tools`` (discovery, every server's tools as LangChain tools), ``toolset.tools()``, one
  ``list_notes`` call through its tool, one threat-protection send;
- OpenAI: ``connected_agent`` (discovery, one ``A365MCPServer`` per server), every server's ``list_tools``
  (what the runner asks before each model call), one ``call_tool``, one send.

16 users (``--users``), each warm (two unmeasured turns), then 12 rounds (``--rounds``) of their turns at once. Each count of
servers runs in a fresh process (``--child``) against one emulator (no latency added), the counts
alternating, ``--runs`` times; the table gives the median CPU (``time.process_time``) per turn. Stop 33 and
34 used it to find where the SDK's per-server cost went (docs/performance.md, "Stop 34").
"""

from __future__ import annotations

import asyncio
import logging
import statistics
from pathlib import Path
from typing import Any

from _common import (
    EmulatorProcess,
    agent_id_for,
    child_parser,
    child_runs,
    cpu_per_turn,
    header,
    make_turn,
    table,
)


async def child(url: str, secret: str, orchestrator: str, servers: int, users: int, rounds: int) -> float:
    from agents_a365.tooling import McpToolServerConfigurationService, ToolingConfiguration

    config = ToolingConfiguration(
        mcp_platform_endpoint=url, use_tooling_manifest=False, allow_insecure_http=True
    )
    auth = EmulatorProcess(url, secret, None).authorization()
    turns = [make_turn(agent_id_for(servers), user=f"u{i}") for i in range(users)]
    async with McpToolServerConfigurationService(config) as core:
        if orchestrator == "langchain":
            from agents_a365.tooling.extensions.langchain import McpToolRegistrationService as LangChain

            service: Any = LangChain(core)

            async def work(turn: Any) -> None:
                async with service.mcp_tools(auth, "AGENTIC", turn) as toolset:
                    tool = next(t for t in toolset.tools() if t.name.endswith("list_notes"))
                    await tool.ainvoke({})
        else:
            from agents import Agent, RunContextWrapper

            from agents_a365.tooling.extensions.openai import McpToolRegistrationService as OpenAI

            service = OpenAI(core)
            template = Agent(name="Mailer", instructions="x")

            async def work(turn: Any) -> None:
                async with service.connected_agent(template, auth, "AGENTIC", turn) as agent:
                    context = RunContextWrapper(context=None)
                    listed = [(s, t) for s in agent.mcp_servers for t in await s.list_tools(context, agent)]
                    server, tool = next((s, t) for s, t in listed if t.name.endswith("list_notes"))
                    await server.call_tool(tool.name, {})

        async def one(turn: Any) -> None:
            await work(turn)
            if not (await core.send_chat_history(turn, [])).succeeded:
                raise RuntimeError("a threat-protection send failed")

        return await cpu_per_turn(
            one, turns, rounds, warm=2
        )  # cold, then warm: every cache and session in place


def main() -> None:
    parser = child_parser(__doc__, users=16, rounds=12, child=("ORCHESTRATOR", "SERVERS"))
    parser.add_argument("--orchestrators", default="langchain,openai")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    if args.child:
        url, secret, orchestrator, servers = args.child
        print(f"{asyncio.run(child(url, secret, orchestrator, int(servers), args.users, args.rounds)):.6f}")
        return
    counts = [int(n) for n in args.servers.split(",")]
    orchestrators = args.orchestrators.split(",")
    header("The SDK's part of a warm turn (issue 26)", "uv run python scripts/bench/warm_turn.py")
    keys = [(o, str(n)) for o in orchestrators for n in counts]
    flags = [f"--users={args.users}", f"--rounds={args.rounds}"]
    cpu = child_runs(Path(__file__), keys, args.runs, counts, flags)
    rows = []
    for o in orchestrators:
        base = statistics.median(cpu[(o, str(counts[0]))])
        for n in counts:
            value = statistics.median(cpu[(o, str(n))])
            rows.append([o, str(n), f"{value * 1000:.2f} ms", f"{value / base:.2f}"])
    table(rows, ["orchestrator", "servers", "SDK CPU per warm turn (median)", f"/ {counts[0]} servers"])


if __name__ == "__main__":
    main()
