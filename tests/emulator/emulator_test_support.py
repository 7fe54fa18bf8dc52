"""Typing helpers shared by the emulator tests (the fixtures live in this folder's conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from mcp import ClientSession

McpSessionFactory = Callable[..., AbstractAsyncContextManager[ClientSession]]
"""``mcp_session(url, token)``: an async context manager yielding an initialized MCP client session."""
