"""One MCP session to one server for one turn, on ``mcp``'s own ``ClientSession``.

Opened by the first request of the turn and shared by every request after it: ``ClientSession`` runs
concurrent requests on one session (each its own POST), so parallel tool calls run in parallel.
The transport (anyio task groups) must be entered and exited in one task: the session lives in a
holder task of its own, so whichever task calls or closes it, and cancelling one call never closes
the session the others use.

When the server says the session is gone (HTTP 404 on its ``mcp-session-id``, reported by the client
as "Session terminated") or it was closed before the request went out, the request is sent once more
on a new session (the server did not run it); a second failure, or a transport that ended while the
request was in flight (the server may have run the tool: never sent twice), raises
:class:`McpServerConnectionError`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from datetime import timedelta
from typing import TypeVar

import anyio
import httpx
from mcp import ClientSession, McpError
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CONNECTION_CLOSED, Tool

from agents_a365.tooling import MCPServerConfig, McpServerConnectionError, prime_output_schemas
from agents_a365.tooling.extensibility import describe_error, mcp_http_client_factory, mcp_session_span

__all__ = ["TurnSession"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_SESSION_TERMINATED = 32600  # what the MCP client reports for a 404 on its session id
_CLOSE_TIMEOUT = 5.0


def _code(exc: BaseException) -> int | None:
    return getattr(getattr(exc, "error", None), "code", None) if isinstance(exc, McpError) else None


def _not_sent(exc: BaseException) -> bool:
    """The request never reached a live session: sending it again cannot run the tool twice."""
    return _code(exc) == _SESSION_TERMINATED or isinstance(
        exc, anyio.ClosedResourceError | anyio.BrokenResourceError | httpx.ConnectError
    )


def _session_ended(exc: BaseException) -> bool:
    return _not_sent(exc) or _code(exc) == CONNECTION_CLOSED


class TurnSession:
    """The MCP session of one server for one turn; :meth:`aclose` ends it (idempotent)."""

    def __init__(self, server: MCPServerConfig, definitions: Sequence[Tool], *, timeout: float) -> None:
        self.server = server
        self._definitions = definitions
        self._timeout = timeout
        self._ready: asyncio.Future[ClientSession] | None = None
        self._stop = asyncio.Event()
        self._holders: dict[asyncio.Task[None], asyncio.Future[ClientSession]] = {}
        self._closed = False
        self.opened = 0
        """Sessions opened so far (a re-initialised session counts again)."""

    @property
    def is_open(self) -> bool:
        ready = self._ready
        return ready is not None and ready.done() and not ready.cancelled() and ready.exception() is None

    def _error(self, exc: BaseException) -> McpServerConnectionError:
        name, url = self.server.mcp_server_name, self.server.url
        return McpServerConnectionError(
            f"MCP server {name!r} at {url} failed: {describe_error(exc)}", server_name=name, url=url
        )

    async def request(self, send: Callable[[ClientSession], Awaitable[T]]) -> T:
        """``send(session)`` on the open session (opened now if needed; once more on a new one if gone)."""
        for attempt in (1, 2):
            ready = self._open()
            try:
                async with asyncio.timeout(self._timeout):  # only the connect: shared, so shielded
                    session = await asyncio.shield(ready)
            except TimeoutError:
                self._reset(ready)
                raise self._error(TimeoutError(f"no answer within {self._timeout} s")) from None
            try:
                return await send(session)
            except Exception as exc:
                if not _session_ended(exc):
                    raise
                self._reset(ready)
                if attempt == 2 or not _not_sent(exc):
                    error = self._error(exc)
                else:
                    logger.debug(
                        "MCP session %r ended (%s): once more on a new one",
                        self.server.mcp_server_name,
                        describe_error(exc),
                    )
                    continue
            raise error  # outside the handler: the server's text is neither cause nor context
        raise AssertionError("unreachable")  # pragma: no cover

    def _open(self) -> asyncio.Future[ClientSession]:
        if self._closed:
            raise RuntimeError(
                f"the MCP session of {self.server.mcp_server_name!r} is closed (the turn ended)"
            )
        if self._ready is None:
            self._ready = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            holder = asyncio.create_task(
                self._hold(self._ready, self._stop), name=f"a365-mcp-{self.server.mcp_server_name}"
            )
            self._holders[holder] = self._ready
            holder.add_done_callback(lambda task: self._holders.pop(task, None))
        return self._ready

    def _reset(self, ready: asyncio.Future[ClientSession]) -> None:
        """End the session ``ready`` stands for, unless a newer one has replaced it already."""
        if self._ready is ready:
            self._ready = None
            self._stop.set()

    async def _hold(self, ready: asyncio.Future[ClientSession], stop: asyncio.Event) -> None:
        server, name = self.server, self.server.mcp_server_name
        timeout = httpx.Timeout(self._timeout)
        try:
            async with AsyncExitStack() as stack:
                http = await stack.enter_async_context(mcp_http_client_factory(dict(server.headers), timeout))
                read, write, _ = await stack.enter_async_context(
                    streamable_http_client(server.url, http_client=http)
                )
                session = await stack.enter_async_context(
                    ClientSession(read, write, read_timeout_seconds=timedelta(seconds=self._timeout))
                )
                with mcp_session_span(name, server.url):
                    await session.initialize()
                self.opened += 1
                prime_output_schemas(session, self._definitions)
                logger.debug("MCP session %r opened", name)
                ready.set_result(session)
                await stop.wait()
            logger.debug("MCP session %r closed", name)
        except BaseException as exc:
            # The transport reports a failed request by cancelling its host task (this one): the
            # session is over either way; a real cancellation (aclose) ends here too.
            if not ready.done():
                ready.set_exception(self._error(exc))
                ready.exception()  # retrieved: callers that gave up must not leave a warning
            logger.debug("MCP session %r ended: %s", name, describe_error(exc))
            if self._ready is ready:
                self._ready = None

    async def aclose(self) -> None:
        """End the session (politely within 5 s, then cancelled); later requests raise ``RuntimeError``."""
        self._closed = True
        self._ready = None
        self._stop.set()
        holders = list(self._holders)
        if not holders:
            return
        for holder, ready in list(self._holders.items()):
            if not ready.done():  # still connecting: nothing to end politely
                holder.cancel()
        _, pending = await asyncio.wait(holders, timeout=_CLOSE_TIMEOUT)
        for holder in pending:
            holder.cancel()
        if pending:
            await asyncio.wait(pending)
