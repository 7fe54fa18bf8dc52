"""OpenTelemetry spans and metrics of the tooling core and its extensions, on ``opentelemetry-api``'s public API.

The API is an optional dependency (``agents-a365-tooling[otel]``). A module-level tracer and meter
(``trace.get_tracer``, ``metrics.get_meter``) follow whatever global provider the application sets,
whenever it sets it; :func:`configure_telemetry` may name other providers. While neither records (the
API's proxy / no-op providers, or no API at all), every hook returns one shared null object: no span,
no clock read, no attribute dict. Spans start as children of the current context (the host's turn,
the orchestrator's run). Failures are recorded through the token redaction, never the raw exception.
See docs/observability.md for the names and attributes.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from typing import Any

from ._mcp_errors import leaf as first_leaf
from ._redact import describe_error, scrub
from ._turn import TurnIdentity

try:
    from opentelemetry import metrics as _metrics
    from opentelemetry import trace as _trace
except ImportError:  # the [otel] extra is not installed: every hook is a no-op
    _trace = _metrics = None  # type: ignore[assignment]

__all__ = ["RECORD_TOOL_CONTENT_ENV", "ToolCallSpan", "configure_telemetry", "operation", "tool_call_span"]

RECORD_TOOL_CONTENT_ENV = "A365_OTEL_RECORD_TOOL_CONTENT"
SCOPE = "agents_a365.tooling"
MAX_CONTENT_CHARS = 4096  # recorded tool arguments and results are cut here
monotonic = time.perf_counter

_HISTOGRAMS = {
    "discovery": ("a365.tooling.discovery.duration", "MCP server discovery (manifest or gateway)"),
    "token_exchange": ("a365.tooling.token_exchange.duration", "One token lookup or exchange"),
    "rtp": ("a365.tooling.threat_protection.duration", "One threat-protection send, all attempts"),
    "tool_call": ("a365.tooling.tool_call.duration", "One MCP tool call"),
    "mcp_list": ("a365.tooling.mcp.list_tools.duration", "One MCP session listing a server's tools"),
    "mcp_session": ("a365.tooling.mcp.session.duration", "Opening one MCP session (connect, initialize)"),
}
_COUNTERS = {
    "rtp_sends": ("a365.tooling.threat_protection.sends", "{send}", "Sends by outcome and cause"),
    "rtp_retries": ("a365.tooling.threat_protection.retries", "{retry}", "Retried attempts by reason"),
    "cache_hits": ("a365.tooling.cache.hits", "{lookup}", "Cache hits (token, discovery)"),
    "cache_misses": ("a365.tooling.cache.misses", "{lookup}", "Cache misses (token, discovery)"),
}


Instruments = dict[str, Any]  # one meter's histograms (seconds; ``.record``) and counters (``.add``) by key


def _instruments(meter: Any) -> Instruments:
    made = {k: meter.create_histogram(n, unit="s", description=d) for k, (n, d) in _HISTOGRAMS.items()}
    return made | {k: meter.create_counter(n, unit=u, description=d) for k, (n, u, d) in _COUNTERS.items()}


_TRACER = _trace.get_tracer(SCOPE) if _trace is not None else None
_INSTRUMENTS = _instruments(_metrics.get_meter(SCOPE)) if _metrics is not None else None


class _State:
    tracer: Any = None  # of a provider given to configure_telemetry; None: the module-level one
    instruments: Instruments | None = None  # likewise
    global_tracer = global_meter = False  # a global provider was seen (the API sets one once per process)
    next_check = 0.0  # while neither is seen, the global providers are looked at again from then on
    record_content: bool | None = None


_state = _State()
_RECHECK_SECONDS = 1.0  # asking the API for its providers costs ~1 us (os.environ), more than a hook


def configure_telemetry(
    *, tracer_provider: Any = None, meter_provider: Any = None, record_tool_content: bool | None = None
) -> None:
    """Where the SDK's spans and metrics go, and whether tool arguments and results are recorded.

    By default the global providers of ``opentelemetry-api`` are used (nothing is recorded until the
    application sets them; one set after the SDK's first operation is picked up within a second, or at
    once by calling this). Pass providers to use others; call without arguments to go back to the
    global ones. ``record_tool_content=True`` records tool call arguments and results
    (``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``; they may hold personal data, so
    this is off by default); ``None`` reads ``A365_OTEL_RECORD_TOOL_CONTENT``.
    """
    if record_tool_content is not None and not isinstance(record_tool_content, bool):
        raise TypeError("record_tool_content must be a bool or None")
    api = _trace is not None
    _state.tracer = tracer_provider.get_tracer(SCOPE) if api and tracer_provider else None
    _state.instruments = _instruments(meter_provider.get_meter(SCOPE)) if api and meter_provider else None
    _state.record_content = record_tool_content
    _state.next_check = 0.0


def _check_globals() -> None:
    now = monotonic()
    if now < _state.next_check or _trace is None:
        return
    _state.next_check = now + _RECHECK_SECONDS
    if not isinstance(_trace.get_tracer_provider(), _trace.ProxyTracerProvider | _trace.NoOpTracerProvider):
        _state.global_tracer = True
    meters = _metrics.get_meter_provider()
    # The API offers no public "is a provider set?" for metrics: its stand-in is known by its class name.
    # Should that change, metrics are still right; they are only no longer skipped while nothing records.
    if not isinstance(meters, _metrics.NoOpMeterProvider) and type(meters).__name__ != "_ProxyMeterProvider":
        _state.global_meter = True


def _tracer() -> Any:
    if _state.tracer is None and not _state.global_tracer:
        _check_globals()
    return _state.tracer or (_TRACER if _state.global_tracer else None)


def instruments() -> Instruments | None:
    """The instruments, or ``None`` while no meter provider records (the cheap path)."""
    if _state.instruments is None and not _state.global_meter:
        _check_globals()
    return _state.instruments or (_INSTRUMENTS if _state.global_meter else None)


def record_tool_content() -> bool:
    if _state.record_content is not None:
        return _state.record_content
    return os.environ.get(RECORD_TOOL_CONTENT_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


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

    def __enter__(self) -> ToolCallSpan:
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        return None


NULL_SPAN = ToolCallSpan()


class _Live(ToolCallSpan):
    __slots__ = ("_cm", "_failed", "_histogram", "_metric", "_span", "_start")

    def __init__(
        self,
        tracer: Any,
        name: str,
        client: bool,
        attributes: dict[str, Any],
        histogram: str | None,
        metric: dict[str, Any],
    ) -> None:
        inst = instruments() if histogram is not None else None
        self._histogram = inst[histogram] if inst is not None and histogram is not None else None
        self._metric = metric
        self._failed = False
        self._span: Any = None
        self._cm: Any = None
        if tracer is not None:  # the exception is recorded here (scrubbed), never by the OpenTelemetry SDK
            kind = _trace.SpanKind.CLIENT if client else _trace.SpanKind.INTERNAL
            values = {k: v for k, v in attributes.items() if v is not None}
            self._cm = tracer.start_as_current_span(
                name, kind=kind, attributes=values, record_exception=False, set_status_on_exception=False
            )

    def __enter__(self) -> _Live:
        if self._cm is not None:
            self._span = self._cm.__enter__()
        self._start = monotonic()
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        try:
            if exc is not None and not self._failed:
                self.fail_with(exc)
            if self._histogram is not None:
                self._histogram.record(monotonic() - self._start, self._metric)
        finally:
            if self._cm is not None:
                self._cm.__exit__(None, None, None)  # the exception itself never reaches the SDK

    def set(self, key: str, value: Any) -> None:
        if value is not None and self._span is not None:
            self._span.set_attribute(key, value)

    def metric(self, key: str, value: Any) -> None:
        if value is not None:
            self._metric[key] = value

    def fail(self, error_type: str, description: str | None = None) -> None:
        self._failed = True
        self._metric["error.type"] = error_type
        if self._span is not None:
            self._span.set_attribute("error.type", error_type)
            self._span.set_status(
                _trace.Status(_trace.StatusCode.ERROR, scrub(description) if description else None)
            )

    def fail_with(self, exc: BaseException) -> None:
        leaf = first_leaf(exc)
        self.fail(type(leaf).__qualname__, describe_error(exc))
        if self._span is not None:
            attributes = {"exception.type": type(leaf).__qualname__, "exception.message": scrub(leaf)}
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
    tracer = _tracer()
    if tracer is None and (histogram is None or instruments() is None):
        return NULL_SPAN
    return _Live(tracer, name, client, dict(attributes or ()), histogram, dict(metric_attributes or ()))


def tracing() -> bool:
    """Whether spans are recorded (for callers that would build attributes first)."""
    return _tracer() is not None


def enabled() -> bool:
    """Whether spans or metrics are recorded (for callers that would build attributes first)."""
    return _tracer() is not None or instruments() is not None


def identity_attributes(identity: TurnIdentity) -> dict[str, Any]:
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
    tracer = _tracer()
    if tracer is None and instruments() is None:
        return NULL_SPAN
    attributes: dict[str, Any] = {}
    if tracer is not None:
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "extension",
            "a365.mcp.server.name": server,
            **(identity_attributes(turn) if turn is not None else {}),
        }
        if arguments is not None and record_tool_content():
            attributes["gen_ai.tool.call.arguments"] = content_text(arguments)
    metric = {"a365.mcp.server.name": server, "gen_ai.tool.name": tool}
    return _Live(tracer, f"execute_tool {tool}", False, attributes, "tool_call", metric)
