"""Shared fixtures for the emulator tests (the ``emulator`` fixture itself comes from the package's plugin)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from agents_a365.emulator import Emulator


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


@pytest.fixture
def platform_headers(emulator: Emulator) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator.platform_token()}"}


@pytest.fixture
def mcp_session() -> Callable[..., AbstractAsyncContextManager[ClientSession]]:
    """``async with mcp_session(url, token) as session`` opens an initialized real MCP client session."""

    @asynccontextmanager
    async def open_session(url: str, token: str | None) -> AsyncIterator[ClientSession]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with (
            create_mcp_http_client(headers=headers, timeout=httpx.Timeout(10)) as client,
            streamable_http_client(url, http_client=client) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session

    return open_session
