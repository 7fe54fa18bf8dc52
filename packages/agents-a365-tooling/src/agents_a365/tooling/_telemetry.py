"""OpenTelemetry spans of the tooling core and its extensions, written against ``opentelemetry-api`` only.

The API is an optional dependency (``agents-a365-tooling[otel]``). Without it, or while no tracer
and no meter provider is configured (the API's proxy / no-op providers), every hook returns one
shared null context manager: no span object, no clock read, no attribute dict. Spans start as
children of the current context, so the host's turn span and the orchestrator's run (LangChain,
OpenAI Agents SDK) are their parents when those are traced. Failures are recorded through the token
redaction (``describe_error``/``scrub``): never the raw exception, never a bearer token.
See docs/observability.md for the names and attributes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ._redact import describe_error, scrub
from ._telemetry_metrics import Instruments, instruments, monotonic
from ._turn import TurnIdentity

try:
    from opentelemetry import trace as _trace
    from opentelemetry.trace import SpanKind as _SpanKind
    from opentelemetry.trace import Status as _Status
    from opentelemetry.trace import StatusCode as _StatusCode
except ImportError:  # the [otel] extra is not installed: every hook is a no-op
    _trace = None  # type: ignore[assignment]

__all__ = [
    "RECORD_TOOL_CONTENT_ENV",
    "ToolCallSpan",
    "configure_telemetry",
    "operation",
    "tool_call_span",
]

RECORD_TOOL_CONTENT_ENV = "A365_OTEL_RECORD_TOOL_CONTENT"
SCOPE = "agents_a365.tooling"
# Recorded tool arguments and results are cut here: a span attribute is no place for a document.
MAX_CONTENT_CHARS = 4096


class _State:
    tracer_provider: Any = None  # given to configure_telemetry; None: the global provider
    tracer: Any = None  # cached once a real provider is seen (a global provider is set once)
    record_content: bool | None = None


_state = _State()


def configure_telemetry(
    *, tracer_provider: Any = None, meter_provider: Any = None, record_tool_content: bool | None = None
) -> None:
    """Where the SDK's spans and metrics go, and whether tool arguments and results are recorded.

    By default the global providers of ``opentelemetry-api`` are used (nothing is recorded until
    the application sets them). Pass providers to use others; call without arguments to go back to
    the global ones. ``record_tool_content=True`` records tool call arguments and results
    (``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``; they may hold personal data, so
    this is off by default); ``None`` reads ``A365_OTEL_RECORD_TOOL_CONTENT``.
    """
    if record_tool_content is not None and not isinstance(record_tool_content, bool):
        raise TypeError("record_tool_content must be a bool or None")
    _state.tracer_provider = tracer_provider
    _state.tracer = None
    _state.record_content = record_tool_content
    from ._telemetry_metrics import set_meter_provider

    set_meter_provider(meter_provider)


def _tracer() -> Any:
    tracer = _state.tracer
    if tracer is not None or _trace is None:
        return tracer
    provider = _state.tracer_provider or _global_tracer_provider()
    if provider is None or isinstance(provider, _trace.ProxyTracerProvider | _trace.NoOpTracerProvider):
        return None  # no provider configured: nothing to record
    tracer = _state.tracer = provider.get_tracer(SCOPE)
    return tracer


# get_tracer_provider() checks os.environ on every call while none is set (~1 µs): the global is read
# directly instead, unless a provider is named in the environment (then the API loads it on first use).
_PROVIDER_FROM_ENV = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ


def _global_tracer_provider() -> Any:
    provider = getattr(_trace, "_TRACER_PROVIDER", _trace)  # _trace: this API version lacks it
    if provider is _trace or _PROVIDER_FROM_ENV:
        return _trace.get_tracer_provider()
    return provider


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

    def record_result(self, result: Any, *, is_error: bool = False) -> None:
        """A tool call's result: ``is_error`` marks a tool error; content only when opted in."""

    def __enter__(self) -> ToolCallSpan:
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        return None


NULL_SPAN = ToolCallSpan()
_NULL = NULL_SPAN


class _Live(ToolCallSpan):
    __slots__ = ("_cm", "_failed", "_histogram", "_instruments", "_metric", "_span", "_start", "_tracer")

    def __init__(
        self,
        tracer: Any,
        name: str,
        kind: Any,
        attributes: dict[str, Any],
        inst: Instruments | None,
        histogram: str | None,
        metric: dict[str, Any],
    ) -> None:
        self._tracer = tracer
        self._instruments = inst
        self._histogram = histogram if inst is not None else None
        self._metric = metric
        self._failed = False
        self._span: Any = None
        self._cm: Any = None
        self._start = 0.0
        if tracer is not None:
            self._cm = tracer.start_as_current_span(
                name,
                kind=kind,
                attributes={k: v for k, v in attributes.items() if v is not None},
                record_exception=False,  # recorded here, scrubbed
                set_status_on_exception=False,
            )

    def __enter__(self) -> _Live:
        if self._cm is not None:
            self._span = self._cm.__enter__()
        if self._histogram is not None:
            self._start = monotonic()
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        try:
            if exc is not None and not self._failed:
                self.fail_with(exc)
            if self._histogram is not None and self._instruments is not None:
                self._instruments.record(self._histogram, monotonic() - self._start, self._metric)
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
            text = scrub(description) if description else None
            self._span.set_status(_Status(_StatusCode.ERROR, text))

    def fail_with(self, exc: BaseException) -> None:
        leaf = exc
        while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
            leaf = leaf.exceptions[0]
        self.fail(type(leaf).__qualname__, describe_error(exc))
        if self._span is not None:
            self._span.add_event(
                "exception",
                {"exception.type": type(leaf).__qualname__, "exception.message": scrub(leaf)},
            )

    def record_result(self, result: Any, *, is_error: bool = False) -> None:
        self.set("a365.tool.outcome", "tool_error" if is_error else "success")
        if is_error:
            self.fail("tool_error")
        if self._span is not None and record_tool_content():
            self.set("gen_ai.tool.call.result", content_text(result))


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
    ``histogram``; the shared null object when neither is configured."""
    tracer = _tracer()
    inst = instruments() if histogram is not None else None
    if tracer is None and inst is None:
        return _NULL
    kind = (_SpanKind.CLIENT if client else _SpanKind.INTERNAL) if tracer is not None else None
    return _Live(tracer, name, kind, dict(attributes or ()), inst, histogram, dict(metric_attributes or ()))


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
    inst = instruments()
    if tracer is None and inst is None:
        return _NULL
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.type": "extension",
        "a365.mcp.server.name": server,
    }
    if tracer is not None and turn is not None:
        attributes.update(identity_attributes(turn))
    if tracer is not None and arguments is not None and record_tool_content():
        attributes["gen_ai.tool.call.arguments"] = content_text(arguments)
    kind = _SpanKind.INTERNAL if tracer is not None else None
    metric = {"a365.mcp.server.name": server, "gen_ai.tool.name": tool}
    return _Live(tracer, f"execute_tool {tool}", kind, attributes, inst, "tool_call", metric)
