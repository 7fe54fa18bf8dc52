"""What the OpenTelemetry SDK itself costs a turn (issue 26): spans and measurements shaped like a warm turn of
the host benchmark, no SDK of ours.

The providers of ``host.py``'s OTel host (``_host_server.otel_providers``), exporting to a sink on loopback. CPU is
the whole process's (the batch processor's thread holds the GIL the event loop needs); "on the turn's thread" is
the same turns with no span processor.
"""

from __future__ import annotations

import http.server
import threading
import time
from typing import Any

from _common import start
from _host_server import otel_providers

# (label, spans per turn, measurements per turn): counted on the host benchmark's warm turn (OpenAI and
# LangChain alike) with an OTLP collector that decodes what it receives.
SHAPES = [
    ("a warm turn (ours 4 spans / 6 measurements)", 19, 16),
    ("hosting-core's part (14 / 10) + the app's span", 15, 10),
    ("this SDK's part (4 / 6)", 4, 6),
]


class _Sink(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def turns(tracer_provider: Any, meter_provider: Any, n: int, spans: int, points: int) -> float:
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
    args = start("The OpenTelemetry SDK's own cost per turn", turns=2000)
    print(f"{args.turns} turns per row; CPU of every thread")
    sink = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    for label, spans, points in SHAPES:
        figures = []
        for exporting in (False, True):
            providers = otel_providers(f"http://127.0.0.1:{sink.server_address[1]}", export_spans=exporting)
            turns(*providers, args.turns // 10, spans, points)  # warm-up
            figures.append(turns(*providers, args.turns, spans, points))
            for provider in providers:
                provider.shutdown()
        on_thread, total = figures
        print(
            f"  {label}: {spans} spans, {points} measurements: {total * 1e3:.2f} ms "
            f"({on_thread * 1e3:.2f} ms on the turn's thread, {(total - on_thread) * 1e3:.2f} ms exporting)"
        )
    sink.shutdown()


if __name__ == "__main__":
    main()
