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

import os
import time
from typing import Any

try:
    from opentelemetry import metrics as _metrics
    from opentelemetry import trace as _trace
except ImportError:  # the [otel] extra is not installed: every hook is a no-op
    _trace = _metrics = None  # type: ignore[assignment]

__all__ = ["RECORD_TOOL_CONTENT_ENV", "configure_telemetry", "instruments", "record_tool_content"]

RECORD_TOOL_CONTENT_ENV = "A365_OTEL_RECORD_TOOL_CONTENT"
SCOPE = "agents_a365.tooling"
monotonic = time.perf_counter

_HISTOGRAMS = {
    "discovery": ("a365.tooling.discovery.duration", "MCP server discovery (manifest or gateway)"),
    "token_exchange": ("a365.tooling.token_exchange.duration", "One token exchange (a cache miss)"),
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
    "mcp_breaker": (
        "a365.tooling.mcp.breaker",
        "{event}",
        "MCP circuit breaker: outages, requests failed at once",
    ),
    "cache_store_errors": (
        "a365.tooling.cache.store.errors",
        "{operation}",
        "Failed second-level operations",
    ),
}


Instruments = dict[str, Any]  # one meter's histograms (seconds; ``.record``) and counters (``.add``) by key


def _instruments(meter: Any) -> Instruments:
    made = {k: meter.create_histogram(n, unit="s", description=d) for k, (n, d) in _HISTOGRAMS.items()}
    return made | {k: meter.create_counter(n, unit=u, description=d) for k, (n, u, d) in _COUNTERS.items()}


_TRACER = _trace.get_tracer(SCOPE) if _trace is not None else None
_INSTRUMENTS = _instruments(_metrics.get_meter(SCOPE)) if _metrics is not None else None


class _State:
    # Of the providers given to configure_telemetry, else the module-level ones once a global provider is
    # seen (the API sets one once per process); None: nothing records.
    tracer: Any = None
    instruments: Instruments | None = None
    next_check = 0.0  # while either is None, the global providers are looked at again from then on
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
    tracers, meters = _trace.get_tracer_provider(), _metrics.get_meter_provider()
    if not isinstance(tracers, _trace.ProxyTracerProvider | _trace.NoOpTracerProvider):
        _state.tracer = _state.tracer or _TRACER
    # The API offers no public "is a provider set?" for metrics: its stand-in is known by its class name.
    # Should that change, metrics are still right; they are only no longer skipped while nothing records.
    if not isinstance(meters, _metrics.NoOpMeterProvider) and type(meters).__name__ != "_ProxyMeterProvider":
        _state.instruments = _state.instruments or _INSTRUMENTS


def _tracer() -> Any:
    if _state.tracer is None:
        _check_globals()
    return _state.tracer


def instruments() -> Instruments | None:
    """The instruments, or ``None`` while no meter provider records (the cheap path)."""
    if _state.instruments is None:
        _check_globals()
    return _state.instruments


def record_tool_content() -> bool:
    if _state.record_content is not None:
        return _state.record_content
    return os.environ.get(RECORD_TOOL_CONTENT_ENV, "").strip().lower() in {"1", "true", "yes", "on"}
