"""The main job: real agent turns end to end on a local Agent 365 platform emulator.

    pip install uv && uv run --frozen python scripts/demo.py

Starts the emulator in-process (tooling gateway, MCP servers, threat protection on
127.0.0.1), discovers the agent's MCP servers through the gateway with per-audience token
exchange, lists their tools over MCP, then runs one LangChain turn and one OpenAI Agents SDK
turn that call real MCP tools, and sends each turn's chat history to threat protection.
Models are scripted and deterministic (real ones when OPENAI_API_KEY is set); no network.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import textwrap
from typing import Any

from agents import Agent, Runner, SQLiteSession, set_tracing_disabled
from agents.items import ToolCallItem, ToolCallOutputItem
from demo_models import langchain_model, openai_model, real_models_enabled
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from microsoft_agents.activity import Activity
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.emulator.turns import RecordingAdapter, make_turn_context
from agents_a365.runtime import decode_token_payload
from agents_a365.tooling import (
    MCPServerConfig,
    McpToolServerConfigurationService,
    ToolingConfiguration,
    ToolOptions,
)
from agents_a365.tooling.extensions import langchain as lc
from agents_a365.tooling.extensions import openai as oa
from agents_a365.tooling.extensions.langchain.ui_stream import stream_langgraph

AUTH_HANDLER = "AGENTIC"


class ConsoleAdapter(RecordingAdapter):
    """Prints what the agent sends back to the channel."""

    async def send_activities(self, context: Any, activities: list[Activity]) -> list[Any]:
        for activity in activities:
            line(f"agent -> channel: {activity.text}")
        return await super().send_activities(context, activities)


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


def make_turn(text: str, turn_number: int) -> TurnContext:
    # The emulator's helper: a real hosting-core Activity in a real TurnContext (replies to the console).
    return make_turn_context(
        text=text,
        activity_id=f"activity-{turn_number}",
        conversation_id="conversation-1",
        agentic_app_id=DEFAULT_AGENT_ID,
        adapter=ConsoleAdapter(),
    )


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


async def langchain_turn(
    emu: Emulator, tooling: McpToolServerConfigurationService, turn: TurnContext
) -> None:
    heading("LangChain turn (create_agent + MCP tools, one session per server)")
    line(f"user: {turn.activity.text}")
    service = lc.McpToolRegistrationService(tooling)
    config: Any = {"configurable": {"thread_id": turn.activity.conversation.id}}
    async with service.mcp_tools(emu.authorization(), AUTH_HANDLER, turn) as toolset:
        line(f"tools registered: {', '.join(t.name for t in toolset.tools())}")
        agent = toolset.create_agent(
            {
                "model": langchain_model(),
                "system_prompt": "You schedule meetings.",
                "checkpointer": InMemorySaver(),
                "context_schema": lc.TurnIdentity,
            }
        )
        result = await agent.ainvoke(
            {"messages": [HumanMessage(turn.activity.text)]}, config, context=lc.turn_identity(turn)
        )
        for message in result["messages"]:
            if isinstance(message, AIMessage) and message.tool_calls:
                for call in message.tool_calls:
                    line(f"tool call -> {call['name']}({json.dumps(call['args'])})")
            elif isinstance(message, ToolMessage):
                line(f"tool result <- {message.name}: {message.text[:160]}")
        answer = result["messages"][-1].text
        line(f"final answer: {answer}")
        await show_ui_stream(agent, turn)
    await turn.send_activity(answer)
    heading("LangChain: chat history to threat protection (level 1: graph + thread_id)")
    await send_and_show(emu, service.send_chat_history(turn, agent, config))


async def show_ui_stream(agent: Any, turn: TurnContext) -> None:
    """The same question streamed as a Vercel AI SDK UI message stream (what `useChat` receives)."""
    stream = agent.astream(
        {"messages": [HumanMessage(turn.activity.text)]},
        {"configurable": {"thread_id": "ui-stream"}},
        context=lc.turn_identity(turn),
        stream_mode=["messages", "updates"],
    )
    line("as a UI message stream (SSE frames for useChat):")
    async for frame in stream_langgraph(stream, message_id="msg-demo"):
        text = frame.strip()
        line(text if len(text) <= 150 else text[:147] + "...", indent=4)


async def openai_turn(emu: Emulator, tooling: McpToolServerConfigurationService, turn: TurnContext) -> None:
    heading("OpenAI Agents SDK turn (MCPServerStreamableHttp per server)")
    line(f"user: {turn.activity.text}")
    service = oa.McpToolRegistrationService(tooling)
    template = Agent(name="Mailer", instructions="You send emails for the user.", model=openai_model())
    session = SQLiteSession(turn.activity.conversation.id)
    try:
        async with service.connected_agent(template, emu.authorization(), AUTH_HANDLER, turn) as agent:
            names = [s.name for s in agent.mcp_servers]
            tools = await asyncio.gather(*(s.list_tools() for s in agent.mcp_servers))
            line(f"servers registered: {', '.join(names)} ({sum(len(t) for t in tools)} tools)")
            result = await Runner.run(agent, turn.activity.text, session=session)
        calls: dict[str, str] = {}
        for item in result.new_items:
            if isinstance(item, ToolCallItem):
                raw: Any = item.raw_item
                calls[str(getattr(raw, "call_id", ""))] = name = getattr(raw, "name", "?")
                line(f"tool call -> {name}({getattr(raw, 'arguments', '')})")
            elif isinstance(item, ToolCallOutputItem):
                raw_output: Any = item.raw_item
                call_id = raw_output.get("call_id") if isinstance(raw_output, dict) else None
                line(f"tool result <- {calls.get(str(call_id), '?')}: {_tool_text(item.output)[:160]}")
        line(f"final answer: {result.final_output}")
        line(f"mail server state: {len(emu.servers['mail'].state.sent)} email(s) sent")
        await turn.send_activity(str(result.final_output))
        heading("OpenAI: chat history to threat protection (from the SQLiteSession)")
        await send_and_show(emu, service.send_chat_history(turn, session))
    finally:
        session.close()


async def send_and_show(emu: Emulator, sending: Any) -> None:
    before = len(emu.chat_messages)
    result = await sending
    line(f"send_chat_history -> {result}")
    if len(emu.chat_messages) > before:
        record = emu.chat_messages[-1]
        line("threat protection received:")
        line(json.dumps(record, indent=2, ensure_ascii=False), indent=4)


async def main() -> int:
    logging.basicConfig(level=logging.WARNING, format="  [log %(levelname)s %(name)s] %(message)s")
    set_tracing_disabled(True)  # no trace upload: the demo runs without network
    async with Emulator() as emu:
        heading("Agent 365 platform emulator")
        line(f"listening on {emu.base_url} (gateway, MCP servers, threat protection)")
        config = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
        async with McpToolServerConfigurationService(config) as service:
            turn = make_turn("Which tools do I have?", 1)
            await discover(emu, service, turn)
            heading("Models")
            line(
                "real (OPENAI_API_KEY)"
                if real_models_enabled()
                else "scripted, deterministic (no key, no network)"
            )
            await langchain_turn(
                emu, service, make_turn("When am I free tomorrow, and what is my latest email?", 2)
            )
            await openai_turn(emu, service, make_turn("Email Ada that the meeting is tomorrow at 10.", 3))
        heading("Done")
        line(f"{len(emu.requests)} requests served by the emulator")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
