"""A burst of threat-protection sends against a slow but healthy endpoint: is every record delivered?

The emulator's threat-protection route answers 200 after ``--latency`` seconds (fault injection); the
tooling service sends ``--sends`` records at once with its default settings (``chat_history_timeout``
bounds each send's time on the wire, ``chat_history_queue_timeout`` its wait for one of the
``chat_history_concurrency`` slots). Reports how many records the endpoint received, how many sends
failed (and why) and the wall time.

    uv run python scripts/rtp_slow_burst.py                      # 1,000 sends, 2 s latency
    uv run python scripts/rtp_slow_burst.py --sends 200 --latency 1

Exit status 1 when a record is lost.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from agents_a365.emulator import Emulator, Fault
from agents_a365.tooling import ChatHistoryMessage, McpToolServerConfigurationService, ToolingConfiguration

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.turns import make_turn_context


async def run(sends: int, latency: float) -> int:
    history = [ChatHistoryMessage(id="m1", role="user", content="hi", timestamp=datetime.now(UTC))]
    async with Emulator() as emu:
        emu.faults.set("rtp", Fault(latency_ms=latency * 1000))
        cfg = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
        async with McpToolServerConfigurationService(cfg) as svc:
            turns = [
                make_turn_context(activity_id=f"burst-{i}", conversation_id=f"c-{i}") for i in range(sends)
            ]
            started = time.perf_counter()
            results = await asyncio.gather(*(svc.send_chat_history(turn, history) for turn in turns))
            wall = time.perf_counter() - started
        received = {r.json.get("messageId") for r in emu.requests_for("rtp") if isinstance(r.json, dict)}
    expected = {f"burst-{i}" for i in range(sends)}
    lost = expected - received
    failures = collections.Counter(
        str(result.errors[0]).split(":")[0][:80] for result in results if not result.succeeded
    )
    print(
        f"sends={sends} latency={latency:g}s concurrency={cfg.chat_history_concurrency} "
        f"chat_history_timeout={cfg.chat_history_timeout:g}s queue_timeout={cfg.chat_history_queue_timeout:g}s"
    )
    print(f"delivered={len(expected & received)} lost={len(lost)} failed_sends={sum(failures.values())}")
    for reason, count in failures.most_common():
        print(f"  {count} x {reason}")
    print(f"wall={wall:.1f}s")
    return 1 if lost else 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sends", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=2.0, help="seconds before the endpoint answers")
    args = parser.parse_args()
    sys.exit(asyncio.run(run(args.sends, args.latency)))


if __name__ == "__main__":
    main()
