"""Instrumentation hooks of the core: a threat-protection send (one span per send, one child per HTTP
attempt), MCP sessions, cache lookups.

The send loop (``_rtp_send.py``) makes its HTTP calls itself, each inside ``with send.attempt(...)``, and
records on that span what it found; the attempt span follows the HTTP client conventions
(``http.request.method``, ``server.address``, ``http.response.status_code``, ``http.request.resend_count``,
``error.type``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from agents_a365.runtime import OperationResult

from ._spans import NULL_SPAN, ToolCallSpan, identity_attributes, operation, tracing
from ._telemetry import _tracer, instruments
from ._turn import Turn
from .errors import ChatHistorySendError

__all__ = ["SendTelemetry", "cache_lookup", "mcp_session_span"]

# Metric attribute sets that do not depend on the call, built once (the SDK reads, never changes, them).
_DELIVERED = {"a365.rtp.outcome": "delivered"}
_CACHE_ATTRIBUTES = {name: {"a365.cache.name": name} for name in ("token", "discovery")}


class SendTelemetry:
    """One threat-protection send's span, created by the send and handed to its loop: the loop opens
    :meth:`attempt` spans and notes each failed attempt's ``cause``; :meth:`finish` records the outcome."""

    __slots__ = ("attempts", "cause", "span")

    def __init__(self, turn: Turn) -> None:
        attributes = identity_attributes(turn.identity) if tracing() else None
        self.span = operation("a365.tooling.send_chat_history", attributes=attributes, histogram="rtp")
        self.attempts = 0
        # The last failed attempt's (http_503, timeout, ConnectError...), or queue_timeout.
        self.cause: str | None = None

    def attempt(self, method: str, url: str) -> ToolCallSpan:
        """A CLIENT span for the next HTTP attempt (the null one while nothing records)."""
        self.attempts += 1
        if self.span is NULL_SPAN:
            return NULL_SPAN
        resend = self.attempts - 1
        inst = instruments()
        if resend and inst is not None:
            inst["rtp_retries"].add(1, {"a365.rtp.retry_reason": self.cause or "unknown"})
        attributes = {
            "http.request.method": method,
            **_address(url),
            "url.full": url,
            "http.request.resend_count": resend or None,
        }
        return operation(method, client=True, attributes=attributes)

    def finish(self, result: OperationResult) -> None:
        span, cause = self.span, None
        if span is NULL_SPAN:
            return
        span.set("a365.rtp.attempts", self.attempts)
        outcome = "delivered" if result.succeeded else "failed"
        if not result.succeeded:
            error = result.errors[0].exception  # a failed send's result holds its ChatHistorySendError
            # A send fails by its last attempt's cause (or a slot waited for too long), else by its error's.
            cause = self.cause or (error.cause if isinstance(error, ChatHistorySendError) else "unknown")
            span.fail(cause, str(error))
        span.set("a365.rtp.outcome", outcome)
        span.metric("a365.rtp.outcome", outcome)
        inst = instruments()
        if inst is not None:
            inst["rtp_sends"].add(
                1, _DELIVERED if cause is None else {"a365.rtp.outcome": outcome, "error.type": cause}
            )


def mcp_session_span(server_name: str, url: str | None = None, *, method: str = "initialize") -> ToolCallSpan:
    """One CLIENT span per MCP session opened (``initialize``: connect and handshake) with the server's
    name and address, and its duration in ``a365.tooling.mcp.session.duration``, for extensions:
    ``with mcp_session_span(name, url): session = await open_it()`` (no-op without telemetry)."""
    if _tracer() is None and instruments() is None:  # nothing records: no attributes built
        return NULL_SPAN
    return operation(
        method,
        client=True,
        attributes={"mcp.method.name": method, "a365.mcp.server.name": server_name, **_address(url)},
        histogram="mcp_session" if method == "initialize" else "mcp_list",
        metric_attributes={"a365.mcp.server.name": server_name},
    )


@functools.lru_cache(maxsize=256)  # a handful of URLs (threat protection's, the MCP servers') per process
def _address(url: str | None) -> Mapping[str, Any]:
    if not url:
        return {}
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return {"server.address": parts.hostname, "server.port": port}


def cache_lookup(cache: str, *, hit: bool) -> None:
    """Count a cache hit or miss (``a365.tooling.cache.hits`` / ``.misses``); a discovery lookup is also
    noted as ``a365.cache.hit`` on the current span, the discovery span around it. (A token's span exists
    only for an exchange, a miss, and says so itself: a cached token is counted, not traced.)"""
    if cache == "discovery" and tracing():
        from opentelemetry.trace import get_current_span  # importable: tracing() says so

        get_current_span().set_attribute("a365.cache.hit", hit)
    inst = instruments()
    if inst is not None:
        inst["cache_hits" if hit else "cache_misses"].add(1, _CACHE_ATTRIBUTES[cache])
