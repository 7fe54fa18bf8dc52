"""Target 27: parsing a 15 MiB ``tools/list`` answer (3,000 tools), mcp's transport next to ours, same run.

mcp's transport validates the answer in one C call (``JSONRPCMessage.model_validate_json``), holding the loop;
ours (``_mcp_pages.py`` over ``_stepwise.py``) parses it element by element in 5 ms slices. Per run: each one's
total time and the longest hold of the loop (``tests/support/loop_lag.py``, the collector off).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from _common import ROOT, start
from mcp.types import JSONRPCMessage

from agents_a365.tooling._mcp_pages import _page
from agents_a365.tooling._stepwise import run_cooperatively

sys.path[:0] = [str(ROOT / "tests")]
from support.loop_lag import LagMonitor  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {f"p{p}": {"type": "string", "description": "d" * 44} for p in range(60)},
}
TOOLS = [{"name": f"tool_{n}", "description": f"tool {n}", "inputSchema": SCHEMA} for n in range(3000)]
ANSWER = json.dumps({"jsonrpc": "2.0", "id": "a365-list-1", "result": {"tools": TOOLS}}).encode()


async def main() -> None:
    args = start("A 15 MiB tools/list answer: the loop's longest hold (target 27)", runs=3)
    print(f"a tools/list answer of {len(ANSWER) / 2**20:.1f} MiB, 3,000 tools")
    kept = []  # the results stay alive: freeing a million objects is not the parse's cost
    for _ in range(args.runs):
        async with LagMonitor() as theirs:
            started = time.perf_counter()
            kept.append(JSONRPCMessage.model_validate_json(ANSWER))
            their_total = time.perf_counter() - started
        async with LagMonitor() as ours:
            started = time.perf_counter()
            kept.append(await run_cooperatively(_page(ANSWER, "a365-list-1", "big")))
            our_total = time.perf_counter() - started
        print(
            f"mcp's transport: {their_total * 1e3:.0f} ms, the loop held {theirs.cpu * 1e3:.0f} ms | "
            f"ours: {our_total * 1e3:.0f} ms, the loop held at most {ours.cpu * 1e3:.0f} ms"
        )


if __name__ == "__main__":
    asyncio.run(main())
