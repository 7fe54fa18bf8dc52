"""The tooling's OpenTelemetry instruments (``opentelemetry-api`` only; absent or unconfigured: none).

Durations are histograms in seconds, counts are counters; see docs/observability.md.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

try:
    from opentelemetry import metrics as _metrics
    from opentelemetry.metrics import _internal as _metrics_state
except ImportError:  # the [otel] extra is not installed
    _metrics = None  # type: ignore[assignment]

__all__ = ["Instruments", "instruments", "monotonic", "set_meter_provider"]

monotonic = time.perf_counter
SCOPE = "agents_a365.tooling"
# The API's stand-ins for "no meter provider configured" (the proxy class is private: by name).
_NOOP_PROVIDERS = frozenset({"_ProxyMeterProvider", "NoOpMeterProvider"})

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


class Instruments:
    """One meter's instruments, created once per provider."""

    __slots__ = ("_counters", "_histograms")

    def __init__(self, meter: Any) -> None:
        self._histograms = {
            key: meter.create_histogram(name, unit="s", description=text)
            for key, (name, text) in _HISTOGRAMS.items()
        }
        self._counters = {
            key: meter.create_counter(name, unit=unit, description=text)
            for key, (name, unit, text) in _COUNTERS.items()
        }

    def record(self, histogram: str, seconds: float, attributes: Mapping[str, Any]) -> None:
        self._histograms[histogram].record(seconds, attributes)

    def count(self, counter: str, attributes: Mapping[str, Any], amount: int = 1) -> None:
        self._counters[counter].add(amount, attributes)


class _State:
    provider: Any = None  # given to configure_telemetry; None: the global provider
    seen: Any = None  # the provider the instruments below belong to
    instruments: Instruments | None = None


_state = _State()


def set_meter_provider(provider: Any) -> None:
    _state.provider = provider
    _state.seen = None
    _state.instruments = None


# get_meter_provider() checks os.environ on every call while none is set (~1 µs): the global is read
# directly instead, unless a provider is named in the environment (then the API loads it on first use).
_PROVIDER_FROM_ENV = "OTEL_PYTHON_METER_PROVIDER" in os.environ


def _global_meter_provider() -> Any:
    provider = getattr(_metrics_state, "_METER_PROVIDER", _metrics_state)  # this API version lacks it
    if provider is _metrics_state or _PROVIDER_FROM_ENV:
        return _metrics.get_meter_provider()
    return provider


def instruments() -> Instruments | None:
    """The instruments, or ``None`` while no meter provider is configured (the cheap path)."""
    if _metrics is None:
        return None
    provider = _state.provider or _global_meter_provider()
    if provider is None:
        return None
    if provider is _state.seen:
        return _state.instruments
    if type(provider).__name__ in _NOOP_PROVIDERS:
        return None
    _state.instruments = Instruments(provider.get_meter(SCOPE))
    _state.seen = provider
    return _state.instruments
