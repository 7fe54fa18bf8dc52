"""The main job: real agent turns end to end on a local Agent 365 platform emulator.

    pip install uv && uv run --frozen python scripts/demo.py

Starts the emulator in-process (tooling gateway, MCP servers, threat protection and a channel's
connector on 127.0.0.1), discovers the agent's MCP servers through the gateway with per-audience token
exchange and lists their tools over MCP. Then it hosts the example agent (examples/hosted_agent:
``AgentApplication`` + ``CloudAdapter`` on ``/api/messages``) once per orchestrator and sends each turn as
a channel does: an Activity over HTTP (``serviceUrl`` = the emulator's connector). The agent calls real
MCP tools, replies through the connector and sends the turn's chat history to threat protection; the
demo prints the tool calls, the answer, the reply as the channel received it and the RTP record.
Models are scripted and deterministic (real ones when OPENAI_API_KEY is set); no network.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

from agents import set_tracing_disabled
from agents.items import ToolCallItem, ToolCallOutputItem
from aiohttp import web
from demo_models import real_models_enabled
from langchain_core.messages import AIMessage, ToolMessage
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator, channel_activity, post_activity
from agents_a365.emulator.trace_tree import TraceRecorder
from agents_a365.emulator.turns import make_turn_context
from agents_a365.runtime import decode_token_payload
from agents_a365.tooling import (
    MCPServerConfig,
    McpToolServerConfigurationService,
    ToolingConfiguration,
    ToolOptions,
    configure_telemetry,
)

AUTH_HANDLER = "AGENTIC"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "hosted_agent" / "agent.py"


def load_hosted_agent() -> ModuleType:
    """examples/hosted_agent/agent.py, the agent users copy (not a package: loaded from its file)."""
    spec = importlib.util.spec_from_file_location("hosted_agent_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def heading(text: str) -> None:
    print(f"\n== {text} " + "=" * max(0, 70 - len(text)))


def line(text: str, indent: int = 2) -> None:
    print(textwrap.indent(text, " " * indent))


def _tool_text(output: Any) -> str:
    """An MCP tool result as its JSON text, as the LangChain turn prints it (the SDK wraps it in parts)."""
    parts = output if isinstance(output, list) else [output]
    texts = [p.get("text") if isinstance(p, dict) else p for p in parts]
    if all(isinstance(t, str) for t in texts):
        return "".join(texts)
    return json.dumps(output, default=str)


def describe_server(server: MCPServerConfig) -> str:
    token = server.headers.get("Authorization", "").removeprefix("Bearer ")
    audience = decode_token_payload(token)["aud"] if token else "-"
    kind = f"V2, audience {server.audience}" if server.audience else "V1, shared platform token"
    return f"{server.mcp_server_name:<10} {server.url}  ({kind}; token aud={audience})"


async def discover(
    emu: Emulator, service: McpToolServerConfigurationService, turn: TurnContext
) -> list[MCPServerConfig]:
    heading("Discovery: tooling gateway + per-audience token exchange")
    authorization = emu.authorization()
    servers = await service.list_tool_servers(
        turn, authorization, AUTH_HANDLER, options=ToolOptions(orchestrator_name="Demo")
    )
    for server in servers:
        line(describe_server(server))
    line(f"token exchanges: {[e.scopes for e in authorization.exchanges]}")
    heading("Tools listed over MCP (streamable HTTP)")
    tool_lists = await asyncio.gather(*(service.get_mcp_client_tools(s.mcp_server_name, s) for s in servers))
    for server, tools in zip(servers, tool_lists, strict=True):
        line(f"{server.mcp_server_name}: {', '.join(t.name for t in tools)}")
    return servers


class ConsolePrinter:
    """The hosted agent's observer: prints what each turn did, from inside the agent."""

    def __init__(self, emu: Emulator) -> None:
        self.emu = emu

    async def on_answer(self, orchestrator: str, turn: TurnContext, details: dict[str, Any]) -> None:
        if orchestrator == "langchain":
            result = details["result"]
            for message in result["messages"]:
                if isinstance(message, AIMessage) and message.tool_calls:
                    for call in message.tool_calls:
                        line(f"tool call -> {call['name']}({json.dumps(call['args'])})")
                elif isinstance(message, ToolMessage):
                    line(f"tool result <- {message.name}: {message.text[:160]}")
            line(f"final answer: {result['messages'][-1].text}")
            line("the same run as a UI message stream (SSE frames for useChat):")
            for frame in details["frames"]:
                text = frame.strip()
                line(text if len(text) <= 150 else text[:147] + "...", indent=4)
            return
        calls: dict[str, str] = {}
        for item in details["result"].new_items:
            if isinstance(item, ToolCallItem):
                raw: Any = item.raw_item
                calls[str(getattr(raw, "call_id", ""))] = name = getattr(raw, "name", "?")
                line(f"tool call -> {name}({getattr(raw, 'arguments', '')})")
            elif isinstance(item, ToolCallOutputItem):
                raw_output: Any = item.raw_item
                call_id = raw_output.get("call_id") if isinstance(raw_output, dict) else None
                line(f"tool result <- {calls.get(str(call_id), '?')}: {_tool_text(item.output)[:160]}")
        line(f"final answer: {details['result'].final_output}")
        line(f"mail server state: {len(self.emu.servers['mail'].state.sent)} email(s) sent")

    async def on_history_sent(self, turn: TurnContext, result: Any) -> None:
        heading("Chat history to threat protection (sent by the agent after its reply)")
        line(f"send_chat_history -> {result}")
        records = [r for r in self.emu.chat_messages if r.get("messageId") == turn.activity.id]
        if records:
            line("threat protection received:")
            line(json.dumps(records[-1], indent=2, ensure_ascii=False), indent=4)


async def hosted_turn(
    recorder: TraceRecorder,
    hosted: ModuleType,
    emu: Emulator,
    tooling: McpToolServerConfigurationService,
    orchestrator: str,
    channel_id: str,
    text: str,
) -> None:
    """Host the example agent on 127.0.0.1 and send it one message the way a channel does."""
    title = (
        "LangChain (one create_agent graph for every user)"
        if orchestrator == "langchain"
        else "OpenAI Agents SDK (one Agent for every user, its Agent 365 servers as one MCPServer)"
    )
    heading(f"{title}: a channel message over HTTP")
    recorder.clear()
    app, adapter = hosted.create_agent_app(
        orchestrator,
        tooling,
        tool_authorization=emu.authorization(),
        observer=ConsolePrinter(emu),
        tracer=recorder.tracer,
        ui_stream=True,
    )
    runner = web.AppRunner(hosted.create_web_app(app, adapter, anonymous=True))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        activity = channel_activity(
            text, service_url=emu.connector_url, channel_id=channel_id, conversation_id="conversation-1"
        )
        replies_before = len(emu.channel_replies)
        line(f"channel {channel_id} -> POST http://127.0.0.1:{port}/api/messages: {text!r}")
        response = await post_activity(f"http://127.0.0.1:{port}/api/messages", activity, timeout=60)
        line(f"agent answered the POST with HTTP {response.status_code}")
    finally:
        await runner.cleanup()
    heading("What the channel received (the emulator's connector)")
    for reply in emu.channel_replies[replies_before:]:
        shown = reply.get("text") or ""
        line(f"{reply['type']}: {shown}" if shown else reply["type"])
    heading("The turn's trace (OpenTelemetry spans, as an OTLP backend would show them)")
    line(recorder.format())


async def main() -> int:
    logging.basicConfig(level=logging.WARNING, format="  [log %(levelname)s %(name)s] %(message)s")
    set_tracing_disabled(True)  # no trace upload: the demo runs without network
    hosted = load_hosted_agent()
    hosted.quiet_development_warnings()
    recorder = TraceRecorder()  # the SDK's spans, kept in memory for the demo (docs/observability.md)
    configure_telemetry(tracer_provider=recorder.tracer_provider)
    async with Emulator() as emu:
        heading("Agent 365 platform emulator")
        line(f"listening on {emu.base_url} (gateway, MCP servers, threat protection, channel connector)")
        config = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
        async with McpToolServerConfigurationService(config) as service:
            await discover(emu, service, make_turn_context(agentic_app_id=DEFAULT_AGENT_ID))
            heading("Models")
            line(
                "real (OPENAI_API_KEY)"
                if real_models_enabled()
                else "scripted, deterministic (no key, no network)"
            )
            await hosted_turn(
                recorder,
                hosted,
                emu,
                service,
                "langchain",
                "msteams",
                "When am I free tomorrow, and what is my latest email?",
            )
            await hosted_turn(
                recorder,
                hosted,
                emu,
                service,
                "openai",
                "agents:email",
                "Email Ada that the meeting is tomorrow at 10.",
            )
        heading("Done")
        line(f"{len(emu.requests)} requests served by the emulator")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
