"""Load run: N concurrent agent turns through the emulator on loopback, over several rounds.

Each turn is a real hosting-core turn of its own user (own conversation, activity, agent blueprint and
sub-channel, so its headers are its own) and, through the LangChain extension's per-turn scope,

1. discovers and registers the MCP tools (gateway, one token exchange per audience, one MCP session
   per server: ``mail`` V1 and ``calendar`` V2),
2. calls one MCP tool (``search_emails`` with a query unique to the turn),
3. sends its chat history to threat protection.

Then every threat-protection record and every ``tools/call`` the emulator saw is checked against the
turn it claims to belong to: ids, user message, history, ``x-ms-agentid``/``x-ms-subchannel-id``/
``User-Agent`` headers, and (for tool calls) the user the bearer token was minted for. Resident memory
(VmRSS after ``gc.collect()``) is measured after each round.

    uv run python scripts/load.py                 # 1,000 turns x 3 rounds
    uv run python scripts/load.py --turns 200 --rounds 3

Exit status 1 when a record is lost, a record is mixed up, a turn fails, or memory grows 10% or more
from round 2 to round 3.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage

from agents_a365.emulator import Emulator, TokenIssuer
from agents_a365.emulator.turns import make_turn_context
from agents_a365.runtime import get_user_agent_header
from agents_a365.tooling import ToolingConfiguration
from agents_a365.tooling.extensions.langchain import ORCHESTRATOR_NAME, McpToolRegistrationService

AUTH_HANDLER = "AGENTIC"
MEMORY_GROWTH_LIMIT = 0.10


@dataclass(frozen=True)
class TurnIds:
    round: int
    index: int

    @property
    def tag(self) -> str:
        return f"r{self.round}t{self.index}"

    @property
    def user(self) -> str:
        return f"user-{self.tag}"

    @property
    def conversation(self) -> str:
        return f"conversation-{self.tag}"

    @property
    def activity(self) -> str:
        return f"activity-{self.tag}"

    @property
    def blueprint(self) -> str:
        return f"blueprint-{self.tag}"

    @property
    def sub_channel(self) -> str:
        return f"sub-{self.tag}"

    @property
    def text(self) -> str:
        return f"Find the mail about {self.tag}"


@dataclass
class RoundResult:
    round: int
    turns: int
    seconds: float
    failed_turns: list[str] = field(default_factory=list)
    lost_records: int = 0
    duplicate_records: int = 0
    mixed_up: list[str] = field(default_factory=list)
    tool_calls_checked: int = 0
    rss_kib: int = 0

    @property
    def ok(self) -> bool:
        return not (self.failed_turns or self.lost_records or self.duplicate_records or self.mixed_up)


def rss_kib() -> int:
    """Resident memory of this process after a full collection (``VmRSS``, KiB)."""
    gc.collect()
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("VmRSS not found in /proc/self/status")


async def one_turn(service: McpToolRegistrationService, emu: Emulator, ids: TurnIds) -> None:
    turn = make_turn_context(
        text=ids.text,
        activity_id=ids.activity,
        conversation_id=ids.conversation,
        channel_id=f"msteams:{ids.sub_channel}",
        user_id=ids.user,
        agentic_app_id=emu.config.agent_id,
        blueprint_id=ids.blueprint,
    )
    async with service.mcp_tools(emu.authorization(), AUTH_HANDLER, turn) as toolset:
        tools = {t.name: t for t in toolset.tools()}
        answer = await tools["search_emails"].ainvoke({"query": ids.tag})
    history = [
        HumanMessage(ids.text, id=f"{ids.tag}-m1"),
        AIMessage(f"searched: {str(answer)[:40]}", id=f"{ids.tag}-m2"),
    ]
    result = await service.send_chat_history_from_messages(turn, history)
    if not result.succeeded:
        raise RuntimeError(f"threat protection failed: {result}")


def check_round(emu: Emulator, round_no: int, turns: int, result: RoundResult) -> None:
    expected = {TurnIds(round_no, i).conversation: TurnIds(round_no, i) for i in range(turns)}
    # The LangChain extension sends: its own name and version (not the core's).
    user_agent = get_user_agent_header(
        ORCHESTRATOR_NAME, distribution=McpToolRegistrationService.distribution
    )
    seen: dict[str, int] = {}
    for request in emu.requests_for("rtp"):
        if request.status != 200:
            continue
        body = request.json if isinstance(request.json, dict) else {}
        conversation = str(body.get("conversationId"))
        seen[conversation] = seen.get(conversation, 0) + 1
        ids = expected.get(conversation)
        problems = []
        if ids is None:
            problems.append("unknown conversation")
        else:
            if body.get("messageId") != ids.activity:
                problems.append(f"messageId {body.get('messageId')!r}")
            if body.get("userMessage") != ids.text:
                problems.append(f"userMessage {body.get('userMessage')!r}")
            history = body.get("chatHistory") or []
            if [m.get("id") for m in history] != [f"{ids.tag}-m1", f"{ids.tag}-m2"] or history[0].get(
                "content"
            ) != ids.text:
                problems.append("chatHistory")
            if request.headers.get("x-ms-agentid") != ids.blueprint:
                problems.append(f"x-ms-agentid {request.headers.get('x-ms-agentid')!r}")
            if request.headers.get("x-ms-subchannel-id") != ids.sub_channel:
                problems.append(f"x-ms-subchannel-id {request.headers.get('x-ms-subchannel-id')!r}")
            if request.headers.get("user-agent") != user_agent:
                problems.append("user-agent")
        if problems:
            result.mixed_up.append(f"rtp {conversation}: {', '.join(problems)}")
    result.lost_records = sum(1 for c in expected if c not in seen)
    result.duplicate_records = sum(n - 1 for n in seen.values() if n > 1)

    by_sub_channel = {ids.sub_channel: ids for ids in expected.values()}
    calls = [r for r in emu.requests_for("mcp", server="mail") if r.jsonrpc_method == "tools/call"]
    for request in calls:
        ids = by_sub_channel.get(request.headers.get("x-ms-subchannel-id") or "")
        problems = []
        if ids is None:
            problems.append("unknown sub-channel")
        else:
            params = request.json.get("params", {}) if isinstance(request.json, dict) else {}
            if params.get("arguments", {}).get("query") != ids.tag:
                problems.append(f"arguments {params.get('arguments')!r}")
            token = (request.headers.get("authorization") or "").removeprefix("Bearer ")
            if TokenIssuer.decode_unverified(token).get("oid") != ids.user:
                problems.append("token of another user")
            if request.headers.get("x-ms-agentid") != ids.blueprint:
                problems.append("x-ms-agentid")
        if problems:
            result.mixed_up.append(
                f"tools/call {request.headers.get('x-ms-subchannel-id')}: {', '.join(problems)}"
            )
    result.tool_calls_checked = len(calls)
    if len(calls) != turns:
        result.mixed_up.append(f"{len(calls)} tools/call requests for {turns} turns")


async def run_round(
    service: McpToolRegistrationService, emu: Emulator, round_no: int, turns: int
) -> RoundResult:
    emu.reset()  # recordings of this round only (the emulator's memory, not the SDK's)
    started = time.monotonic()
    outcomes = await asyncio.gather(
        *(one_turn(service, emu, TurnIds(round_no, i)) for i in range(turns)), return_exceptions=True
    )
    result = RoundResult(round=round_no, turns=turns, seconds=time.monotonic() - started)
    for i, outcome in enumerate(outcomes):
        if isinstance(outcome, BaseException):
            result.failed_turns.append(f"{TurnIds(round_no, i).tag}: {type(outcome).__name__}: {outcome}")
    check_round(emu, round_no, turns, result)
    emu.reset()
    result.rss_kib = rss_kib()
    return result


@dataclass
class LoadReport:
    turns: int
    rounds: list[RoundResult]

    @property
    def memory_growth(self) -> float:
        """Relative RSS growth from the second-to-last round to the last (round 2 -> 3 by default)."""
        if len(self.rounds) < 2:
            return 0.0
        before, after = self.rounds[-2].rss_kib, self.rounds[-1].rss_kib
        return (after - before) / before

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rounds) and self.memory_growth < MEMORY_GROWTH_LIMIT

    def table(self) -> str:
        lines = [
            f"{self.turns} concurrent turns per round (LangChain per-turn scope, emulator on loopback)",
            "round | seconds | turns/s | failed turns | lost records | duplicates | mix-ups | tool calls checked | RSS MiB",
            "----- | ------- | ------- | ------------ | ------------ | ---------- | ------- | ------------------ | -------",
        ]
        for r in self.rounds:
            lines.append(
                f"{r.round} | {r.seconds:.1f} | {r.turns / r.seconds:.0f} | {len(r.failed_turns)} | "
                f"{r.lost_records} | {r.duplicate_records} | {len(r.mixed_up)} | {r.tool_calls_checked} | "
                f"{r.rss_kib / 1024:.1f}"
            )
        lines.append(
            f"memory growth round {len(self.rounds) - 1} -> {len(self.rounds)}: {self.memory_growth:+.1%}"
        )
        for r in self.rounds:
            for problem in (r.failed_turns + r.mixed_up)[:5]:
                lines.append(f"  round {r.round}: {problem}")
        return "\n".join(lines)


async def run_load(turns: int = 1000, rounds: int = 3, request_timeout: float = 60.0) -> LoadReport:
    """``rounds`` rounds of ``turns`` concurrent turns against one in-process emulator.

    ``request_timeout`` bounds each connection phase and MCP request: all turns start at once, so
    the last ones queue behind the others on a loaded machine (the SDK's default is 10 s).
    """
    report = LoadReport(turns=turns, rounds=[])
    async with Emulator() as emu:
        configuration = ToolingConfiguration(
            mcp_platform_endpoint=emu.base_url,
            use_tooling_manifest=False,
            request_timeout=request_timeout,
            chat_history_timeout=request_timeout,
        )
        async with McpToolRegistrationService(configuration=configuration) as service:
            for round_no in range(1, rounds + 1):
                report.rounds.append(await run_round(service, emu, round_no, turns))
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--request-timeout", type=float, default=60.0)
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    report = asyncio.run(run_load(args.turns, args.rounds, args.request_timeout))
    print(report.table())
    if args.json:
        print(
            json.dumps(
                {
                    "turns": report.turns,
                    "memory_growth": report.memory_growth,
                    "rounds": [
                        {
                            "round": r.round,
                            "seconds": r.seconds,
                            "failed_turns": len(r.failed_turns),
                            "lost_records": r.lost_records,
                            "duplicate_records": r.duplicate_records,
                            "mixed_up": len(r.mixed_up),
                            "rss_kib": r.rss_kib,
                        }
                        for r in report.rounds
                    ],
                }
            )
        )
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
