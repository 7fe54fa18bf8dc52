"""Helpers of the telemetry tests: find spans, read metric points, collect every recorded text."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan

from agents_a365.emulator.trace_tree import TraceRecorder
from agents_a365.tooling import configure_telemetry


@dataclass
class Telemetry:
    recorder: TraceRecorder
    reader: InMemoryMetricReader

    @property
    def spans(self) -> tuple[ReadableSpan, ...]:
        return self.recorder.spans()

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        (span,) = self.named(name)
        return span

    def points(self, metric: str) -> list[tuple[dict[str, Any], Any]]:
        """``(attributes, point)`` of every data point of ``metric`` (sum: .value, histogram: .count)."""
        data = self.reader.get_metrics_data()
        found = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for m in scope.metrics:
                    if m.name == metric:
                        found.extend((dict(p.attributes or {}), p) for p in m.data.data_points)
        return found

    def counts(self, metric: str) -> dict[tuple[tuple[str, Any], ...], int]:
        return {tuple(sorted(a.items())): p.value for a, p in self.points(metric)}


def parent_of(child: ReadableSpan, spans: Iterable[ReadableSpan]) -> ReadableSpan | None:
    parent = child.parent
    if parent is None:
        return None
    return next((s for s in spans if s.context is not None and s.context.span_id == parent.span_id), None)


def is_child(child: ReadableSpan, parent: ReadableSpan) -> bool:
    return (
        child.parent is not None
        and parent.context is not None
        and child.parent.span_id == parent.context.span_id
        and child.context is not None
        and child.context.trace_id == parent.context.trace_id
    )


def every_text(spans: Iterable[ReadableSpan]) -> str:
    """Everything a backend would receive of these spans: names, attributes, events, status."""
    parts: list[str] = []
    for span in spans:
        parts.append(span.name)
        parts.append(json.dumps(dict(span.attributes or {}), default=str))
        parts.append(str(span.status.description))
        for event in span.events:
            parts.append(event.name)
            parts.append(json.dumps(dict(event.attributes or {}), default=str))
    return "\n".join(parts)


@contextlib.contextmanager
def recorded_telemetry() -> Iterator[Telemetry]:
    """This SDK's spans and metrics recorded in memory (``configure_telemetry``) for the block."""
    recorder = TraceRecorder()
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    configure_telemetry(tracer_provider=recorder.tracer_provider, meter_provider=meters)
    try:
        yield Telemetry(recorder, reader)
    finally:
        configure_telemetry()
        recorder.shutdown()
        meters.shutdown()
