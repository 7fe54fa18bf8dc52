"""The main job: real agent turns end to end on a local Agent 365 platform emulator.

    pip install uv && uv run --frozen python scripts/demo.py

Starts the emulator in-process (tooling gateway, MCP servers, threat protection on
127.0.0.1), then for each turn: discovers the agent's MCP servers through the gateway with
per-audience token exchange, lists their tools over MCP, and sends the chat history to
threat protection. No network and no API key needed.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from datetime import UTC, datetime
from typing import Any

from microsoft_agents.activity import Activity, ChannelAccount, ConversationAccount, RoleTypes
from microsoft_agents.hosting.core import ChannelAdapter, TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.runtime import decode_token_payload
from agents_a365.tooling import (
    ChatHistoryMessage,
    MCPServerConfig,
    McpToolServerConfigurationService,
    ToolingConfiguration,
    ToolOptions,
)

AUTH_HANDLER = "AGENTIC"


class ConsoleAdapter(ChannelAdapter):  # type: ignore[misc]
    """Prints what the agent sends back to the channel."""

    async def send_activities(self, context: TurnContext, activities: list[Activity]) -> list[Any]:
        for activity in activities:
            line(f"agent -> channel: {activity.text}")
        return []

    async def update_activity(self, context: TurnContext, activity: Activity) -> None:
        raise NotImplementedError

    async def delete_activity(self, context: TurnContext, reference: Any) -> None:
        raise NotImplementedError


def heading(text: str) -> None:
    print(f"\n== {text} " + "=" * max(0, 70 - len(text)))


def line(text: str, indent: int = 2) -> None:
    print(textwrap.indent(text, " " * indent))


def make_turn(text: str, turn_number: int) -> TurnContext:
    activity = Activity(
        type="message",
        id=f"activity-{turn_number}",
        text=text,
        channel_id="msteams:email",
        from_property=ChannelAccount(id="user-1", aad_object_id="user-1", name="Ada"),
        recipient=ChannelAccount(
            id="agent", role=RoleTypes.agentic_identity, agentic_app_id=DEFAULT_AGENT_ID, tenant_id="tenant-1"
        ),
        conversation=ConversationAccount(id="conversation-1", tenant_id="tenant-1"),
    )
    return TurnContext(ConsoleAdapter(), activity)


def describe_server(server: MCPServerConfig) -> str:
    token = server.headers.get("Authorization", "").removeprefix("Bearer ")
    audience = decode_token_payload(token)["aud"] if token else "-"
    kind = f"V2, audience {server.audience}" if server.audience else "V1, shared platform token"
    return f"{server.mcp_server_name:<10} {server.url}  ({kind}; token aud={audience})"


async def discover(emu: Emulator, service: McpToolServerConfigurationService, turn: TurnContext) -> list[MCPServerConfig]:
    heading("Discovery: tooling gateway + per-audience token exchange")
    authorization = emu.authorization()
    servers = await service.list_tool_servers(turn, authorization, AUTH_HANDLER, options=ToolOptions(orchestrator_name="Demo"))
    for server in servers:
        line(describe_server(server))
    line(f"token exchanges: {[e.scopes for e in authorization.exchanges]}")
    heading("Tools listed over MCP (streamable HTTP)")
    tool_lists = await asyncio.gather(*(service.get_mcp_client_tools(s.mcp_server_name, s) for s in servers))
    for server, tools in zip(servers, tool_lists, strict=True):
        line(f"{server.mcp_server_name}: {', '.join(t.name for t in tools)}")
    return servers


async def send_history(service: McpToolServerConfigurationService, turn: TurnContext, history: list[ChatHistoryMessage], emu: Emulator) -> None:
    result = await service.send_chat_history(turn, history, ToolOptions(orchestrator_name="Demo"))
    line(f"send_chat_history -> {result}")
    record = emu.chat_messages[-1]
    line("threat protection received:")
    line(json.dumps(record, indent=2), indent=4)


async def main() -> int:
    async with Emulator() as emu:
        heading("Agent 365 platform emulator")
        line(f"listening on {emu.base_url} (gateway, MCP servers, threat protection)")
        config = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
        async with McpToolServerConfigurationService(config) as service:
            turn = make_turn("Which tools do I have?", 1)
            await discover(emu, service, turn)
            heading("Threat protection: chat history of the turn")
            now = datetime.now(UTC)
            history = [ChatHistoryMessage(id="m-1", role="user", content=turn.activity.text, timestamp=now)]
            await send_history(service, turn, history, emu)
        heading("Done")
        line(f"{len(emu.requests)} requests served by the emulator")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
