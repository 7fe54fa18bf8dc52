"""The hooks themselves: redaction of recorded failures, the tool content opt-in, the MCP listing span,
and the no-op path (no provider configured, or opentelemetry not installed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator, ExchangeFailure
from agents_a365.emulator.trace_tree import TraceRecorder
from agents_a365.tooling import (
    McpToolServerConfigurationService,
    TokenAcquisitionError,
    ToolingConfiguration,
    configure_telemetry,
)
from agents_a365.tooling.extensibility import ToolCallSpan, tool_call_span
from support.jwt import make_jwt
from support.platform import production_config
from support.telemetry import Telemetry, every_text
from support.turns import make_turn_context

TOKEN = make_jwt(appid=DEFAULT_AGENT_ID)
PAYLOAD = TOKEN.split(".")[1]


def test_an_exception_is_recorded_scrubbed(telemetry: Telemetry) -> None:
    with pytest.raises(PermissionError), tool_call_span("mail", "send_email", "c1"):
        raise PermissionError(f"denied, you sent Authorization: Bearer {TOKEN}")
    span = telemetry.one("execute_tool send_email")
    assert not span.status.is_ok
    assert (span.attributes or {})["error.type"] == "PermissionError"
    assert span.status.description == "PermissionError: denied, you sent Authorization: Bearer <redacted>"
    (event,) = span.events
    assert dict(event.attributes or {}) == {
        "exception.type": "PermissionError",
        "exception.message": "denied, you sent Authorization: Bearer <redacted>",
    }
    assert PAYLOAD not in every_text(telemetry.spans)


def test_an_exception_group_is_described_by_its_first_leaf(telemetry: Telemetry) -> None:
    with pytest.raises(ExceptionGroup), tool_call_span("mail", "send_email"):
        raise ExceptionGroup("task group", [ConnectionError(f"reset; token {TOKEN}")])
    span = telemetry.one("execute_tool send_email")
    assert (span.attributes or {})["error.type"] == "ConnectionError"
    assert span.status.description == "ConnectionError: reset; token <redacted-token>"


def test_tool_content_is_recorded_only_when_opted_in(
    telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch
) -> None:
    arguments = {"to": "carol@contoso.example", "note": f"Bearer {TOKEN}"}
    with tool_call_span("mail", "send_email", arguments=arguments) as span:
        span.record_result({"id": "sent-1"})
    off = dict(telemetry.one("execute_tool send_email").attributes or {})
    assert "gen_ai.tool.call.arguments" not in off
    assert "gen_ai.tool.call.result" not in off

    telemetry.recorder.clear()
    monkeypatch.setenv("A365_OTEL_RECORD_TOOL_CONTENT", "true")
    with tool_call_span("mail", "send_email", arguments=arguments) as span:
        span.record_result({"id": "sent-1", "body": "x" * 10_000})
    on = dict(telemetry.one("execute_tool send_email").attributes or {})
    assert json.loads(str(on["gen_ai.tool.call.arguments"])) == {
        "to": "carol@contoso.example",
        "note": "Bearer <redacted>",
    }
    result = str(on["gen_ai.tool.call.result"])
    assert result.startswith('{"id": "sent-1"')
    assert len(result) == 4097

    # An explicit setting wins over the environment.
    telemetry.recorder.clear()
    configure_telemetry(tracer_provider=telemetry.recorder.tracer_provider, record_tool_content=False)
    with tool_call_span("mail", "send_email", arguments=arguments):
        pass
    assert "gen_ai.tool.call.arguments" not in dict(telemetry.one("execute_tool send_email").attributes or {})


def test_configure_telemetry_checks_its_argument() -> None:
    with pytest.raises(TypeError, match="record_tool_content"):
        configure_telemetry(record_tool_content="yes")  # type: ignore[arg-type]


async def test_listing_a_servers_tools_is_a_client_span(emulator: Emulator, telemetry: Telemetry) -> None:
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    async with McpToolServerConfigurationService(production_config(emulator)) as svc:
        servers = await svc.list_tool_servers(turn, emulator.authorization(), "agentic")
        mail = next(s for s in servers if s.mcp_server_name == "mail")
        tools = await svc.get_mcp_client_tools("mail", mail)
    span = telemetry.one("tools/list")
    assert span.kind is trace.SpanKind.CLIENT
    attributes = dict(span.attributes or {})
    assert attributes["mcp.method.name"] == "tools/list"
    assert attributes["a365.mcp.server.name"] == "mail"
    assert attributes["server.address"] == "127.0.0.1"
    assert attributes["a365.mcp.tool_count"] == len(tools)


async def test_without_a_provider_nothing_is_created_or_recorded(emulator: Emulator) -> None:
    # The global providers of opentelemetry-api are the proxies in this test process.
    assert type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider"
    configure_telemetry()
    parent = TraceRecorder()  # the host traces with its own provider; the SDK was not given one
    null = tool_call_span("mail", "send_email", "c1")
    assert type(null) is ToolCallSpan  # the shared null object: no span was created
    assert tool_call_span("calendar", "find_free_time") is null
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    with parent.tracer.start_as_current_span("turn"):
        async with McpToolServerConfigurationService(production_config(emulator)) as svc:
            await svc.list_tool_servers(turn, emulator.authorization(), "agentic")
            await svc.send_chat_history(turn, [])
    assert [s.name for s in parent.spans()] == ["turn"]
    parent.shutdown()


async def test_metrics_alone_record_durations_without_spans(emulator: Emulator) -> None:
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    configure_telemetry(meter_provider=meters)
    try:
        assert type(tool_call_span("mail", "send_email")) is not ToolCallSpan  # times the call
        turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
        async with McpToolServerConfigurationService(production_config(emulator)) as svc:
            await svc.list_tool_servers(turn, emulator.authorization(), "agentic")
            await svc.send_chat_history(turn, [])
        data = reader.get_metrics_data()
        assert data is not None
        names = {m.name for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics}
        assert {
            "a365.tooling.discovery.duration",
            "a365.tooling.token_exchange.duration",
            "a365.tooling.threat_protection.duration",
            "a365.tooling.threat_protection.sends",
            "a365.tooling.cache.misses",
        } <= names
    finally:
        configure_telemetry()
        meters.shutdown()


def test_without_opentelemetry_installed_every_hook_is_a_no_op() -> None:
    script = """
import sys
sys.modules["opentelemetry"] = None  # not importable, as without the [otel] extra
from agents_a365.tooling import configure_telemetry
from agents_a365.tooling.extensibility import ToolCallSpan, tool_call_span
configure_telemetry(tracer_provider=object(), meter_provider=object(), record_tool_content=True)
span = tool_call_span("mail", "send_email", "c1", arguments={"a": 1})
assert type(span) is ToolCallSpan
with span as s:
    s.record_result("ok")
print("no-op")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no-op"


async def test_a_failed_token_exchange_fails_its_span_and_discovery(
    emulator: Emulator, telemetry: Telemetry
) -> None:
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    async with McpToolServerConfigurationService(production_config(emulator)) as svc:
        with pytest.raises(TokenAcquisitionError):
            await svc.list_tool_servers(
                turn, emulator.authorization(failure=ExchangeFailure.RAISE), "agentic"
            )
    exchange = telemetry.one("a365.tooling.token_exchange")
    assert (exchange.attributes or {})["error.type"] == "TokenAcquisitionError"
    assert not exchange.status.is_ok
    discovery = telemetry.one("a365.tooling.discovery")
    assert (discovery.attributes or {})["error.type"] == "TokenAcquisitionError"
    assert "a365.discovery.server_count" not in dict(discovery.attributes or {})
    (point,) = telemetry.points("a365.tooling.discovery.duration")
    assert point[0] == {"a365.discovery.source": "gateway", "error.type": "TokenAcquisitionError"}


async def test_manifest_discovery_is_a_span_with_its_source(
    telemetry: Telemetry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BEARER_TOKEN", raising=False)
    manifest = tmp_path / "ToolingManifest.json"
    manifest.write_text(json.dumps({"mcpServers": [{"mcpServerName": "mail"}, {"mcpServerName": "notes"}]}))
    cfg = ToolingConfiguration(use_tooling_manifest=True, manifest_path=manifest)
    async with McpToolServerConfigurationService(cfg) as svc:
        await svc.list_tool_servers(make_turn_context(), None, None)
    attributes = dict(telemetry.one("a365.tooling.discovery").attributes or {})
    assert (attributes["a365.discovery.source"], attributes["a365.discovery.server_count"]) == ("manifest", 2)
    assert "a365.cache.hit" not in attributes  # the manifest is not cached
    assert telemetry.named("a365.tooling.token_exchange") == []


def test_a_global_provider_set_after_import_is_followed() -> None:
    # The module-level tracer and meter of the public API follow the global providers set after the
    # SDK was imported.
    script = """
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from agents_a365.tooling.extensibility import tool_call_span
exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
tracers = TracerProvider()
tracers.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(tracers)
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
with tool_call_span("mail", "send_email"):
    pass
data = reader.get_metrics_data()
names = [m.name for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics]
print([s.name for s in exporter.get_finished_spans()], names)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['execute_tool send_email'] ['a365.tooling.tool_call.duration']"


def test_a_tool_error_is_read_from_the_mcp_result_unless_given(telemetry: Telemetry) -> None:
    # mcp 1.x names the public field isError; mcp 2.x is_error (isError is only its wire alias there).
    from mcp.types import CallToolResult, TextContent

    failed = CallToolResult(content=[TextContent(type="text", text="no recipient")], isError=True)
    with tool_call_span("mail", "send_email") as span:
        span.record_result(failed)
    with tool_call_span("mail", "list_emails") as span:
        span.record_result(failed, is_error=False)  # the caller's word wins
    outcomes = {s.name: (s.attributes or {})["a365.tool.outcome"] for s in telemetry.spans}
    assert outcomes == {"execute_tool send_email": "tool_error", "execute_tool list_emails": "success"}
