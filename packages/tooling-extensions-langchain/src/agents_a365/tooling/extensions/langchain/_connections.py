"""MCP connections and tool loading over langchain-mcp-adapters."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence

from langchain_core.tools import BaseTool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.sessions import Connection, StreamableHttpConnection
from langchain_mcp_adapters.tools import load_mcp_tools

from agents_a365.tooling import MCPServerConfig, McpServerConnectionError

__all__ = ["build_client", "load_tools_per_call", "open_sessions"]

logger = logging.getLogger(__name__)

# How long closing the per-turn sessions may take before the holders are cancelled.
_CLOSE_TIMEOUT = 5.0


def _connection(server: MCPServerConfig, timeout: float) -> StreamableHttpConnection:
    # server.headers is complete (shared headers + this server's own Authorization):
    # used as-is, never with another Authorization added.
    return StreamableHttpConnection(
        transport="streamable_http", url=server.url, headers=dict(server.headers), timeout=timeout
    )


def build_client(servers: Sequence[MCPServerConfig], timeout: float) -> MultiServerMCPClient:
    connections: dict[str, Connection] = {s.mcp_server_name: _connection(s, timeout) for s in servers}
    return MultiServerMCPClient(connections, handle_tool_errors=True)


def _describe(exc: BaseException) -> str:
    # Exception types only: transport errors may echo request details, never risk a token.
    if isinstance(exc, BaseExceptionGroup):
        return ", ".join(sorted({_describe(e) for e in exc.exceptions}))
    return type(exc).__name__


def _connection_error(server: MCPServerConfig, exc: BaseException) -> McpServerConnectionError:
    error = McpServerConnectionError(
        f"MCP server {server.mcp_server_name!r} at {server.url} failed: {_describe(exc)}",
        server_name=server.mcp_server_name,
        url=server.url,
    )
    error.__cause__ = exc
    return error


async def _gather_per_server(
    servers: Sequence[MCPServerConfig], load: dict[str, asyncio.Task[list[BaseTool]]]
) -> dict[str, list[BaseTool]]:
    await asyncio.wait(load.values())
    failures = [(s, load[s.mcp_server_name].exception()) for s in servers]
    for server, exc in failures:
        if exc is not None:
            raise _connection_error(server, exc)
    return {s.mcp_server_name: load[s.mcp_server_name].result() for s in servers}


async def load_tools_per_call(
    client: MultiServerMCPClient, servers: Sequence[MCPServerConfig]
) -> dict[str, list[BaseTool]]:
    """Each server's tools, listed concurrently; each tool opens its own session per call."""
    tasks = {
        s.mcp_server_name: asyncio.create_task(
            client.get_tools(server_name=s.mcp_server_name), name=f"a365-mcp-list-{s.mcp_server_name}"
        )
        for s in servers
    }
    try:
        return await _gather_per_server(servers, tasks)
    except asyncio.CancelledError:
        for task in tasks.values():
            task.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        raise


@contextlib.asynccontextmanager
async def open_sessions(
    client: MultiServerMCPClient, servers: Sequence[MCPServerConfig]
) -> AsyncIterator[dict[str, list[BaseTool]]]:
    """One open MCP session per server for the duration of the block; yields each server's tools.

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
        await asyncio.wait(ready.values())
        for server in servers:
            exc = ready[server.mcp_server_name].exception()
            if exc is not None:
                raise _connection_error(server, exc)
        yield {name: future.result() for name, future in ready.items()}
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
