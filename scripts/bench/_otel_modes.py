"""Telemetry modes for the registration benchmark (issue 19): is the no-op path free?

- ``absent``: as without the ``[otel]`` extra (the hooks' import of opentelemetry failed: the module
  globals are ``None``, exactly what the ``ImportError`` branch leaves);
- ``noop``: opentelemetry-api importable but no provider configured (the default of every user who
  does not set one up);
- ``on``: an SDK tracer and meter provider recording in memory (what it costs when used).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import agents_a365.tooling._telemetry as _telemetry
from agents_a365.tooling import configure_telemetry

MODES = ("absent", "noop", "on")


@contextmanager
def otel_mode(mode: str) -> Iterator[None]:
    trace_module, metrics_module = _telemetry._trace, _telemetry._metrics
    exporter = InMemorySpanExporter()
    tracer_provider = meter_provider = None
    if mode == "absent":
        _telemetry._trace = None  # type: ignore[assignment]
        _telemetry._metrics = None  # type: ignore[assignment]
    elif mode == "on":
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
        meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    configure_telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider)
    try:
        yield
    finally:
        _telemetry._trace, _telemetry._metrics = trace_module, metrics_module
        configure_telemetry()
        if tracer_provider is not None and meter_provider is not None:
            tracer_provider.shutdown()
            meter_provider.shutdown()
