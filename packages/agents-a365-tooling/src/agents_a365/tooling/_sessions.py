"""MCP sessions held open and shared: the one session holder of the core and both extensions.

:class:`McpSessionPool` keeps official ``mcp`` ``ClientSession`` objects (over :func:`mcp_http_client_factory`)
per server URL and request headers, so per user token; calls run concurrently on one session. Each session
lives in a holder task (``_session.py``), never in a caller's, and closes when idle for ``idle_timeout``
seconds (``0``: as soon as its call returns), when its bearer token expires (``exp`` minus
``token_expiry_skew``, on the pool's clock), when over ``max_sessions`` (an idle one that only listed tools
goes first, then the least recently used idle one) or on :meth:`McpSessionPool.aclose`, but only once its
last user has returned (reference counting): closing never breaks a call that holds a session or has been
handed one. A session the server forgot (HTTP 404 on its ``mcp-session-id``: the spec says the client starts
a new one) or that ended before the request was sent is re-initialised once; then the call fails with
:class:`~agents_a365.tooling.McpServerConnectionError`. No anyio/mcp/httpx exception reaches a caller.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mcp import ClientSession, types

from ._breaker import Breaker
from ._mcp_errors import check_structured, failed
from ._mcp_pages import MAX_LIST_PAGES, SessionGone, list_tool_pages
from ._session import Key, Session, token_lifetime
from ._spans import is_tool_error
from .errors import McpServerConnectionError
from .mcp_http import DEFAULT_MAX_MCP_RESPONSE_BYTES, SharedTransport
from .models import MCPServerConfig

__all__ = ["MAX_LIST_PAGES", "McpSessionPool"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
_CLOSE_TIMEOUT = 5.0


class McpSessionPool:
    """Open MCP sessions per (server URL, request headers), shared by concurrent calls.

    API (stable; both extensions build on it)::

        pool = McpSessionPool(timeout=10, idle_timeout=60, max_sessions=64)
        tools = await pool.list_tools(server)                  # every page, page cap, one deadline
        result = await pool.call_tool(server, "send_mail", {"to": "x"}, output_schema=tool.outputSchema)
        prompts = await pool.run(server, lambda s: s.list_prompts(), idempotent=True)
        await pool.aclose()                                    # or ``async with McpSessionPool(...)``

    ``server`` is an :class:`~agents_a365.tooling.MCPServerConfig` (URL and complete headers, its token
    included). ``timeout`` bounds each operation in total (connect included); ``max_response_bytes`` caps
    each answer. Failures raise :class:`~agents_a365.tooling.McpServerConnectionError` (server name and URL,
    no token); a closed pool raises ``RuntimeError``. ``clock`` is the monotonic clock of the idle timeout
    and token expiry (tests pass a fake one). ``opened`` counts the sessions opened so far.
    """

    def __init__(
        self,
        *,
        timeout: float = 10.0,
        idle_timeout: float = 60.0,
        max_sessions: int = 64,
        max_response_bytes: int = DEFAULT_MAX_MCP_RESPONSE_BYTES,
        token_expiry_skew: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
        name: str = "a365-mcp-session",
    ) -> None:
        if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) or max_sessions < 0:
            raise ValueError("max_sessions must be a non-negative integer")
        for what, value in (("timeout", timeout), ("idle_timeout", idle_timeout)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(f"{what} must be a non-negative number of seconds")
        self.timeout = float(timeout)
        self.idle_timeout = float(idle_timeout)
        self.max_sessions = max_sessions
        self.max_response_bytes = max_response_bytes
        self.token_expiry_skew = token_expiry_skew
        self._clock = clock
        self._name = name  # the holder tasks' name prefix (``<name>-<server>``)
        self._entries: dict[Key, Session] = {}
        self._holders: set[asyncio.Task[None]] = set()
        self._timer: asyncio.TimerHandle | None = None
        # One connection pool under every session (each request carries its own session's headers).
        self._transport = SharedTransport()
        self._closed = False
        self._due, self._due_idle = -math.inf, self.idle_timeout  # when prune() next has work, for which idle
        self.opened = 0  # sessions opened so far
        # Per server: fail at once after this many transient failures in a row (0: never), for this many
        # seconds, then one probe; at most open_concurrency sessions opening to it at once (_breaker.py).
        self.breaker_threshold, self.breaker_cooldown, self.open_concurrency = 3, 5.0, 16
        self._breakers: dict[str, Breaker] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:  # never a header: they hold tokens
        return f"McpSessionPool(open={len(self._entries)}, opened={self.opened})"

    @property
    def closed(self) -> bool:
        return self._closed

    async def __aenter__(self) -> McpSessionPool:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    # -- operations ------------------------------------------------------------------------------------
    async def call_tool(
        self,
        server: MCPServerConfig,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        meta: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        progress_callback: Any = None,
    ) -> types.CallToolResult:
        """``tools/call``; structured content checked against ``output_schema`` (the definition's)."""
        params: dict[str, Any] = {"name": name, "arguments": arguments, "_meta": meta}  # None: not sent
        request: Any = types.CallToolRequest(params=types.CallToolRequestParams(**params))
        # mcp 1 wraps requests in a root model; mcp 2 takes them as is.
        if isinstance(types.ClientRequest, type):
            request = types.ClientRequest(request)
        result = await self.run(
            server,
            lambda s: s.send_request(request, types.CallToolResult, progress_callback=progress_callback),
        )
        if output_schema is not None and not is_tool_error(result):
            check_structured(server, name, result, output_schema)
        return result

    async def list_tools(
        self, server: MCPServerConfig, *, max_pages: int = MAX_LIST_PAGES
    ) -> list[types.Tool]:
        """Every page of ``tools/list`` (at most ``max_pages``), within ``timeout`` in total."""
        if isinstance(max_pages, bool) or not isinstance(max_pages, int) or max_pages < 1:
            raise ValueError("max_pages must be a positive integer")

        async def listing(entry: Session) -> list[types.Tool]:
            return await list_tool_pages(entry.client, server, max_pages=max_pages)

        return await self._run(server, listing, idempotent=True)

    async def run(
        self,
        server: MCPServerConfig,
        operation: Callable[[ClientSession], Awaitable[T]],
        *,
        idempotent: bool = False,
    ) -> T:
        """``await operation(session)`` on ``server``'s pooled session, within ``timeout``.

        Retried once on a new session when the server forgot the session (404) or it ended before the
        request was sent; ``idempotent`` operations also when the connection was lost mid-request.
        """

        async def on(entry: Session) -> T:
            entry.called = True
            return await operation(entry.ready.result())

        return await self._run(server, on, idempotent=idempotent)

    async def _run(
        self, server: MCPServerConfig, operation: Callable[[Session], Awaitable[T]], *, idempotent: bool
    ) -> T:
        if not isinstance(server, MCPServerConfig):
            raise TypeError("server must be an MCPServerConfig")

        async def once() -> T:
            entry = self._acquire(server)
            try:
                return await entry.request(operation, idempotent)
            finally:
                self._release(entry)

        breaker, outcome = self.breaker(server.url), None
        admitted = breaker.admit(server, self.breaker_threshold)  # a server known down: fail at once
        try:
            async with asyncio.timeout(self.timeout or None):
                try:
                    result = await once()
                except SessionGone as gone:
                    logger.debug("MCP server %r: session gone (%s): a new session, once", server.name, gone)
                    result = await once()
            outcome = True
            return result
        except (SessionGone, TimeoutError) as exc:
            outcome = False
            text = (
                f"TimeoutError (did not answer within {self.timeout} s)"
                if isinstance(exc, TimeoutError)
                else exc
            )
            raise failed(server, str(text), transient=True) from None
        except McpServerConnectionError as exc:
            outcome = not exc.transient
            raise
        finally:
            breaker.record(server, outcome, admitted, self.breaker_threshold, self.breaker_cooldown)

    def breaker(self, url: str) -> Breaker:
        """The circuit breaker of the server at ``url`` (and its bound on sessions opening at once)."""
        found = self._breakers.get(url)
        if found is None:
            found = self._breakers[url] = Breaker(self._clock, self.open_concurrency)
        return found

    # -- entries ---------------------------------------------------------------------------------------
    def _acquire(self, server: MCPServerConfig) -> Session:
        if self._closed:
            raise RuntimeError("the MCP session pool is closed")
        self.prune()
        key: Key = (server.url, frozenset(server.headers.items()))
        entry = self._entries.get(key)
        if entry is None:
            if len(self._entries) >= max(self.max_sessions, 1):
                self._evict_one()  # all in use: this one goes over the bound until a session is idle
            now = self._clock()
            expires_at = now + token_lifetime(server.headers, self.token_expiry_skew)
            entry = Session(key, now, expires_at, server, self)
            self._entries[key] = entry
            self._due = min(self._due, entry.expires_at)
            entry.holder = asyncio.get_running_loop().create_task(
                entry.hold(self._transport), name=f"{self._name}-{server.mcp_server_name}"
            )
            self._holders.add(entry.holder)
            entry.holder.add_done_callback(self._holders.discard)
            entry.holder.add_done_callback(entry.held)
        entry.users += 1
        return entry

    def _release(self, entry: Session) -> None:
        entry.users -= 1
        entry.last_used = self._clock()
        if entry.users == 0:
            self._due = min(self._due, entry.last_used + self.idle_timeout)
        if entry.users == 0 and (entry.retired or self.idle_timeout <= 0 or self.max_sessions == 0):
            self._retire(entry)
        while len(self._entries) > self.max_sessions and self._evict_one():
            pass  # back under the bound once sessions opened over it (all were busy) are idle again
        self._arm_timer()

    def _retire(self, entry: Session) -> None:
        entry.retired = True  # no new user gets it; its session closes when its last user returns
        if self._entries.get(entry.key) is entry:
            del self._entries[entry.key]
        if entry.users == 0:
            entry.stop.set()
        if not entry.ready.done() and (entry.users == 0 or self._closed):
            entry.holder.cancel()  # connecting for nobody, or the pool closes: its callers fail now

    def _evict_one(self) -> bool:
        idle = [e for e in self._entries.values() if e.users == 0]
        if idle:  # a turn lists every server and calls a few: the sessions its calls use outlive the others
            self._retire(min(idle, key=lambda e: (e.called, e.last_used)))
        return bool(idle)

    def prune(self) -> None:
        """Retire the sessions idle for ``idle_timeout`` and those whose token expired."""
        now = self._clock()
        if now < self._due and self.idle_timeout == self._due_idle:
            return  # nothing is due yet: every request would otherwise scan every session
        self._due, self._due_idle = math.inf, self.idle_timeout
        used = {key[0] for key in self._entries}  # breakers of servers in use, or failing, are kept
        self._breakers = {url: b for url, b in self._breakers.items() if b.failures or url in used}
        for entry in list(self._entries.values()):
            idle_at = entry.last_used + self.idle_timeout if entry.users == 0 else math.inf
            if entry.expires_at <= now or idle_at <= now:
                logger.debug(
                    "retiring a pooled MCP session (%s)", "token" if entry.expires_at <= now else "idle"
                )
                self._retire(entry)
            else:
                self._due = min(self._due, entry.expires_at, idle_at)

    def _arm_timer(self) -> None:
        # One timer at a time for the idle timeout: sessions close even when no call comes.
        if self._timer is not None or not self._entries or self._closed or math.isinf(self.idle_timeout):
            return

        def fire() -> None:
            self._timer = None
            self.prune()
            self._arm_timer()

        self._timer = asyncio.get_running_loop().call_later(max(self.idle_timeout, 0.001), fire)

    async def aclose(self) -> None:
        """Refuse new calls and close every session once its calls return (then, past 5 s, cancel them)."""
        self._closed = True  # no timer is armed again
        if self._timer is not None:
            self._timer.cancel()
        for entry in list(self._entries.values()):
            self._retire(entry)
        if self._holders:
            _, pending = await asyncio.wait(list(self._holders), timeout=_CLOSE_TIMEOUT)
            for holder in pending:
                holder.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        await self._transport.close()
