"""One MCP server's circuit breaker and its bound on opening sessions (the session pool keeps one per URL).

A server that failed ``threshold`` requests in a row (transient failures: no answer in time, the connection
lost, HTTP 5xx/429; requests in flight together fail as one, so one hiccup under load is one failure, not
a hundred) is known down: its calls and listings fail at once with
:class:`~agents_a365.tooling.McpServerUnavailableError` for ``cooldown`` seconds instead of each waiting out
the deadline; then one request (the probe) goes through and decides: an answer closes the breaker, a failure
opens it for another cool-down. One WARNING per outage; the ``a365.tooling.mcp.breaker`` counter counts
outages (``opened``) and requests failed at once (``rejected``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ._telemetry import instruments
from .errors import McpServerUnavailableError
from .models import MCPServerConfig

__all__ = ["Breaker"]

logger = logging.getLogger("agents_a365.tooling._sessions")


def _count(event: str) -> None:
    inst = instruments()
    if inst is not None:
        inst["mcp_breaker"].add(1, {"a365.mcp.breaker.event": event})


class Breaker:
    def __init__(self, clock: Callable[[], float], open_concurrency: int) -> None:
        self._clock = clock
        # Transient failures in a row; open until; the probe is out; failures counted so far (a request
        # counts only if none was counted since it started).
        self.failures, self.open_until, self.probing, self.counted = 0, 0.0, False, 0
        self.opens = asyncio.Semaphore(max(open_concurrency, 1))  # sessions being opened to the server

    def admit(self, server: MCPServerConfig, threshold: int) -> int:
        """This request's place in the streak (for :meth:`record`; -1: it is the probe); raises
        ``McpServerUnavailableError`` while the breaker is open."""
        if threshold <= 0 or self.failures < threshold:
            return self.counted
        wait = self.open_until - self._clock()
        if wait > 0 or self.probing:
            _count("rejected")
            raise McpServerUnavailableError(
                f"MCP server {server.mcp_server_name!r} at {server.url} is unavailable: it failed {self.failures} "
                f"requests in a row (circuit breaker open, next try in {max(wait, 0):.1f} s)",
                server_name=server.mcp_server_name,
                url=server.url,
                retry_after=max(wait, 0.0),
            )
        self.probing = True
        return -1

    def record(
        self, server: MCPServerConfig, ok: bool | None, place: int, threshold: int, cooldown: float
    ) -> None:
        """A request's outcome: answered (``True``), a transient failure (``False``), or neither (cancelled)."""
        self.probing = self.probing and place >= 0
        if ok:
            if 0 < threshold <= self.failures:
                logger.warning("MCP server %r answers again: circuit breaker closed", server.mcp_server_name)
            self.failures = 0
        # A failure counts unless one was counted while it was in flight (the same hiccup).
        elif ok is False and place in (-1, self.counted):
            self.failures, self.counted = self.failures + 1, self.counted + 1
            if 0 < threshold <= self.failures:
                self.open_until = self._clock() + cooldown
            if self.failures == threshold:  # once per outage: later failures only extend the cool-down
                _count("opened")
                text = "MCP server %r failed %d requests in a row: its requests fail at once for %g s, then one probe"
                logger.warning(text, server.mcp_server_name, threshold, cooldown)
