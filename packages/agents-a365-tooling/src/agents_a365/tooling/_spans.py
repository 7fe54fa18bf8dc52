"""The spans of the tooling core and its extensions: the null object, live spans with their duration
measurement, ``operation`` for the core's steps and ``tool_call_span`` for the extensions' tool calls.

The providers, instruments and settings they record through are ``_telemetry.py``'s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Self

from ._redact import describe_error, leaf, scrub
from ._telemetry import _tracer, instruments, monotonic, record_tool_content
from ._turn import TurnIdentity

try:
    from opentelemetry import context as _context
    from opentelemetry import trace as _trace
except ImportError:  # no tracer is ever live then, so neither is read
    _trace = _context = None  # type: ignore[assignment]

__all__ = ["NULL_SPAN", "ToolCallSpan", "operation", "tool_call_span", "tracing"]

MAX_CONTENT_CHARS = 4096  # recorded tool arguments and results are cut here


class ToolCallSpan:
    """What a span hook yields. This base records nothing (telemetry off); the live one records."""

    __slots__ = ()

    def set(self, key: str, value: Any) -> None:
        """Set an attribute (``None`` values are skipped)."""

    def metric(self, key: str, value: Any) -> None:
        """An attribute of the operation's duration measurement (low cardinality only)."""

    def fail(self, error_type: str, description: str | None = None) -> None:
        """Mark the operation failed (``error.type``, error status); ``description`` is scrubbed."""

    def fail_with(self, exc: BaseException) -> None:
        """Mark the operation failed by ``exc`` (its type and scrubbed text, never the object)."""

    def record_result(self, result: Any, *, is_error: bool | None = None) -> None:
        """A tool call's result: ``is_error`` marks a tool error (``None``: read from an MCP
        ``CallToolResult``, see :func:`is_tool_error`); content only when opted in."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        return None


NULL_SPAN = ToolCallSpan()


class _Live(ToolCallSpan):
    __slots__ = ("_histogram", "_metric", "_span", "_start", "_token")

    def __init__(
        self,
        tracer: Any,
        name: str,
        client: bool,
        attributes: Mapping[str, Any],
        histogram: Any,
        metric: Mapping[str, Any],
    ) -> None:
        self._histogram = histogram  # the instrument, or None: no measurement
        # The caller's, never changed: an added attribute makes a new dict; "error.type" once failed.
        self._metric = metric
        self._span: Any = None
        if tracer is not None:  # each hook is entered where it is made: its span starts here
            kind = _trace.SpanKind.CLIENT if client else _trace.SpanKind.INTERNAL
            values = {k: v for k, v in attributes.items() if v is not None}
            self._span = tracer.start_span(name, kind=kind, attributes=values)

    def __enter__(self) -> Self:
        if self._span is not None:
            # start_span + attach, not start_as_current_span: the same span made current, without the two
            # generator context managers; the exception is recorded here (scrubbed), never by the SDK.
            self._token = _context.attach(_trace.set_span_in_context(self._span))
        self._start = monotonic()
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        try:
            if exc is not None and "error.type" not in self._metric:  # not failed already
                self.fail_with(exc)
            if self._histogram is not None:
                self._histogram.record(monotonic() - self._start, self._metric)
        finally:
            if self._span is not None:
                _context.detach(self._token)
                self._span.end()  # the exception itself never reaches the SDK

    def set(self, key: str, value: Any) -> None:
        if value is not None and self._span is not None:
            self._span.set_attribute(key, value)

    def metric(self, key: str, value: Any) -> None:
        if value is not None:
            self._metric = {**self._metric, key: value}

    def fail(self, error_type: str, description: str | None = None) -> None:
        self._metric = {**self._metric, "error.type": error_type}
        if self._span is not None:
            self._span.set_attribute("error.type", error_type)
            status = _trace.Status(_trace.StatusCode.ERROR, scrub(description) if description else None)
            self._span.set_status(status)

    def fail_with(self, exc: BaseException) -> None:
        first = leaf(exc)
        self.fail(type(first).__qualname__, describe_error(exc))
        if self._span is not None:
            attributes = {"exception.type": type(first).__qualname__, "exception.message": scrub(first)}
            self._span.add_event("exception", attributes)

    def record_result(self, result: Any, *, is_error: bool | None = None) -> None:
        if is_error is None:
            is_error = is_tool_error(result)
        self.set("a365.tool.outcome", "tool_error" if is_error else "success")
        if is_error:
            self.fail("tool_error")
        if self._span is not None and record_tool_content():
            self.set("gen_ai.tool.call.result", content_text(result))


def is_tool_error(result: Any) -> bool:
    """Whether an MCP ``CallToolResult`` reports a tool error: its public field is ``isError`` in mcp 1.x
    and ``is_error`` in mcp 2.x (``isError`` only on the wire there)."""
    return getattr(result, "is_error", None) is True or getattr(result, "isError", None) is True


def content_text(value: Any) -> str:
    """A tool argument or result as text for a span: JSON where possible, scrubbed, truncated."""
    if isinstance(value, str):
        text = value
    elif hasattr(value, "model_dump_json"):
        text = value.model_dump_json(by_alias=True, exclude_none=True)
    else:
        try:
            text = json.dumps(value, default=str, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    text = scrub(text)
    return text if len(text) <= MAX_CONTENT_CHARS else text[:MAX_CONTENT_CHARS] + "…"


def operation(
    name: str,
    *,
    client: bool = False,
    attributes: Mapping[str, Any] | None = None,
    histogram: str | None = None,
    metric_attributes: Mapping[str, Any] | None = None,
) -> ToolCallSpan:
    """A span named ``name`` (kind CLIENT with ``client``) and/or a duration measurement into
    ``histogram``; the shared null object when neither records."""
    tracer, timer = _tracer(), None
    if histogram is not None and (inst := instruments()) is not None:
        timer = inst[histogram]
    if tracer is None and timer is None:
        return NULL_SPAN
    return _Live(tracer, name, client, attributes or {}, timer, metric_attributes or {})


def token_exchange_span(scope: str, servers: tuple[str, ...]) -> ToolCallSpan:
    """The span and duration (``a365.tooling.token_exchange.duration``) of one token exchange: a cache
    miss, or a failure before the lookup. A token answered from the cache is counted, not traced."""
    attributes = {"a365.token.scope": scope, "a365.mcp.server.names": servers} if tracing() else None
    return operation("a365.tooling.token_exchange", attributes=attributes, histogram="token_exchange")


def tracing() -> bool:
    """Whether spans are recorded (for callers that would build attributes first)."""
    return _tracer() is not None


def identity_attributes(identity: TurnIdentity | None) -> dict[str, Any]:
    """The turn's identity as span attributes (the names Microsoft's observability packages use)."""
    if identity is None:
        return {}
    return {
        "gen_ai.conversation.id": identity.conversation_id,
        "gen_ai.agent.id": identity.agent_id,
        "microsoft.tenant.id": identity.tenant_id,
        "microsoft.channel.name": identity.channel,
    }


def tool_call_span(
    server: str,
    tool: str,
    call_id: str | None = None,
    *,
    arguments: Any = None,
    turn: TurnIdentity | None = None,
) -> ToolCallSpan:
    """One GenAI ``execute_tool {tool}`` span (and a ``a365.tooling.tool_call.duration`` measurement)
    around an MCP tool call, for extensions: ``with tool_call_span(...) as span: ...;
    span.record_result(result, is_error=...)``. An exception leaving the block marks it failed
    (scrubbed). Arguments are recorded only when the user opted in (:func:`configure_telemetry`);
    ``turn`` adds the turn's identity (conversation, agent, tenant, channel)."""
    tracer, inst = _tracer(), instruments()
    if tracer is None and inst is None:
        return NULL_SPAN
    attributes: dict[str, Any] = {}
    if tracer is not None:
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "extension",
            "a365.mcp.server.name": server,
            **identity_attributes(turn),
        }
        if arguments is not None and record_tool_content():
            attributes["gen_ai.tool.call.arguments"] = content_text(arguments)
    metric = {"a365.mcp.server.name": server, "gen_ai.tool.name": tool}
    timer = inst["tool_call"] if inst is not None else None
    return _Live(tracer, f"execute_tool {tool}", False, attributes, timer, metric)
