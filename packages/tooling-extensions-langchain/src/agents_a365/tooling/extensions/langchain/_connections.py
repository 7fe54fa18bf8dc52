"""MCP connections and tool loading over langchain-mcp-adapters."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from datetime import timedelta

import httpx
from langchain_core.tools import BaseTool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.sessions import Connection, StreamableHttpConnection
from langchain_mcp_adapters.tools import load_mcp_tools

from agents_a365.tooling import MCPServerConfig, McpServerConnectionError, mcp_http_client_factory

__all__ = ["Connected", "build_client", "load_tools_per_call", "open_sessions"]

logger = logging.getLogger(__name__)

# How long closing the per-turn sessions may take before the holders are cancelled.
_CLOSE_TIMEOUT = 5.0


def _connection(server: MCPServerConfig, timeout: float) -> StreamableHttpConnection:
    # server.headers is complete (shared headers + this server's own Authorization):
    # used as-is, never with another Authorization added. The adapters' HTTP read timeout is
    # their SSE timeout (5 min), so each MCP request also gets ``timeout`` as its response
    # deadline: a server that drops or stalls a tool call fails it instead of hanging the turn.
    return StreamableHttpConnection(
        transport="streamable_http",
        url=server.url,
        headers=dict(server.headers),
        timeout=timeout,
        session_kwargs={"read_timeout_seconds": timedelta(seconds=timeout)},
        # One shared TLS context instead of a new one per session (~17 ms of CPU each).
        httpx_client_factory=mcp_http_client_factory,
    )


def build_client(servers: Sequence[MCPServerConfig], timeout: float) -> MultiServerMCPClient:
    connections: dict[str, Connection] = {s.mcp_server_name: _connection(s, timeout) for s in servers}
    return MultiServerMCPClient(connections, handle_tool_errors=True)


def _describe(exc: BaseException) -> str:
    # Exception types (and HTTP status) only: transport errors may echo request details,
    # never risk a token.
    if isinstance(exc, BaseExceptionGroup):
        return ", ".join(sorted({_describe(e) for e in exc.exceptions}))
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    return type(exc).__name__


def _connection_error(server: MCPServerConfig, exc: BaseException) -> McpServerConnectionError:
    error = McpServerConnectionError(
        f"MCP server {server.mcp_server_name!r} at {server.url} failed: {_describe(exc)}",
        server_name=server.mcp_server_name,
        url=server.url,
    )
    error.__cause__ = exc
    return error


class Connected:
    """The servers that connected and their tools; ``skipped`` lists the ones left out."""

    __slots__ = ("servers", "skipped", "tools_by_server")

    def __init__(
        self,
        servers: list[MCPServerConfig],
        tools_by_server: dict[str, list[BaseTool]],
        skipped: list[McpServerConnectionError],
    ) -> None:
        self.servers = servers
        self.tools_by_server = tools_by_server
        self.skipped = skipped


def _outcome(
    servers: Sequence[MCPServerConfig],
    results: dict[str, asyncio.Future[list[BaseTool]]],
    timeout: float,
    skip_unreachable: bool,
) -> Connected:
    """Raise for the first failed server (naming the others), or skip them with a warning."""
    failures: list[McpServerConnectionError] = []
    for server in servers:
        future = results[server.mcp_server_name]
        if not future.done() or future.cancelled():
            failures.append(_connection_error(server, TimeoutError(f"no answer within {timeout} s")))
            continue
        exc = future.exception()
        if exc is not None:
            failures.append(_connection_error(server, exc))
    if failures and not skip_unreachable:
        first = failures[0]
        if len(failures) > 1:
            others = ", ".join(repr(f.server_name) for f in failures[1:])
            error = McpServerConnectionError(
                f"{first} (also failed: {others})", server_name=first.server_name, url=first.url
            )
            error.__cause__ = first.__cause__
            raise error
        raise first
    failed = {f.server_name for f in failures}
    for failure in failures:
        logger.warning("skipping MCP server %r: %s", failure.server_name, failure)
    ok = [s for s in servers if s.mcp_server_name not in failed]
    return Connected(ok, {s.mcp_server_name: results[s.mcp_server_name].result() for s in ok}, failures)


async def load_tools_per_call(
    client: MultiServerMCPClient,
    servers: Sequence[MCPServerConfig],
    *,
    timeout: float,
    skip_unreachable: bool = False,
) -> Connected:
    """Each server's tools, listed concurrently within ``timeout``; each tool opens its own
    session per call."""
    tasks = {
        s.mcp_server_name: asyncio.create_task(
            client.get_tools(server_name=s.mcp_server_name), name=f"a365-mcp-list-{s.mcp_server_name}"
        )
        for s in servers
    }
    try:
        if tasks:
            await asyncio.wait(tasks.values(), timeout=timeout)
        return _outcome(servers, dict(tasks), timeout, skip_unreachable)
    finally:
        # Listings still running past the deadline (or when we are cancelled) are abandoned.
        pending = [task for task in tasks.values() if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)


@contextlib.asynccontextmanager
async def open_sessions(
    client: MultiServerMCPClient,
    servers: Sequence[MCPServerConfig],
    *,
    timeout: float,
    skip_unreachable: bool = False,
) -> AsyncIterator[Connected]:
    """One open MCP session per server for the duration of the block; yields each server's tools.

    Every server must connect (initialize and list its tools) within ``timeout``; a server
    that fails or does not answer in time raises :class:`McpServerConnectionError` (the other
    sessions are closed), or with ``skip_unreachable`` is left out with a warning.

    Each session lives in its own holder task because the MCP client's transport (anyio task
    groups) must be entered and exited in the same task; the holders start together, so the
    servers are connected concurrently, and all of them are closed (or cancelled) on exit.
    """
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    ready: dict[str, asyncio.Future[list[BaseTool]]] = {
        s.mcp_server_name: loop.create_future() for s in servers
    }

    async def hold(name: str) -> None:
        future = ready[name]
        try:
            async with client.session(name) as session:
                tools = await load_mcp_tools(session, server_name=name, handle_tool_errors=True)
                if not future.done():
                    future.set_result(tools)
                await stop.wait()
        except BaseException as exc:
            if not future.done():
                future.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError):
                logger.debug("MCP session %r ended with %s", name, _describe(exc))
            if isinstance(exc, asyncio.CancelledError):
                raise

    holders = [
        asyncio.create_task(hold(s.mcp_server_name), name=f"a365-mcp-session-{s.mcp_server_name}")
        for s in servers
    ]
    try:
        if ready:
            await asyncio.wait(ready.values(), timeout=timeout)
        for holder, future in zip(holders, ready.values(), strict=True):
            if not future.done():  # past the deadline: give up on this server now
                future.cancel()
                holder.cancel()
        yield _outcome(servers, ready, timeout, skip_unreachable)
    finally:
        stop.set()
        for future in ready.values():
            if not future.done():  # still connecting (we were cancelled): nothing to close politely
                future.cancel()
        for holder, future in zip(holders, ready.values(), strict=True):
            if future.cancelled():
                holder.cancel()
        if holders:
            _, pending = await asyncio.wait(holders, timeout=_CLOSE_TIMEOUT)
            for holder in pending:
                holder.cancel()
            if pending:
                await asyncio.wait(pending)
        # Retrieve outcomes so no "exception was never retrieved" warnings leak.
        for future in ready.values():
            if future.done() and not future.cancelled():
                future.exception()
