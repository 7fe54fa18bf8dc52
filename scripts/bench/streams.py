"""Target 6: UI message stream converters, time per chunk and peak memory.

LangChain: ``stream_langgraph`` over ``("messages", (AIMessageChunk, metadata))`` events; OpenAI:
``OpenAIUIStreamConverter.frames`` over ``RawResponsesStreamEvent(ResponseTextDeltaEvent)``. Events are generated
lazily (memory is the converter's own): ``tracemalloc`` peak at a tenth of ``--chunks`` and at ``--chunks``. Time
per chunk without ``tracemalloc``, the events' generation subtracted; floor: ``json.dumps`` of a ``text-delta`` SSE
frame.
"""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable
from typing import Any

from _common import check, checks, median, start, table
from agents import RawResponsesStreamEvent
from langchain_core.messages import AIMessageChunk
from openai.types.responses import ResponseTextDeltaEvent

from agents_a365.tooling.extensions.langchain.ui_stream import stream_langgraph
from agents_a365.tooling.extensions.openai.ui_stream import OpenAIUIStreamConverter


async def lc_events(n: int) -> AsyncIterator[Any]:
    for i in range(n):
        yield ("messages", (AIMessageChunk(content=f"tok{i % 10} ", id="run-1"), {"langgraph_node": "model"}))


async def oa_events(n: int) -> AsyncIterator[Any]:
    for i in range(n):
        delta = {"delta": f"tok{i % 10} ", "item_id": "msg_1", "output_index": 0, "content_index": 0}
        data = ResponseTextDeltaEvent(
            type="response.output_text.delta", sequence_number=i, logprobs=[], **delta
        )
        yield RawResponsesStreamEvent(data=data)


CONVERTERS: dict[
    str, tuple[Callable[[int], AsyncIterator[Any]], Callable[[AsyncIterator[Any]], AsyncIterator[str]]]
] = {
    "LangChain": (lc_events, lambda events: stream_langgraph(events, message_id="m1")),
    "OpenAI": (oa_events, lambda events: OpenAIUIStreamConverter(message_id="m1").frames(events)),
}


async def drain(stream: AsyncIterator[Any]) -> tuple[float, int]:
    """Seconds to read ``stream`` to its end, and its items."""
    t0, count = time.perf_counter(), 0
    async for _ in stream:
        count += 1
    return time.perf_counter() - t0, count


async def peak(stream: AsyncIterator[str]) -> int:
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    await drain(stream)
    result = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return result


async def main() -> None:
    args = start("UI stream converters (target 6)", chunks=100_000)
    n, small = args.chunks, args.chunks // 10
    chunk = {"type": "text-delta", "id": "t1", "delta": "tok1 "}
    t0 = time.perf_counter()
    for _ in range(n):
        f"data: {json.dumps(chunk, separators=(',', ':'))}\n\n"
    floor = (time.perf_counter() - t0) / n
    rows, results = [], []
    for name, (events, convert) in CONVERTERS.items():
        await drain(convert(events(1000)))  # warm-up
        runs = [await drain(convert(events(n))) for _ in range(3)]
        elapsed = median([r[0] for r in runs])
        generation = median([(await drain(events(n)))[0] for _ in range(3)])
        p_small, p_big = await peak(convert(events(small))), await peak(convert(events(n)))
        per_chunk = (elapsed - generation) / n
        rows.append([name, f"{elapsed * 1000:.0f} ms", f"{generation * 1000:.0f} ms", f"{per_chunk * 1e6:.2f} µs",
                     f"{per_chunk / floor:.1f}x", runs[0][1], f"{p_small / 1024:.0f} KiB", f"{p_big / 1024:.0f} KiB"])  # fmt: skip
        results.append(check("6", f"{name}: peak memory {n:,} / {small:,} chunks", p_big / p_small, 1.1))
        results.append(
            ["6", f"{name}: converter time per chunk", f"{per_chunk * 1e6:.2f} µs", "(report)", ""]
        )
    print(f"{n:,} chunks (median of 3); event generation measured separately and subtracted\n")
    table(rows, ["converter", f"{n:,} chunks", "events alone", "per chunk (converter)", "vs json.dumps SSE floor",
                 "frames", f"peak {small:,}", f"peak {n:,}"])  # fmt: skip
    print(f"floor: json.dumps of one text-delta chunk as an SSE frame = {floor * 1e6:.2f} µs\n")
    checks(results)


if __name__ == "__main__":
    asyncio.run(main())
