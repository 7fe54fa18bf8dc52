"""The emulator's trace-tree printer: one trace as indented text and as JSON."""

from __future__ import annotations

import json
import re

from opentelemetry.trace import Status, StatusCode

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.emulator.trace_tree import TraceRecorder, format_tree, span_tree
from agents_a365.tooling import McpToolServerConfigurationService, configure_telemetry
from support.platform import production_config
from support.turns import make_turn_context


def _without_durations(text: str) -> str:
    return re.sub(r"\d+\.\d ms", "N ms", text)


def test_a_trace_prints_as_an_indented_tree() -> None:
    recorder = TraceRecorder()
    tracer = recorder.tracer
    with tracer.start_as_current_span("other turn"):
        pass
    with tracer.start_as_current_span("turn"):
        with tracer.start_as_current_span("a365.tooling.discovery") as span:
            span.set_attribute("a365.discovery.source", "gateway")
            with tracer.start_as_current_span("a365.tooling.token_exchange") as token:
                token.set_attribute("a365.cache.hit", False)
        with tracer.start_as_current_span("execute_tool send_email") as tool:
            tool.set_attribute("a365.mcp.server.name", "mail")
        with tracer.start_as_current_span("a365.tooling.send_chat_history") as send:
            with tracer.start_as_current_span("POST") as attempt:
                attempt.set_attribute("http.response.status_code", 503)
                attempt.set_status(Status(StatusCode.ERROR, "503"))
            with tracer.start_as_current_span("POST") as attempt:
                attempt.set_attribute("http.response.status_code", 200)
            send.set_attribute("a365.rtp.attempts", 2)
    assert _without_durations(recorder.format()) == "\n".join(
        [
            "turn  N ms",
            "├─ a365.tooling.discovery  N ms  [discovery.source=gateway]",
            "│  └─ a365.tooling.token_exchange  N ms  [cache.hit=False]",
            "├─ execute_tool send_email  N ms  [mcp.server.name=mail]",
            "└─ a365.tooling.send_chat_history  N ms  [rtp.attempts=2]",
            "   ├─ POST  N ms ERROR  [http.response.status_code=503]",
            "   └─ POST  N ms  [http.response.status_code=200]",
        ]
    )
    (root,) = json.loads(recorder.json())
    assert root["name"] == "turn"
    assert [c["name"] for c in root["children"]] == [
        "a365.tooling.discovery",
        "execute_tool send_email",
        "a365.tooling.send_chat_history",
    ]
    failed = root["children"][2]["children"][0]
    assert (failed["status"], failed["status_description"]) == ("ERROR", "503")
    # Another trace by its id; nothing recorded: no tree.
    first = recorder.spans()[0]
    assert first.context is not None
    assert [n["name"] for n in span_tree(recorder.spans(), first.context.trace_id)] == ["other turn"]
    assert format_tree(span_tree([])) == ""
    recorder.shutdown()


async def test_a_real_turn_prints_the_sdks_spans(emulator: Emulator) -> None:
    recorder = TraceRecorder()
    configure_telemetry(tracer_provider=recorder.tracer_provider)
    try:
        turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
        with recorder.tracer.start_as_current_span("turn"):
            async with McpToolServerConfigurationService(production_config(emulator)) as svc:
                await svc.list_tool_servers(turn, emulator.authorization(), "agentic")
                await svc.send_chat_history(turn, [])
    finally:
        configure_telemetry()
        recorder.shutdown()
    lines = _without_durations(recorder.format()).splitlines()
    assert lines[0] == "turn  N ms"
    assert lines[1].startswith("├─ a365.tooling.discovery  N ms  [discovery.source=gateway, ")
    assert lines[-2].startswith("└─ a365.tooling.send_chat_history  N ms  [rtp.attempts=1")
    assert lines[-1] == "   └─ POST  N ms  [http.request.method=POST, http.response.status_code=200]"
