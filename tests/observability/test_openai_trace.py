"""The span tree of an OpenAI Agents SDK turn against the emulator: discovery and tokens, the tool call
(with the model's call id) under the agent run's span, and the threat-protection send."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import Agent, Runner, SQLiteSession, Tool
from opentelemetry.trace import SpanKind

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.tooling.extensions.openai import McpToolRegistrationService
from support.platform import AUTH_HANDLER, production_config
from support.scripted_openai import ScriptedModel, assistant_message, function_call, tool_outputs
from support.telemetry import Telemetry, is_child
from support.turns import make_turn_context

pytestmark = pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")


async def test_an_openai_turn_is_one_tree_under_the_hosts_span(
    emulator: Emulator, telemetry: Telemetry
) -> None:
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, conversation_id="conv-9")
    email = function_call("send_email", {"to": "bob@contoso.example", "subject": "Hi", "body": "Lunch?"})

    def answer(items: list[Any], tools: list[Tool]) -> list[Any]:
        (output,) = tool_outputs(items)
        return [assistant_message(f"Done: {json.loads(output)['id']}")]

    template = Agent(name="assistant", model=ScriptedModel([lambda items, tools: [email], answer]))
    tracer = telemetry.recorder.tracer
    session = SQLiteSession("conversation-9")
    try:
        async with McpToolRegistrationService(configuration=production_config(emulator)) as service:
            with tracer.start_as_current_span("turn"):
                async with service.connected_agent(
                    template, emulator.authorization(), AUTH_HANDLER, turn
                ) as agent:
                    with tracer.start_as_current_span("invoke_agent"):
                        result = await Runner.run(agent, "Email Bob", session=session)
                sent = await service.send_chat_history(turn, session)
    finally:
        session.close()
    assert result.final_output.startswith("Done:")
    assert sent.succeeded

    root = telemetry.one("turn")
    discovery = telemetry.one("a365.tooling.discovery")
    assert is_child(discovery, root)

    # Registration lists every server (one tools/list client span each, under the turn), each on a
    # pooled MCP session opened under its listing; the call reuses the one it was listed on.
    listings = telemetry.named("tools/list")
    servers = {s.name for s in emulator.config.servers_for(DEFAULT_AGENT_ID)}
    assert {(s.attributes or {})["a365.mcp.server.name"] for s in listings} == servers
    assert len(listings) == len(servers)
    assert all(is_child(s, root) for s in listings)
    assert all(s.kind is SpanKind.CLIENT for s in listings)
    assert all((s.attributes or {})["server.address"] == "127.0.0.1" for s in listings)
    by_server = {(s.attributes or {})["a365.mcp.server.name"]: s for s in listings}
    sessions = telemetry.named("initialize")
    assert sorted((s.attributes or {})["a365.mcp.server.name"] for s in sessions) == sorted(servers)
    assert all(is_child(s, by_server[(s.attributes or {})["a365.mcp.server.name"]]) for s in sessions)
    assert all(s.kind is SpanKind.CLIENT for s in sessions)
    assert (discovery.attributes or {})["gen_ai.conversation.id"] == "conv-9"
    assert all(is_child(s, discovery) for s in telemetry.named("a365.tooling.token_exchange"))

    tool = telemetry.one("execute_tool send_email")
    assert is_child(tool, telemetry.one("invoke_agent"))
    attributes = dict(tool.attributes or {})
    assert attributes == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "send_email",
        "gen_ai.tool.call.id": email.call_id,
        "gen_ai.tool.type": "extension",
        "a365.mcp.server.name": "mail",
        "a365.tool.outcome": "success",
    }

    send = telemetry.one("a365.tooling.send_chat_history")
    assert is_child(send, root)
    assert (send.attributes or {})["a365.rtp.outcome"] == "delivered"
    (attempt,) = telemetry.named("POST")
    assert is_child(attempt, send)
    assert (attempt.attributes or {})["http.response.status_code"] == 200


async def test_a_meta_resolver_of_the_user_still_runs_and_its_meta_is_sent(
    emulator: Emulator, telemetry: Telemetry
) -> None:
    # The server wraps the SDK's tool_meta_resolver hook to note the call id: the user's own resolver
    # must still be called and its _meta must still reach the MCP server.
    seen: list[tuple[str, str]] = []

    def resolver(context: Any) -> dict[str, Any]:
        seen.append((context.tool_name, context.run_context.tool_call_id))
        return {"trace": "t-1"}

    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    listing = function_call("list_emails", {"folder": "inbox"})
    model = ScriptedModel([lambda items, tools: [listing], lambda items, tools: [assistant_message("ok")]])
    async with (
        McpToolRegistrationService(configuration=production_config(emulator)) as service,
        service.connected_agent(
            Agent(name="assistant", model=model),
            emulator.authorization(),
            AUTH_HANDLER,
            turn,
            server_options={"tool_meta_resolver": resolver},
        ) as agent,
    ):
        await Runner.run(agent, "Inbox")
        await agent.mcp_servers[0].call_tool("list_emails", {"folder": "inbox"})  # not from a run
    assert seen == [("list_emails", listing.call_id)]
    call, direct = [r for r in emulator.requests_for("mcp") if r.jsonrpc_method == "tools/call"]
    assert call.json["params"]["_meta"] == {"trace": "t-1"}
    assert "_meta" not in direct.json["params"]
    from_run, from_test = telemetry.named("execute_tool list_emails")
    assert (from_run.attributes or {})["gen_ai.tool.call.id"] == listing.call_id
    assert "gen_ai.tool.call.id" not in dict(from_test.attributes or {})  # no stale id


async def test_a_tool_error_is_an_error_span(emulator: Emulator, telemetry: Telemetry) -> None:
    # send_email without a recipient: the tool answers a CallToolResult with isError set (returned to the
    # model). Read through the MCP model's public field, whatever mcp names it (tests/release/mcp2_probe.py
    # checks the same on mcp 2.x, where the field is is_error).
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    async with (
        McpToolRegistrationService(configuration=production_config(emulator)) as service,
        service.connected_agent(Agent(name="a"), emulator.authorization(), AUTH_HANDLER, turn) as agent,
    ):
        [mail] = [s for s in agent.mcp_servers if s.name == "mail"]
        result = await mail.call_tool("send_email", {"to": [], "subject": "s", "body": "b"})
        ok = await mail.call_tool("list_emails", {})
    assert result.isError
    assert not ok.isError
    spans = telemetry.named("execute_tool send_email")
    assert [(s.attributes or {})["a365.tool.outcome"] for s in spans] == ["tool_error"]
    assert (spans[0].attributes or {})["error.type"] == "tool_error"
    assert not spans[0].status.is_ok
    assert (telemetry.one("execute_tool list_emails").attributes or {})["a365.tool.outcome"] == "success"
