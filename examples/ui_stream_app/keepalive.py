"""SSE keep-alive: a comment frame whenever the agent is silent for a while (e.g. during a long tool call).

Idle proxies and load balancers cut connections that carry no bytes for 30-100 s; SSE comments (lines
starting with ``:``) keep them open and every SSE client, the AI SDK's included, ignores them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

KEEPALIVE_INTERVAL = 15.0
KEEPALIVE_FRAME = ": keep-alive\n\n"
_DONE = object()


async def with_keepalive(frames: AsyncIterator[str], interval: float) -> AsyncIterator[str]:
    """``frames`` with :data:`KEEPALIVE_FRAME` inserted after each ``interval`` seconds of silence.

    ``frames`` is consumed by one task of its own (orchestrators keep context variables and cancel scopes
    per task), one frame ahead at most; closing this iterator cancels that task, which cancels the run.
    """
    queue: asyncio.Queue[object] = asyncio.Queue(maxsize=1)

    async def pump() -> None:
        try:
            async for frame in frames:
                await queue.put(frame)
        finally:
            aclose = getattr(frames, "aclose", None)
            if aclose is not None:
                await aclose()
        await queue.put(_DONE)

    producer = asyncio.ensure_future(pump())
    try:
        while True:
            getter = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait(
                (getter, producer), timeout=interval, return_when=asyncio.FIRST_COMPLETED
            )
            if getter not in done:
                getter.cancel()
                if producer in done and queue.empty():
                    producer.result()  # re-raises the run's error; a clean end always queues _DONE first
                    return
                if not done:
                    yield KEEPALIVE_FRAME
                continue
            item = getter.result()
            if item is _DONE:
                return
            assert isinstance(item, str)
            yield item
    finally:
        producer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await producer
