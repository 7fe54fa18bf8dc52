"""How long the event loop is held: a monitor task measuring its own scheduling delay (issue 27).

Between two ticks of the monitor (5 ms apart when nothing holds the loop) it records

* ``wall``: the scheduling delay, what every other conversation of the host waits (a loaded machine adds
  to it, so tests report it but do not assert on it);
* ``cpu``: the CPU time **of the whole process** (every thread): the cost of the step that held the loop,
  whatever else the machine runs. The whole process and not the loop's thread: a worker thread in a long
  C call (``json.loads``) holds the GIL, so the loop, while the loop's own thread spends no CPU time.

The collector is off while measuring: its pauses are not steps of ours (CPython's full collection
traverses every live object: the definitions of 3,000 large tools are a million of them; see
docs/performance.md), and a callback timing them would run Python code inside a worker's C call, letting the
loop in where it otherwise could not. It is not run at the end either: in a worker that imported the whole
suite one full collection costs ~0.35 s, and these tests run while the other cores wait (serial).
"""

from __future__ import annotations

import asyncio
import gc
import time

__all__ = ["LagMonitor"]

TICK = 0.005


class LagMonitor:
    """``async with LagMonitor() as monitor: ...``; then ``monitor.cpu`` and ``monitor.wall`` (the longest
    interval of each), in seconds."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0
        self._since: tuple[float, float] | None = None
        self._task: asyncio.Task[None] | None = None
        self._collecting = True

    def _tick(self) -> None:
        """Close the interval since the last tick (the one a step may have held) and open the next."""
        now, cpu = asyncio.get_running_loop().time(), time.process_time()
        if self._since is not None:
            self.wall = max(self.wall, now - self._since[0] - TICK)
            self.cpu = max(self.cpu, cpu - self._since[1])
        self._since = (now, cpu)

    async def _run(self) -> None:
        while True:
            self._tick()
            await asyncio.sleep(TICK)

    async def __aenter__(self) -> LagMonitor:
        self._collecting = gc.isenabled()
        gc.disable()  # no collection first: what is there is not measured
        self._task = asyncio.create_task(self._run())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._task is not None
        self._tick()  # the last interval too: a step that never yielded shows here
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        if self._collecting:
            gc.enable()

    def report(self) -> str:
        return f"longest step {self.cpu * 1e3:.0f} ms CPU (wall lag {self.wall * 1e3:.0f} ms)"
