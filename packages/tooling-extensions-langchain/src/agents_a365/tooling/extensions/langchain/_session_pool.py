"""MCP sessions kept open across the tool calls and turns of the per-call tools (the seed's form).

``get_mcp_tools`` / ``add_tool_servers_to_agent`` hand out tools that outlive any block, so there is no
turn scope to close a session with. Without a pool each call would open a session (initialize,
initialized, GET stream, call, DELETE): the pool keeps one per server URL and request headers (so per
user token: never shared between users) and reuses it while it is used, closing it when

* it has not been used for ``idle_timeout`` seconds (checked on every use and by a timer),
* its bearer token expires (``exp`` minus ``token_expiry_skew``),
* more than ``max_sessions`` are open (the least recently used idle one goes),
* the server drops it (the call is retried once on a new session, then fails),
* the service closes (``aclose``).

Each session lives in a holder task of the pool (anyio transports must be entered and exited in one
task), not in the caller's: cancelling one turn's tool call never closes a session another turn uses.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import httpx
from langchain_mcp_adapters.sessions import Connection, create_session
from mcp import ClientSession, McpError
from mcp.types import Tool as McpTool

from agents_a365.runtime import decode_token_payload
from agents_a365.tooling import MCPServerConfig, McpServerConnectionError, prime_output_schemas
from agents_a365.tooling.extensibility import describe_error, mcp_session_span

__all__ = ["McpSessionPool", "PooledSession"]

logger = logging.getLogger(__name__)

_CLOSE_TIMEOUT = 5.0
_SESSION_TERMINATED = 32600  # what the MCP client reports for a 404 on its session id


def _is_dropped(exc: BaseException) -> bool:
    """Whether ``exc`` says the session is gone (worth one reconnect), not that the call failed or timed
    out (the server may have run the tool: never sent twice)."""
    if isinstance(exc, McpError):
        return getattr(getattr(exc, "error", None), "code", None) == _SESSION_TERMINATED
    if isinstance(exc, httpx.TimeoutException):
        return False
    return isinstance(exc, httpx.TransportError | anyio.ClosedResourceError | anyio.BrokenResourceError)


Key = tuple[str, frozenset[tuple[str, str]]]


class _Entry:
    __slots__ = ("closing", "expires_at", "holder", "in_use", "key", "last_used", "ready", "stop")

    def __init__(self, key: Key, now: float, expires_at: float) -> None:
        self.key = key
        self.ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
        self.stop = asyncio.Event()
        self.holder: asyncio.Task[None] | None = None
        self.in_use = 0
        self.last_used = now
        self.expires_at = expires_at
        self.closing = False


def _token_lifetime(server: MCPServerConfig, skew: float) -> float:
    """Seconds the server's bearer token stays valid (``inf`` for opaque or exp-less tokens)."""
    value = next((v for k, v in server.headers.items() if k.lower() == "authorization"), "")
    token = value.split(" ", 1)[-1].strip()
    try:
        exp = decode_token_payload(token).get("exp") if token else None
    except ValueError:
        exp = None
    if not isinstance(exp, int | float):
        return float("inf")
    return float(exp) - time.time() - skew


class McpSessionPool:
    """Open MCP sessions per (server URL, request headers), reused by :class:`PooledSession` tools."""

    def __init__(
        self,
        *,
        idle_timeout: float,
        max_sessions: int,
        connect_timeout: float,
        token_expiry_skew: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) or max_sessions < 0:
            raise ValueError("max_sessions must be a non-negative integer")
        self.idle_timeout = idle_timeout
        self.max_sessions = max_sessions
        self.connect_timeout = connect_timeout
        self.token_expiry_skew = token_expiry_skew
        self._clock = clock
        self._entries: dict[Key, _Entry] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False
        self.opened = 0
        """Sessions opened so far (tests and benchmarks count them)."""

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"McpSessionPool(open={len(self._entries)}, opened={self.opened})"

    # -- calls -------------------------------------------------------------------------------------
    async def call_tool(
        self,
        server: MCPServerConfig,
        connection: Connection,
        definitions: Sequence[McpTool],
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        """``session.call_tool(*args, **kwargs)`` on the server's pooled session (one reconnect if dropped)."""
        if self._closed:
            raise RuntimeError("the MCP session pool is closed (the service was closed)")
        if self.idle_timeout <= 0 or self.max_sessions == 0:
            return await self._one_shot(connection, definitions, *args, **kwargs)
        for attempt in (1, 2):
            self.prune()
            entry = self._entry(server, connection, definitions)
            if entry is None:  # the pool is full of sessions in use: this call gets its own
                return await self._one_shot(connection, definitions, *args, **kwargs)
            entry.in_use += 1
            try:
                session = await self._ready(entry, server)
                return await session.call_tool(*args, **kwargs)
            except Exception as exc:
                if not _is_dropped(exc):
                    raise
                self._discard(entry)
                if attempt == 2:
                    raise
                logger.debug(
                    "MCP session %r dropped (%s): reconnecting once",
                    server.mcp_server_name,
                    describe_error(exc),
                )
            finally:
                entry.in_use -= 1
                entry.last_used = self._clock()
                self._arm_timer()
        raise AssertionError("unreachable")  # pragma: no cover

    async def _ready(self, entry: _Entry, server: MCPServerConfig) -> ClientSession:
        try:
            # Shielded: a cancelled caller must not cancel the connect that other calls share.
            async with asyncio.timeout(self.connect_timeout):
                return await asyncio.shield(entry.ready)
        except TimeoutError:
            self._discard(entry)
            raise McpServerConnectionError(
                f"MCP server {server.mcp_server_name!r} at {server.url} did not answer within {self.connect_timeout} s",
                server_name=server.mcp_server_name,
                url=server.url,
            ) from None

    async def _one_shot(
        self, connection: Connection, definitions: Sequence[McpTool], *args: Any, **kwargs: Any
    ) -> Any:
        async with create_session(connection) as session:
            await session.initialize()
            self.opened += 1
            prime_output_schemas(session, definitions)
            return await session.call_tool(*args, **kwargs)

    # -- entries -----------------------------------------------------------------------------------
    def _entry(
        self, server: MCPServerConfig, connection: Connection, definitions: Sequence[McpTool]
    ) -> _Entry | None:
        key: Key = (server.url, frozenset(server.headers.items()))
        entry = self._entries.get(key)
        if entry is not None and not entry.closing:
            return entry
        if len(self._entries) >= self.max_sessions and not self._evict_one():
            return None
        now = self._clock()
        entry = _Entry(key, now, now + _token_lifetime(server, self.token_expiry_skew))
        self._entries[key] = entry
        entry.holder = asyncio.create_task(
            self._hold(entry, server, connection, definitions),
            name=f"a365-mcp-pooled-{server.mcp_server_name}",
        )
        return entry

    async def _hold(
        self, entry: _Entry, server: MCPServerConfig, connection: Connection, definitions: Sequence[McpTool]
    ) -> None:
        name = server.mcp_server_name
        try:
            async with create_session(connection) as session:
                with mcp_session_span(name, server.url):  # the handshake, in the first caller's trace
                    await session.initialize()
                self.opened += 1
                prime_output_schemas(session, definitions)
                logger.debug("MCP session %r opened (pooled)", name)
                if not entry.ready.done():
                    entry.ready.set_result(session)
                await entry.stop.wait()
            logger.debug("MCP session %r closed (pooled)", name)
        except BaseException as exc:
            if not entry.ready.done():
                error = McpServerConnectionError(
                    f"MCP server {name!r} at {server.url} failed: {describe_error(exc)}",
                    server_name=name,
                    url=server.url,
                )
                entry.ready.set_exception(error)
            elif not isinstance(exc, asyncio.CancelledError):
                logger.debug("MCP session %r ended with %s", name, describe_error(exc))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._forget(entry)
            if entry.ready.done() and not entry.ready.cancelled():
                entry.ready.exception()  # retrieved: no "never retrieved" warning

    def _forget(self, entry: _Entry) -> None:
        if self._entries.get(entry.key) is entry:
            del self._entries[entry.key]

    def _discard(self, entry: _Entry) -> None:
        """Close ``entry`` (its holder ends its session) and forget it."""
        entry.closing = True
        entry.stop.set()
        self._forget(entry)

    def _evict_one(self) -> bool:
        idle = [e for e in self._entries.values() if e.in_use == 0]
        if not idle:
            return False
        self._discard(min(idle, key=lambda e: e.last_used))
        return True

    def prune(self) -> None:
        """Close the sessions idle for ``idle_timeout`` and those whose token expired."""
        now = self._clock()
        for entry in list(self._entries.values()):
            expired = entry.expires_at <= now
            idle = entry.in_use == 0 and now - entry.last_used >= self.idle_timeout
            if expired or idle:
                logger.debug("closing a pooled MCP session (%s)", "token expired" if expired else "idle")
                self._discard(entry)

    def _arm_timer(self) -> None:
        # One timer at a time, for the idle timeout: sessions close even when no call comes.
        if self._timer is not None or not self._entries or self._closed:
            return
        loop = asyncio.get_running_loop()

        def fire() -> None:
            self._timer = None
            self.prune()
            self._arm_timer()

        self._timer = loop.call_later(self.idle_timeout, fire)

    async def aclose(self) -> None:
        """Close every session (politely within 5 s, then cancelled) and refuse new calls."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        entries = list(self._entries.values())
        for entry in entries:
            self._discard(entry)
        holders = [e.holder for e in entries if e.holder is not None and not e.holder.done()]
        if holders:
            _, pending = await asyncio.wait(holders, timeout=_CLOSE_TIMEOUT)
            for holder in pending:
                holder.cancel()
            if pending:
                await asyncio.wait(pending)


class PooledSession:
    """Stands in for a server's ``ClientSession`` in the per-call tools: calls go through the pool."""

    __slots__ = ("_connection", "_definitions", "_pool", "_server")

    def __init__(
        self,
        pool: McpSessionPool,
        server: MCPServerConfig,
        connection: Connection,
        definitions: Sequence[McpTool],
    ) -> None:
        self._pool = pool
        self._server = server
        self._connection = connection
        self._definitions = definitions

    def __repr__(self) -> str:
        return f"PooledSession({self._server.mcp_server_name!r})"

    async def call_tool(self, *args: Any, **kwargs: Any) -> Any:
        return await self._pool.call_tool(self._server, self._connection, self._definitions, *args, **kwargs)
