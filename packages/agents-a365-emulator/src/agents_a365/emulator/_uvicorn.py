"""uvicorn's ``Server`` tuned for an in-process emulator that tests start and stop hundreds of times."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Generator

import uvicorn

logger = logging.getLogger("agents_a365.emulator")

# How often waits for connections to drain look again; uvicorn's own loops poll every 0.1 s, which made
# stopping an emulator cost about 0.2 s (a tenth of the whole test suite's time).
_DRAIN_POLL = 0.002
# The Date header is refreshed this often while serving (uvicorn: once a second).
_TICK = 1.0


class InProcessServer(uvicorn.Server):
    """A uvicorn server that leaves signal handlers alone and stops as soon as it is asked to.

    ``request_exit()`` wakes the main loop at once instead of at its next 0.1 s tick, and shutdown waits
    for connections and tasks with a short poll instead of uvicorn's fixed 0.1 s sleeps. Graceful
    semantics are unchanged: new connections stop, open ones are asked to finish, tasks still running
    after ``timeout_graceful_shutdown`` are cancelled, then the lifespan shutdown runs.
    """

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._exit_requested = asyncio.Event()

    def request_exit(self) -> None:
        self.should_exit = True
        self._exit_requested.set()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield

    async def main_loop(self) -> None:
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 10) % 864000  # each pass is a second: on_tick refreshes the Date header
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_TICK):
                    await self._exit_requested.wait()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        try:
            async with asyncio.timeout(self.config.timeout_graceful_shutdown):
                # uvicorn offers no event for "drained": poll, briefly.
                while (  # noqa: ASYNC110
                    self.server_state.connections or self.server_state.tasks
                ) and not self.force_exit:
                    await asyncio.sleep(_DRAIN_POLL)
        except TimeoutError:
            logger.error(
                "cancelling %d request task(s) still running at shutdown", len(self.server_state.tasks)
            )
            for task in self.server_state.tasks:
                task.cancel()
        for server in self.servers:
            await server.wait_closed()
        if not self.force_exit:
            await self.lifespan.shutdown()
