"""Run by tests/release/test_mcp2_fresh_venv.py inside a venv holding only the OpenAI extension (+ core).

    python mcp2_probe.py <emulator base url> <platform token> <agent id>

Registration (gateway discovery + MCP connect), tool calls over MCP, a warm turn (definitions from the
cache, a call) and a chat history send, through the extension's public API; then the structured results'
checks (mcp2_structured_probe.py, in the same process: one import of the stack); prints a JSON report.
"""

from __future__ import annotations

import asyncio
import importlib.metadata as md
import importlib.util
import json
import sys
from pathlib import Path

from agents import Agent
from mcp2_structured_probe import structured_outcomes  # beside this script (tests/release)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agents_a365.tooling import ToolingConfiguration, configure_telemetry
from agents_a365.tooling.extensions.openai import McpToolRegistrationService

# The real-TurnContext helper ships with the emulator, which this venv must not install (it pins mcp<2):
# load that one self-contained module from the source tree.
_TURNS = (
    Path(__file__).resolve().parents[2] / "packages/agents-a365-emulator/src/agents_a365/emulator/turns.py"
)
_spec = importlib.util.spec_from_file_location("a365_dev_turns", _TURNS)
assert _spec is not None
assert _spec.loader is not None
_turns = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_turns)
make_turn_context = _turns.make_turn_context


async def probe(base_url: str, token: str, agent_id: str) -> dict[str, object]:
    turn = make_turn_context(agentic_app_id=agent_id)
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    configure_telemetry(tracer_provider=provider)
    configuration = ToolingConfiguration(mcp_platform_endpoint=base_url, use_tooling_manifest=False)
    async with McpToolRegistrationService(configuration=configuration) as service:
        async with service.connected_agent(Agent(name="probe"), None, None, turn, auth_token=token) as agent:
            [server] = agent.mcp_servers
            tools = sorted(t.name for t in await server.list_tools())
            result = await server.call_tool("search_emails", {"query": "report"})
            failed = await server.call_tool("send_email", {"to": [], "subject": "s", "body": "b"})
        # The execute_tool spans' outcomes, as the SDK read them from mcp 2's CallToolResult.
        outcomes = {
            s.name: dict(s.attributes or {}).get("a365.tool.outcome")
            for s in spans.get_finished_spans()
            if s.name.startswith("execute_tool")
        }
        # A warm turn: tool definitions from the tooling service's cache, then a call.
        async with service.connected_agent(Agent(name="probe"), None, None, turn, auth_token=token) as agent:
            [warm] = agent.mcp_servers
            warm_tools = sorted(t.name for t in await warm.list_tools())
            warm_result = await warm.call_tool("list_emails", {})
            warm_text = "".join(getattr(c, "text", "") for c in warm_result.content)
        sent = await service.send_chat_history_messages(
            turn,
            [{"role": "user", "content": "Find the report"}, {"role": "assistant", "content": "Found it."}],
        )
    return {
        "mcp": md.version("mcp"),
        "openai-agents": md.version("openai-agents"),
        "server": server.name,
        "tools": tools,
        "tool_error": bool(getattr(result, "is_error", None) or getattr(result, "isError", None)),
        "tool_text": "".join(getattr(c, "text", "") for c in result.content),
        "failed_tool_error": bool(getattr(failed, "is_error", None) or getattr(failed, "isError", None)),
        "tool_outcomes": outcomes,
        "history_sent": sent.succeeded,
        "warm_tools": warm_tools,
        "warm_text": warm_text,
    }


async def main(base_url: str, token: str, agent_id: str) -> dict[str, object]:
    async with asyncio.timeout(90):  # fail, never hang
        report = await probe(base_url, token, agent_id)
        report["structured"] = await structured_outcomes()
        return report


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:4]))))
