"""Instrumentation hooks of the core: the MCP listing session, and a threat-protection send (one
span per send, one child per HTTP attempt).

Kept out of the send loop (``_rtp_send.py``): the loop calls :func:`rtp_attempt` instead of
``request_bounded`` and the service method is wrapped by :func:`traced_rtp_send`. The attempt
span follows the HTTP client conventions (``http.request.method``, ``server.address``,
``http.response.status_code``, ``http.request.resend_count``, ``error.type``).
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from agents_a365.runtime import OperationResult

from ._bounded_http import BoundedResponse, ResponseTooLargeError, request_bounded
from ._retry import RETRYABLE_STATUS, parse_retry_after
from ._telemetry import NULL_SPAN, ToolCallSpan, enabled, identity_attributes, operation, tracing
from ._telemetry_metrics import instruments
from ._turn import read_activity

try:
    from opentelemetry.trace import get_current_span
except ImportError:  # the [otel] extra is not installed: tracing() is never true then
    get_current_span = None  # type: ignore[assignment]

__all__ = [
    "cache_lookup",
    "mcp_session_span",
    "rtp_attempt",
    "traced_mcp_listing",
    "traced_rtp_send",
    "turn_attributes",
]


class _Send:
    """What the attempts of one send tell their parent."""

    __slots__ = ("attempts", "last_cause", "span")

    def __init__(self, span: ToolCallSpan) -> None:
        self.span = span
        self.attempts = 0
        self.last_cause: str | None = None


_CURRENT: contextvars.ContextVar[_Send | None] = contextvars.ContextVar("a365_rtp_send", default=None)


def traced_rtp_send(
    method: Callable[..., Awaitable[OperationResult]],
) -> Callable[..., Awaitable[OperationResult]]:
    """Wrap ``ThreatProtection.send_chat_history``: a send span with the turn's identity and outcome,
    the send's duration and its outcome counted (delivered, or failed by cause)."""

    @functools.wraps(method)
    async def send(self: Any, turn_context: Any, *args: Any, **kwargs: Any) -> OperationResult:
        span = operation(
            "a365.tooling.send_chat_history",
            attributes=turn_attributes(turn_context) if tracing() else None,
            histogram="rtp",
        )
        if span is NULL_SPAN:
            return await method(self, turn_context, *args, **kwargs)
        state = _Send(span)
        token = _CURRENT.set(state)
        try:
            with span:
                result = await method(self, turn_context, *args, **kwargs)
                _finish(state, result)
                return result
        finally:
            _CURRENT.reset(token)

    return send


def _finish(state: _Send, result: OperationResult) -> None:
    span = state.span
    span.set("a365.rtp.attempts", state.attempts)
    if result.succeeded:
        outcome, cause = "delivered", None
    else:
        error = result.errors[0].exception if result.errors else None
        text = str(error) if error is not None else ""
        cause = "queue_timeout" if state.attempts == 0 or "queued too long" in text else state.last_cause
        cause = cause or "unknown"
        outcome = "failed"
        span.fail(cause, text)
    span.set("a365.rtp.outcome", outcome)
    span.metric("a365.rtp.outcome", outcome)
    inst = instruments()
    if inst is not None:
        attributes = {"a365.rtp.outcome": outcome}
        if cause is not None:
            attributes["error.type"] = cause
        inst.count("rtp_sends", attributes)


async def rtp_attempt(client: httpx.AsyncClient, method: str, url: str, **kwargs: Any) -> BoundedResponse:
    """``request_bounded`` as one attempt of the current send, in a CLIENT span of its own."""
    state = _CURRENT.get()
    if state is None:
        return await request_bounded(client, method, url, **kwargs)
    state.attempts += 1
    resend = state.attempts - 1
    inst = instruments()
    if resend and inst is not None:
        inst.count("rtp_retries", {"a365.rtp.retry_reason": state.last_cause or "unknown"})
    parts = urlsplit(url)
    span = operation(
        method,
        client=True,
        attributes={
            "http.request.method": method,
            "server.address": parts.hostname,
            "server.port": parts.port or (443 if parts.scheme == "https" else 80),
            "url.full": url,
            "http.request.resend_count": resend or None,
        },
    )
    with span:
        try:
            response = await request_bounded(client, method, url, **kwargs)
        except TimeoutError:
            state.last_cause = "timeout"
            span.fail("timeout", "no answer within the send's deadline")
            raise
        except ResponseTooLargeError:
            state.last_cause = "response_too_large"
            span.fail("response_too_large")
            raise
        except httpx.HTTPError as exc:
            state.last_cause = type(exc).__qualname__
            span.fail_with(exc)
            span.set("a365.rtp.retryable", True)
            raise
        span.set("http.response.status_code", response.status_code)
        if not response.is_success:
            status = str(response.status_code)
            state.last_cause = f"http_{status}"
            span.fail(status)
            span.set("a365.rtp.retryable", response.status_code in RETRYABLE_STATUS)
            span.set("a365.rtp.retry_after", parse_retry_after(response.headers.get("Retry-After")))
        return response


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


def _address(url: str | None) -> dict[str, Any]:
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
        if not enabled():
            return await function(server_name, server, **kwargs)
        with mcp_session_span(server_name, str(server.url), method="tools/list") as span:
            tools = await function(server_name, server, **kwargs)
            span.set("a365.mcp.tool_count", len(tools))
            return tools

    return listing  # type: ignore[return-value]


def turn_attributes(turn_context: Any) -> dict[str, Any]:
    """The turn's identity as span attributes (the names Microsoft's observability packages use)."""
    activity = getattr(turn_context, "activity", None)
    return {} if activity is None else identity_attributes(read_activity(activity))


def cache_lookup(cache: str, *, hit: bool) -> None:
    """Count a cache hit or miss (``a365.tooling.cache.hits`` / ``.misses``) and note it as
    ``a365.cache.hit`` on the current span (the discovery or token span around the lookup)."""
    if tracing():
        get_current_span().set_attribute("a365.cache.hit", hit)
    inst = instruments()
    if inst is not None:
        inst.count("cache_hits" if hit else "cache_misses", {"a365.cache.name": cache})
