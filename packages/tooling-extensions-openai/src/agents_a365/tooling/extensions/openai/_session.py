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
from typing import Any, TypeVar

import anyio
import httpx
import mcp
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Tool

from agents_a365.tooling import MCPServerConfig, McpServerConnectionError, prime_output_schemas
from agents_a365.tooling.extensibility import describe_error, mcp_http_client_factory, mcp_session_span

__all__ = ["TurnSession"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_SESSION_TERMINATED = 32600  # what the MCP client reports for a 404 on its session id
_CONNECTION_CLOSED = -32000  # mcp.types.CONNECTION_CLOSED: the transport ended under the request
_CLOSE_TIMEOUT = 5.0
# mcp 1 takes the read timeout as a timedelta, mcp 2 in seconds (its error class is MCPError, not McpError).
_MCP1 = hasattr(mcp, "McpError")


class _SessionEnded(Exception):
    """The session's holder ended while a request was in flight on it."""


def _code(exc: BaseException) -> int | None:
    # McpError (mcp 1) and MCPError (mcp 2) both carry the JSON-RPC ErrorData as ``error``.
    code = getattr(getattr(exc, "error", None), "code", None)
    return code if isinstance(code, int) else None


def _not_sent(exc: BaseException) -> bool:
    """The request never reached a live session: sending it again cannot run the tool twice."""
    return _code(exc) == _SESSION_TERMINATED or isinstance(
        exc, anyio.ClosedResourceError | anyio.BrokenResourceError | httpx.ConnectError
    )


def _session_ended(exc: BaseException) -> bool:
    return _not_sent(exc) or isinstance(exc, _SessionEnded) or _code(exc) == _CONNECTION_CLOSED


class _Generation:
    """One opened session: its holder task, the session once ready, and the event that ends it."""

    __slots__ = ("holder", "ready", "stop")

    def __init__(self) -> None:
        self.ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
        self.stop = asyncio.Event()
        self.holder: asyncio.Task[None] | None = None


class TurnSession:
    """The MCP session of one server for one turn; :meth:`aclose` ends it (idempotent)."""

    def __init__(self, server: MCPServerConfig, definitions: Sequence[Tool], *, timeout: float) -> None:
        self.server = server
        self._definitions = definitions
        self._timeout = timeout
        self._current: _Generation | None = None
        self._generations: set[_Generation] = set()
        self._closed = False
        self.opened = 0
        """Sessions opened so far (a re-initialised session counts again)."""

    @property
    def is_open(self) -> bool:
        ready = self._current.ready if self._current is not None else None
        return ready is not None and ready.done() and not ready.cancelled() and ready.exception() is None

    def _error(self, exc: BaseException) -> McpServerConnectionError:
        name, url = self.server.mcp_server_name, self.server.url
        return McpServerConnectionError(
            f"MCP server {name!r} at {url} failed: {describe_error(exc)}", server_name=name, url=url
        )

    async def request(self, send: Callable[[ClientSession], Awaitable[T]]) -> T:
        """``send(session)`` on the open session (opened now if needed; once more on a new one if gone)."""
        for attempt in (1, 2):
            gen = self._open()
            try:
                async with asyncio.timeout(self._timeout):  # only the connect: shared, so shielded
                    session = await asyncio.shield(gen.ready)
            except TimeoutError:
                self._end(gen)
                raise self._error(TimeoutError(f"no answer within {self._timeout} s")) from None
            try:
                return await self._during(gen, send(session))
            except Exception as exc:
                if not _session_ended(exc):
                    raise
                self._end(gen)
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

    async def _during(self, gen: _Generation, request: Awaitable[T]) -> T:
        """``request``, or a typed error as soon as its session ends under it: the client would
        otherwise leave it waiting for its read timeout (the transport's failure cancels the
        session's receive loop before it can tell the requests in flight)."""
        call = asyncio.ensure_future(request)
        assert gen.holder is not None
        try:
            await asyncio.wait({call, gen.holder}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not call.done():
                call.cancel()
                await asyncio.wait({call})
        if call.cancelled():
            raise _SessionEnded("the MCP session ended")
        return call.result()

    def _open(self) -> _Generation:
        if self._closed:
            raise RuntimeError(
                f"the MCP session of {self.server.mcp_server_name!r} is closed (the turn ended)"
            )
        if self._current is None:
            gen = self._current = _Generation()
            gen.holder = asyncio.create_task(self._hold(gen), name=f"a365-mcp-{self.server.mcp_server_name}")
            self._generations.add(gen)
            gen.holder.add_done_callback(lambda _: self._generations.discard(gen))
        return self._current

    def _end(self, gen: _Generation) -> None:
        """End ``gen``'s session; the next request opens a new one."""
        if self._current is gen:
            self._current = None
        gen.stop.set()

    async def _hold(self, gen: _Generation) -> None:
        server, name = self.server, self.server.mcp_server_name
        timeout = httpx.Timeout(self._timeout)
        try:
            async with AsyncExitStack() as stack:
                http = await stack.enter_async_context(mcp_http_client_factory(dict(server.headers), timeout))
                streams = await stack.enter_async_context(
                    streamable_http_client(server.url, http_client=http)
                )
                read_timeout: Any = timedelta(seconds=self._timeout) if _MCP1 else self._timeout
                session = await stack.enter_async_context(
                    ClientSession(streams[0], streams[1], read_timeout_seconds=read_timeout)
                )
                with mcp_session_span(name, server.url):
                    await session.initialize()
                self.opened += 1
                prime_output_schemas(session, self._definitions)
                logger.debug("MCP session %r opened", name)
                gen.ready.set_result(session)
                await gen.stop.wait()
            logger.debug("MCP session %r closed", name)
        except BaseException as exc:
            # The transport reports a failed request by cancelling its host task (this one): the
            # session is over either way; a real cancellation (aclose) ends here too.
            if not gen.ready.done():
                gen.ready.set_exception(self._error(exc))
                gen.ready.exception()  # retrieved: callers that gave up must not leave a warning
            logger.debug("MCP session %r ended: %s", name, describe_error(exc))
        finally:
            if self._current is gen:
                self._current = None

    async def aclose(self) -> None:
        """End the session (politely within 5 s, then cancelled); later requests raise ``RuntimeError``."""
        self._closed = True
        self._current = None
        generations = list(self._generations)
        holders = [g.holder for g in generations if g.holder is not None]
        for gen in generations:
            gen.stop.set()
            if not gen.ready.done() and gen.holder is not None:  # still connecting: nothing to end politely
                gen.holder.cancel()
        if not holders:
            return
        _, pending = await asyncio.wait(holders, timeout=_CLOSE_TIMEOUT)
        for holder in pending:
            holder.cancel()
        if pending:
            await asyncio.wait(pending)
