"""The in-process uvicorn server: a fast, signal-free stop and a socket bound before it starts."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Generator

import uvicorn

__all__ = ["InProcessServer", "bind", "serve"]

logger = logging.getLogger("agents_a365.emulator")

_SHUTDOWN_POLL = 0.005


class InProcessServer(uvicorn.Server):
    """A uvicorn server that leaves the process's signal handlers alone and stops without idle waits.

    uvicorn polls ``should_exit`` every 0.1 s and sleeps another 0.1 s (plus 0.1 s polls) while shutting
    down: about 0.2 s per stop, which dominated the test suite's teardown. Here :meth:`request_exit` wakes
    the main loop at once and shutdown polls finely; the graceful timeout still bounds the whole wait.
    """

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._wake = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield

    def request_exit(self) -> None:
        self.should_exit = True
        self._wake.set()

    async def main_loop(self) -> None:
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            # on_tick refreshes the Date header every 10 ticks: keep uvicorn's 0.1 s tick while idle.
            # asyncio.timeout, not wait_for: no helper task (on 3.11) for leak checks to see.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.1):
                    await self._wake.wait()
            should_exit = await self.on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()  # idle keep-alive connections close now, busy ones after their response
        try:
            async with asyncio.timeout(self.config.timeout_graceful_shutdown):
                # uvicorn exposes no event for "all connections closed": poll its state, finely.
                while self.server_state.connections:  # noqa: ASYNC110
                    await asyncio.sleep(_SHUTDOWN_POLL)
        except TimeoutError:
            logger.warning(
                "Emulator: cancelling %d request(s) still running after the graceful shutdown timeout",
                len(self.server_state.tasks),
            )
        # Requests still running now have no connection: their client has gone (e.g. it timed out during
        # an injected latency) and nobody reads the answer, so they are cancelled rather than awaited.
        orphans = list(self.server_state.tasks)
        for task in orphans:
            task.cancel()
        if orphans:
            await asyncio.wait(orphans, timeout=self.config.timeout_graceful_shutdown)
        with contextlib.suppress(TimeoutError):  # a connection still open after the timeout: do not hang
            async with asyncio.timeout(self.config.timeout_graceful_shutdown):
                for server in self.servers:
                    await server.wait_closed()
        await self.lifespan.shutdown()


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``OSError`` if the port is taken)."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


async def serve(server: uvicorn.Server, listener: socket.socket) -> None:
    """Run uvicorn on ``listener``, turning its ``sys.exit`` on startup failure into an ordinary error."""
    try:
        await server.serve(sockets=[listener])
    except SystemExit as exc:
        raise RuntimeError(f"uvicorn exited with status {exc.code} (see the log for the cause)") from None
