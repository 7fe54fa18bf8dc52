"""What the OpenTelemetry SDK itself costs a turn (issue 26): spans and measurements from a dummy tracer and
meter, no SDK of ours, shaped like a warm turn of the host benchmark.

    uv run python scripts/bench/otel_cost.py [--turns 2000]

The realistic setup of ``host.py``'s OTel host: ``TracerProvider`` + ``BatchSpanProcessor`` + OTLP/HTTP
exporter to a sink on loopback, ``MeterProvider`` + ``PeriodicExportingMetricReader``. Each turn is one
root span with its children (3 attributes each) and the turn's measurements (2 attributes each). CPU is the
process's (every thread: the batch processor's thread encodes the protobuf and posts it, holding the GIL
the event loop needs); "on the turn's thread" is the same turns with no span processor.
"""

from __future__ import annotations

import argparse
import http.server
import threading
import time
from typing import Any

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

# (label, spans per turn, measurements per turn): counted on the host benchmark's warm turn (OpenAI and
# LangChain alike) with an OTLP collector that decodes what it receives.
SHAPES = [
    ("warm turn before (ours 5 spans / 7 measurements)", 20, 17),
    ("warm turn now (ours 4 / 6)", 19, 16),
    ("hosting-core's part (14 / 10) + the app's span", 15, 10),
    ("this SDK's part now (4 / 6)", 4, 6),
]


class _Sink(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def turns(
    tracer_provider: TracerProvider, meter_provider: MeterProvider, n: int, spans: int, points: int
) -> float:
    """CPU seconds per turn of the whole process, the exports included."""
    tracer = tracer_provider.get_tracer("bench")
    histogram = meter_provider.get_meter("bench").create_histogram("bench.duration", unit="s")
    attributes = {"a.one": "conversation-1", "a.two": "agent-1", "a.three": 3}
    measured = {"server": "notes_1", "tool": "list_notes"}
    start = time.process_time()
    for i in range(n):
        with tracer.start_as_current_span("turn", attributes=attributes):
            for _ in range(spans - 1):
                with tracer.start_as_current_span("step", attributes=attributes):
                    pass
            for _ in range(points):
                histogram.record(0.001, measured)
        if i % 20 == 19:  # as a host does between bursts: the batch thread keeps up, nothing is dropped
            tracer_provider.force_flush()
    tracer_provider.force_flush()
    return (time.process_time() - start) / n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=2000)
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    print(f"OpenTelemetry SDK cost per turn ({args.turns} turns per row; CPU of every thread)")
    for label, spans, points in SHAPES:
        figures = []
        for exporting in (False, True):
            tracer_provider = TracerProvider()
            if exporting:
                tracer_provider.add_span_processor(
                    BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces"))
                )
            reader = PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=f"{url}/v1/metrics"), 5000)
            meter_provider = MeterProvider(metric_readers=[reader])
            turns(tracer_provider, meter_provider, args.turns // 10, spans, points)  # warm-up
            figures.append(turns(tracer_provider, meter_provider, args.turns, spans, points))
            tracer_provider.shutdown()
            meter_provider.shutdown()
        on_thread, total = figures
        print(
            f"  {label}: {spans} spans, {points} measurements: {total * 1e3:.2f} ms "
            f"({on_thread * 1e3:.2f} ms on the turn's thread, {(total - on_thread) * 1e3:.2f} ms exporting)"
        )
    server.shutdown()


if __name__ == "__main__":
    main()
