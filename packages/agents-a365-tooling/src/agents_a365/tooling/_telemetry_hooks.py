"""Instrumentation hooks of the core: a threat-protection send (one span per send, one child per HTTP
attempt), the MCP listing session, token exchanges, cache lookups.

The send loop (``_rtp_send.py``) makes its HTTP calls itself, each inside ``with rtp_attempt(...)``;
the attempt span follows the HTTP client conventions (``http.request.method``, ``server.address``,
``http.response.status_code``, ``http.request.resend_count``, ``error.type``).
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from agents_a365.runtime import OperationResult

from ._bounded_http import ResponseTooLargeError
from ._retry import RETRYABLE_STATUS, parse_retry_after
from ._spans import NULL_SPAN, ToolCallSpan, _Live, enabled, identity_attributes, operation, tracing
from ._telemetry import _tracer, instruments
from ._turn import Turn
from .errors import ChatHistorySendError

__all__ = ["cache_lookup", "mcp_session_span", "rtp_attempt", "traced_mcp_listing", "traced_rtp_send"]

# Metric attribute sets that do not depend on the call, built once (the SDK reads, never changes, them).
_DELIVERED = {"a365.rtp.outcome": "delivered"}
_CACHE_ATTRIBUTES = {name: {"a365.cache.name": name} for name in ("token", "discovery")}


@dataclass(slots=True)
class _Send:
    """What the attempts of one send tell their parent."""

    span: ToolCallSpan
    attempts: int = 0
    last_cause: str | None = None


_CURRENT: contextvars.ContextVar[_Send | None] = contextvars.ContextVar("a365_rtp_send", default=None)


def traced_rtp_send(
    method: Callable[..., Awaitable[OperationResult]],
) -> Callable[..., Awaitable[OperationResult]]:
    """Wrap ``ThreatProtection.send_chat_history``: a send span with the turn's identity and outcome,
    the send's duration and its outcome counted (delivered, or failed by cause)."""

    @functools.wraps(method)
    async def send(self: Any, turn: Turn, *args: Any, **kwargs: Any) -> OperationResult:
        span = operation(
            "a365.tooling.send_chat_history",
            attributes=turn_attributes(turn) if tracing() else None,
            histogram="rtp",
        )
        if span is NULL_SPAN:
            return await method(self, turn, *args, **kwargs)
        state = _Send(span)
        token = _CURRENT.set(state)
        try:
            with span:
                result = await method(self, turn, *args, **kwargs)
                _finish(state, result)
                return result
        finally:
            _CURRENT.reset(token)

    return send


def _finish(state: _Send, result: OperationResult) -> None:
    span, cause = state.span, None
    span.set("a365.rtp.attempts", state.attempts)
    outcome = "delivered" if result.succeeded else "failed"
    if not result.succeeded:
        error = result.errors[0].exception if result.errors else None
        # A send fails by its last attempt's cause, unless it then waited too long for a slot.
        cause = state.last_cause
        if isinstance(error, ChatHistorySendError) and (error.cause == "queue_timeout" or cause is None):
            cause = error.cause
        cause = cause or "unknown"
        span.fail(cause, str(error) if error is not None else "")
    span.set("a365.rtp.outcome", outcome)
    span.metric("a365.rtp.outcome", outcome)
    inst = instruments()
    if inst is not None:
        inst["rtp_sends"].add(
            1, _DELIVERED if cause is None else {"a365.rtp.outcome": outcome, "error.type": cause}
        )


class _Attempt(_Live):
    """One HTTP attempt of the current send: ``with rtp_attempt(...) as attempt: ...; attempt.answered(r)``."""

    __slots__ = ("_state",)
    _state: _Send  # set by rtp_attempt

    def answered(self, status_code: int, headers: httpx.Headers) -> None:
        self.set("http.response.status_code", status_code)
        if not 200 <= status_code < 300:
            self._state.last_cause = f"http_{status_code}"
            self.fail(str(status_code))
            self.set("a365.rtp.retryable", status_code in RETRYABLE_STATUS)
            self.set("a365.rtp.retry_after", parse_retry_after(headers.get("Retry-After")))

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, TimeoutError):
            self._state.last_cause = "timeout"
            self.fail("timeout", "no answer within the send's deadline")
        elif isinstance(exc, ResponseTooLargeError):
            self._state.last_cause = "response_too_large"
            self.fail("response_too_large")
        elif isinstance(exc, httpx.HTTPError):
            self._state.last_cause = type(exc).__qualname__
            self.fail_with(exc)
            self.set("a365.rtp.retryable", True)
        super().__exit__(exc_type, exc, tb)


class _NoAttempt(ToolCallSpan):
    __slots__ = ()

    def answered(self, status_code: int, headers: httpx.Headers) -> None:
        """Outside a traced send nothing is recorded."""


_NO_ATTEMPT = _NoAttempt()


def rtp_attempt(method: str, url: str) -> _Attempt | _NoAttempt:
    """A CLIENT span for one attempt of the current send (nothing outside a traced send)."""
    state = _CURRENT.get()
    if state is None:
        return _NO_ATTEMPT
    state.attempts += 1
    resend = state.attempts - 1
    inst = instruments()
    if resend and inst is not None:
        inst["rtp_retries"].add(1, {"a365.rtp.retry_reason": state.last_cause or "unknown"})
    attributes = {
        "http.request.method": method,
        **_address(url),
        "url.full": url,
        "http.request.resend_count": resend or None,
    }
    attempt = _Attempt(_tracer(), method, True, attributes, None, {})
    attempt._state = state
    return attempt


_F = TypeVar("_F", bound=Callable[..., Awaitable[Any]])


def mcp_session_span(server_name: str, url: str | None = None, *, method: str = "initialize") -> ToolCallSpan:
    """One CLIENT span per MCP session opened (``initialize``: connect and handshake) with the server's
    name and address, and its duration in ``a365.tooling.mcp.session.duration``, for extensions:
    ``with mcp_session_span(name, url): session = await open_it()`` (no-op without telemetry)."""
    if not enabled():
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
    return {
        "server.address": parts.hostname,
        "server.port": parts.port or (443 if parts.scheme == "https" else 80),
    }


def traced_mcp_listing(function: _F) -> _F:
    """Wrap ``list_server_tools(server_name, server, *, timeout)``: one CLIENT span ``tools/list``
    per MCP session opened to list a server's tools (server, address, tool count, outcome)."""

    @functools.wraps(function)
    async def listing(server_name: str, server: Any, **kwargs: Any) -> Any:
        with mcp_session_span(server_name, str(server.url), method="tools/list") as span:
            tools = await function(server_name, server, **kwargs)
            span.set("a365.mcp.tool_count", len(tools))
            return tools

    return listing  # type: ignore[return-value]


def turn_attributes(turn: Turn) -> dict[str, Any]:
    """The turn's identity as span attributes (the names Microsoft's observability packages use)."""
    return {} if turn.identity is None else identity_attributes(turn.identity)


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
