"""Issue 9, target 6: UI message stream converters, time per chunk and peak memory.

    uv run python scripts/bench/streams.py [--chunks 100000]

LangChain: ``stream_langgraph`` over ``("messages", (AIMessageChunk, metadata))`` events (what
``astream(stream_mode=["messages", "updates"])`` yields for a streamed answer). OpenAI:
``OpenAIUIStreamConverter.frames`` over ``RawResponsesStreamEvent(ResponseTextDeltaEvent)`` events.
The events are generated lazily, so memory is the converter's own: ``tracemalloc`` peak over a
10,000-chunk and a 100,000-chunk stream (target: at most 1.1x). Time per chunk from a separate run
without ``tracemalloc``; floor: ``json.dumps`` of the equivalent ``text-delta`` chunk as an SSE frame.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable
from typing import Any

from _common import header, table, verdict
from agents import RawResponsesStreamEvent
from langchain_core.messages import AIMessageChunk
from openai.types.responses import ResponseTextDeltaEvent

from agents_a365.tooling.extensions.langchain.ui_stream import stream_langgraph
from agents_a365.tooling.extensions.openai.ui_stream import OpenAIUIStreamConverter


async def lc_events(n: int) -> AsyncIterator[Any]:
    meta = {"langgraph_node": "model"}
    for i in range(n):
        yield ("messages", (AIMessageChunk(content=f"tok{i % 10} ", id="run-1"), meta))


async def oa_events(n: int) -> AsyncIterator[Any]:
    for i in range(n):
        data = ResponseTextDeltaEvent(
            type="response.output_text.delta",
            delta=f"tok{i % 10} ",
            item_id="msg_1",
            output_index=0,
            content_index=0,
            sequence_number=i,
            logprobs=[],
        )
        yield RawResponsesStreamEvent(data=data)


def lc_frames(n: int) -> AsyncIterator[str]:
    return stream_langgraph(lc_events(n), message_id="m1")


def oa_frames(n: int) -> AsyncIterator[str]:
    return OpenAIUIStreamConverter(message_id="m1").frames(oa_events(n))


async def drain(frames: AsyncIterator[str]) -> int:
    count = 0
    async for _ in frames:
        count += 1
    return count


async def timed(make: Callable[[int], AsyncIterator[str]], n: int) -> tuple[float, int]:
    t0 = time.perf_counter()
    count = await drain(make(n))
    return time.perf_counter() - t0, count


async def events_only(make: Callable[[int], AsyncIterator[Any]], n: int) -> float:
    t0 = time.perf_counter()
    async for _ in make(n):
        pass
    return time.perf_counter() - t0


async def peak(make: Callable[[int], AsyncIterator[str]], n: int) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    await drain(make(n))
    result = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return result


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    args = parser.parse_args()
    header("UI stream converters (issue 9, target 6)", "uv run python scripts/bench/streams.py")
    n = args.chunks
    small = n // 10
    rows = []
    checks = []
    floor_chunk = {"type": "text-delta", "id": "t1", "delta": "tok1 "}
    t0 = time.perf_counter()
    for _ in range(n):
        f"data: {json.dumps(floor_chunk, separators=(',', ':'))}\n\n"
    floor = (time.perf_counter() - t0) / n
    for name, make, source in (("LangChain", lc_frames, lc_events), ("OpenAI", oa_frames, oa_events)):
        await timed(make, 1000)  # warm-up
        runs = [await timed(make, n) for _ in range(3)]
        elapsed = sorted(r[0] for r in runs)[1]
        frames = runs[0][1]
        gen = sorted([await events_only(source, n) for _ in range(3)])[1]
        p_small = await peak(make, small)
        p_big = await peak(make, n)
        per_chunk = (elapsed - gen) / n
        rows.append(
            [
                name,
                f"{elapsed * 1000:.0f} ms",
                f"{gen * 1000:.0f} ms",
                f"{per_chunk * 1e6:.2f} µs",
                f"{per_chunk / floor:.1f}x",
                f"{frames}",
                f"{p_small / 1024:.0f} KiB",
                f"{p_big / 1024:.0f} KiB",
            ]
        )
        ratio = p_big / p_small
        checks.append(
            [
                "6",
                f"{name}: peak memory {n:,} / {small:,} chunks",
                f"{ratio:.2f}",
                "<= 1.1",
                verdict(ratio <= 1.1),
            ]
        )
        checks.append(["6", f"{name}: converter time per chunk", f"{per_chunk * 1e6:.2f} µs", "(report)", ""])
    print(f"{n:,} chunks (median of 3); event generation measured separately and subtracted")
    print()
    table(
        rows,
        [
            "converter",
            f"{n:,} chunks",
            "events alone",
            "per chunk (converter)",
            "vs json.dumps SSE floor",
            "frames",
            f"peak {small:,}",
            f"peak {n:,}",
        ],
    )
    print(f"floor: json.dumps of one text-delta chunk as an SSE frame = {floor * 1e6:.2f} µs")
    print()
    table(checks, ["target", "measure", "value", "target", ""])


if __name__ == "__main__":
    asyncio.run(main())
