"""One pooled MCP session and the task that holds it: the official client over streamable HTTP, opened,
served and closed in that task (mcp's transport, anyio task groups, must be entered and left in one task);
a request on it raced against its end, and what the request's failure means (try a new session, or fail).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from agents_a365.runtime import get_sdk_version, validate_token

from ._mcp_errors import DefinitionMismatch, describe, error_code, failed
from ._mcp_pages import SessionGone
from ._redact import describe_error, leaf
from ._telemetry_hooks import mcp_session_span
from .errors import McpServerConnectionError
from .headers import TOOLING_DISTRIBUTION
from .mcp_http import (
    REQUEST_FAILED,
    McpResponseTooLarge,
    SharedTransport,
    is_dropped_connection,
    is_transient,
    mcp_http_client_factory,
)
from .models import MCPServerConfig

if TYPE_CHECKING:
    from ._sessions import McpSessionPool

__all__ = ["Session", "token_lifetime"]

logger = logging.getLogger("agents_a365.tooling._sessions")

T = TypeVar("T")
Key = tuple[str, frozenset[tuple[str, str]]]
_SESSION_TERMINATED = 32600  # what mcp's client reports for a 404 on its session id
_CONNECTION_CLOSED = -32000  # the session ended while the request waited for its answer
_CLIENT_INFO = types.Implementation(name=TOOLING_DISTRIBUTION, version=get_sdk_version(TOOLING_DISTRIBUTION))


@dataclass(eq=False, repr=False, slots=True)  # no repr: the key holds the token
class Session:
    """One pooled session: its users, its end, and the task that holds it (see :class:`McpSessionPool`)."""

    key: Key
    last_used: float
    expires_at: float
    server: MCPServerConfig
    pool: McpSessionPool
    users: int = 0
    retired: bool = False
    failure: str | None = None  # why the session ended under its users (an over-cap answer)
    ended: str | None = None  # why it ended once open (for the message only: not a failure)
    called: bool = False  # served more than tools/list: kept over the sessions that only listed
    client: Any = None  # the session's HTTP client (our tools/list requests go out on it)
    ready: asyncio.Future[ClientSession] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    holder: asyncio.Task[None] = field(init=False)  # the pool starts it with the session

    async def hold(self, transport: SharedTransport) -> None:
        """Open the session, serve it until told to stop (or until it fails), close it: all in this task."""
        server, pool, name = self.server, self.pool, self.server.mcp_server_name

        async def on_message(message: object) -> None:
            # mcp hands the session what its transport could not read (an answer that is not JSON-RPC)
            # and then never answers the request: end the session, so its requests fail now.
            if isinstance(message, ValueError):  # pydantic's, json's
                self.failure = f"the server's answer is not JSON-RPC ({type(message).__name__})"
                self.holder.cancel()

        try:
            async with contextlib.AsyncExitStack() as stack:
                # A connect nobody waits for ends too; at most a few connect to one server at once (after
                # an outage every user's session opens again: a herd would take the server down again).
                async with asyncio.timeout(pool.timeout or None), pool.breaker(server.url).opens:
                    client = mcp_http_client_factory(
                        dict(server.headers), max_bytes=pool.max_response_bytes, transport=transport
                    )
                    await stack.enter_async_context(client)
                    streams = streamable_http_client(server.url, http_client=client)
                    read, write, *_ = await stack.enter_async_context(streams)  # mcp 1 adds a third
                    session = await stack.enter_async_context(
                        ClientSession(read, write, message_handler=on_message, client_info=_CLIENT_INFO)
                    )
                    with mcp_session_span(name, server.url):  # the handshake, in the first caller's trace
                        hello = await session.initialize()
                version = getattr(hello, "protocolVersion", None) or getattr(hello, "protocol_version", "")
                client.headers["mcp-protocol-version"] = str(version)  # what mcp's requests carry too
                self.client, client.opened = client, True
                pool.opened += 1
                logger.debug("MCP session %r opened", name)
                self.ready.set_result(session)
                await self.stop.wait()
                for _ in range(50):  # a POST still on its way is not cut off (at most 0.5 s)
                    if not client.posts:
                        break
                    await asyncio.sleep(0.01)
            logger.debug("MCP session %r closed", name)
        except BaseException as exc:  # the holder's end: nothing propagates out of the task
            if isinstance(leaf(exc), McpResponseTooLarge):
                self.failure = str(leaf(exc))
            text = self.failure or describe(exc)
            if isinstance(exc, asyncio.CancelledError) and pool.closed:
                text = "the session pool was closed while connecting"
            if not self.ready.done():
                # A connection dropped on the wire (a reused keep-alive connection the server closed):
                # worth one new session; anything else fails the callers now.
                retry, transient = is_dropped_connection(leaf(exc)), is_transient(leaf(exc))
                self.ready.set_exception(
                    SessionGone(text) if retry else failed(server, text, transient=transient)
                )
            elif not isinstance(exc, asyncio.CancelledError):
                self.ended = text  # why, for the requests it ended under (an HTTP 503 on a call)
                logger.debug("MCP session %r ended: %s", name, text)
        finally:
            pool._retire(self)

    def held(self, holder: asyncio.Task[None]) -> None:
        """The holder's done callback. One cancelled before its first step (the pool closed at once) ran
        none of :meth:`hold`, so its callers are failed here rather than left waiting."""
        if not self.ready.done():
            self.ready.set_exception(failed(self.server, "the session pool was closed while connecting"))
        self.ready.exception()  # retrieved: no "never retrieved" warning when nobody waits

    async def request(self, operation: Callable[[Session], Awaitable[T]], idempotent: bool) -> T:
        """``await operation(self)`` raced against the session's end. A failure raises ``SessionGone`` when a
        new session may send it again (the pool then does, once), else ``McpServerConnectionError``."""
        await asyncio.shield(self.ready)  # shared connect: one cancelled caller keeps it going
        if self.holder.done():
            raise SessionGone("the session had ended")
        # The request races the session's end: a transport that fails (a dropped connection, an
        # over-cap answer) ends the holder, and mcp then never answers the requests in flight.
        request = asyncio.ensure_future(operation(self))
        try:
            await asyncio.wait((request, self.holder), return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not request.done():
                request.cancel()
                await asyncio.wait((request,))
        if request.cancelled():  # the session ended under the request: sent or not, we cannot tell
            if idempotent and not self.failure:
                raise SessionGone("the session ended during the request")
            ended = f" ({self.ended})" if self.ended else ""
            text = self.failure or f"the session ended during the request{ended}"
            raise failed(self.server, text, transient=not self.failure)
        exc = request.exception()
        if exc is None:
            return request.result()
        if isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError):
            self.pool._retire(self)  # ended before the request went out: safe to send again
            raise SessionGone(self.failure or "the session had ended")
        if isinstance(exc, McpServerConnectionError):
            raise exc
        if isinstance(exc, McpResponseTooLarge):  # our own listing's read: the session is still fine
            raise failed(self.server, str(exc))
        code = error_code(exc)
        if code == REQUEST_FAILED:  # this request's POST failed (mcp_http.py); the session is still fine
            transient = bool((exc.error.data or {}).get("transient"))  # type: ignore[attr-defined]
            if idempotent and transient:
                raise SessionGone(exc.error.message)  # type: ignore[attr-defined]
            raise failed(self.server, exc.error.message, transient=transient)  # type: ignore[attr-defined]
        if code in (-32601, -32602):  # method or tool unknown, invalid arguments: the definitions are wrong
            raise failed(self.server, describe(exc), kind=DefinitionMismatch)
        if code == _SESSION_TERMINATED or isinstance(exc, SessionGone):  # the server forgot the session
            self.pool._retire(self)  # (a 404: it did not run the request)
            raise SessionGone(describe(exc))
        if code == _CONNECTION_CLOSED:  # the session ended under the request (mcp 2 says so)
            self.pool._retire(self)
            await asyncio.wait((self.holder,), timeout=1.0)  # let it record why (an over-cap answer)
            if idempotent and not self.failure:
                raise SessionGone(describe_error(exc))
        transient = not self.failure and (is_transient(leaf(exc)) or getattr(exc, "transient", False))
        if idempotent and transient and not isinstance(exc, TimeoutError):
            raise SessionGone(describe(exc))  # a listing whose connection failed: once more
        raise failed(self.server, self.failure or describe(exc), transient=transient)


def token_lifetime(headers: dict[str, str], skew: float) -> float:
    """Seconds the bearer token stays valid, minus ``skew`` (``inf`` for opaque or exp-less tokens)."""
    value = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
    try:  # an empty or opaque token, or no numeric exp: a ValueError (an infinite leeway: expired ones pass)
        exp = validate_token(value.split(" ", 1)[-1], leeway_seconds=math.inf)["exp"]
    except ValueError:
        return math.inf
    return float(exp) - time.time() - skew
