"""A LangGraph agent over the emulator's real MCP tools (discovered through the tooling service)."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_mcp_adapters.client import MultiServerMCPClient

from agents_a365.emulator import DEFAULT_AGENT_ID
from agents_a365.tooling import McpToolServerConfigurationService, ToolingConfiguration, ToolOptions
from agents_a365.tooling.extensions.langchain.ui_stream import stream_langgraph_agent
from support.scripted_langchain import ScriptedChatModel, text, tool_call
from support.turns import make_turn_context
from support.ui_client import Validate, assert_clean, summarize


async def test_mcp_tool_success_and_tool_error_reach_the_client(emulator: Any, validate: Validate) -> None:
    cfg = ToolingConfiguration(mcp_platform_endpoint=emulator.base_url, use_tooling_manifest=False)
    async with McpToolServerConfigurationService(cfg) as service:
        servers = await service.list_tool_servers(
            make_turn_context(agentic_app_id=DEFAULT_AGENT_ID),
            emulator.authorization(),
            "agentic",
            options=ToolOptions(orchestrator_name="LangChain"),
        )
    mail = next(s for s in servers if s.mcp_server_name == "mail")
    client = MultiServerMCPClient(
        {"mail": {"transport": "streamable_http", "url": mail.url, "headers": dict(mail.headers)}},
        handle_tool_errors=True,
    )
    tools = [t for t in await client.get_tools() if t.name in ("send_email", "list_emails")]
    model = ScriptedChatModel(
        script=[
            tool_call(
                0, "call_ok", "send_email", '{"to": "ada@contoso.com", ', '"subject": "Hi", "body": "Hello"}'
            )
            + tool_call(1, "call_bad", "send_email", '{"to": "", "subject": "Hi", "body": "x"}'),
            text("One mail sent, one failed."),
        ]
    )
    user = [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Mail Ada"}]}]
    sse = "".join([f async for f in stream_langgraph_agent(create_agent(model, tools=tools), user)])
    message = assert_clean((await validate({"s": sse}))["s"])
    summary = summarize(message)
    ok, bad = summary[1], summary[2]
    assert ok[:4] == (
        "tool",
        "send_email",
        "output-available",
        {"to": "ada@contoso.com", "subject": "Hi", "body": "Hello"},
    )
    assert "sent" in str(ok[4])
    assert bad[:3] == ("tool", "send_email", "output-error")
    assert "Invalid email address" in bad[4]
    assert summary[-1] == ("text", "One mail sent, one failed.")
    assert [e.to for e in emulator.servers["mail"].state.sent] == [["ada@contoso.com"]]
