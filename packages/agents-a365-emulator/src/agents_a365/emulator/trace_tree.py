"""Record spans in memory and show one turn's trace as an indented tree (or JSON), for demos and tests.

The recorder owns a ``TracerProvider`` of its own (the global one can be set only once per process);
hand it to the SDK and to the code whose spans should be the parents::

    from agents_a365.emulator.trace_tree import TraceRecorder
    from agents_a365.tooling import configure_telemetry

    recorder = TraceRecorder()
    configure_telemetry(tracer_provider=recorder.tracer_provider)
    with recorder.tracer.start_as_current_span("turn"):
        ...  # discovery, the agent run, send_chat_history
    print(recorder.format())

The emulator does not depend on the SDK packages, so it does not call ``configure_telemetry`` itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode, Tracer

__all__ = ["TraceRecorder", "format_tree", "span_tree"]

# Shown on each line of the text tree (the JSON has every attribute).
_SHOWN = (
    "a365.discovery.source",
    "a365.discovery.server_count",
    "a365.cache.hit",
    "a365.token.scope",
    "a365.mcp.server.name",
    "a365.mcp.tool_count",
    "gen_ai.tool.call.id",
    "a365.tool.outcome",
    "http.request.method",
    "http.response.status_code",
    "http.request.resend_count",
    "a365.rtp.retry_after",
    "a365.rtp.attempts",
    "a365.rtp.outcome",
    "error.type",
)


class TraceRecorder:
    """An in-memory exporter on a tracer provider of its own."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    @property
    def tracer(self) -> Tracer:
        """A tracer for the spans that should be parents (the turn, the agent run)."""
        return self.tracer_provider.get_tracer("agents_a365.emulator.trace_tree")

    def spans(self) -> tuple[ReadableSpan, ...]:
        """Every finished span so far, in the order they ended."""
        return self.exporter.get_finished_spans()

    def clear(self) -> None:
        self.exporter.clear()

    def tree(self, trace_id: int | None = None) -> list[dict[str, Any]]:
        """:func:`span_tree` of the recorded spans (of ``trace_id``; default: the last trace)."""
        return span_tree(self.spans(), trace_id)

    def format(self, trace_id: int | None = None) -> str:
        """:func:`format_tree` of the recorded spans (of ``trace_id``; default: the last trace)."""
        return format_tree(self.tree(trace_id))

    def json(self, trace_id: int | None = None) -> str:
        return json.dumps(self.tree(trace_id), indent=2)

    def shutdown(self) -> None:
        self.tracer_provider.shutdown()


def span_tree(spans: Sequence[ReadableSpan], trace_id: int | None = None) -> list[dict[str, Any]]:
    """The spans of one trace (default: the trace of the last span) as nested dicts: name, kind,
    status, duration in ms, attributes and children, siblings in start order."""
    if not spans:
        return []
    if trace_id is None:
        trace_id = _context(spans[-1]).trace_id
    mine = [s for s in spans if _context(s).trace_id == trace_id]
    ids = {_context(s).span_id for s in mine}
    nodes: dict[int, dict[str, Any]] = {}
    for span in sorted(mine, key=lambda s: s.start_time or 0):
        nodes[_context(span).span_id] = {
            "name": span.name,
            "kind": span.kind.name,
            "status": span.status.status_code.name,
            "status_description": span.status.description,
            "duration_ms": round(((span.end_time or 0) - (span.start_time or 0)) / 1e6, 3),
            "attributes": {k: _jsonable(v) for k, v in (span.attributes or {}).items()},
            "events": [e.name for e in span.events],
            "children": [],
            "_parent": span.parent.span_id if span.parent is not None else None,
            "_start": span.start_time or 0,
        }
    roots: list[dict[str, Any]] = []
    for node in nodes.values():
        parent = node.pop("_parent")
        node.pop("_start")
        if parent in ids:
            nodes[parent]["children"].append(node)
        else:
            roots.append(node)
    return roots


def format_tree(tree: list[dict[str, Any]]) -> str:
    """The tree as indented text: one line per span with its duration, status and main attributes."""
    lines: list[str] = []

    def walk(node: dict[str, Any], prefix: str, last: bool, top: bool) -> None:
        branch = "" if top else ("└─ " if last else "├─ ")
        attributes = node["attributes"]
        shown = [f"{k.removeprefix('a365.')}={attributes[k]}" for k in _SHOWN if k in attributes]
        status = " ERROR" if node["status"] == StatusCode.ERROR.name else ""
        extra = f"  [{', '.join(shown)}]" if shown else ""
        lines.append(f"{prefix}{branch}{node['name']}  {node['duration_ms']:.1f} ms{status}{extra}")
        child_prefix = prefix if top else prefix + ("   " if last else "│  ")
        for i, child in enumerate(node["children"]):
            walk(child, child_prefix, i == len(node["children"]) - 1, False)

    for root in tree:
        walk(root, "", True, True)
    return "\n".join(lines)


def _context(span: ReadableSpan) -> Any:
    context = span.context
    assert context is not None  # a finished SDK span always has one
    return context


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
