"""The span tree of a LangChain turn against the emulator: discovery, token exchanges, each tool call
(a child of the agent run's span), the threat-protection send and its attempt."""

from __future__ import annotations

import json
from types import SimpleNamespace

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from opentelemetry.trace import SpanKind

from agents_a365.emulator import (
    CALENDAR_AUDIENCE,
    CALENDAR_SCOPE,
    DEFAULT_AGENT_ID,
    PLATFORM_SCOPE,
    Emulator,
)
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService, TurnIdentity, turn_identity
from support.platform import AUTH_HANDLER, production_config
from support.scripted_langchain import ScriptedChatModel, call, calls, tool_results
from support.telemetry import Telemetry, is_child
from support.turns import make_turn_context


def _answer(messages: list[BaseMessage]) -> AIMessage:
    result = json.loads(tool_results(messages)[0].text)
    return AIMessage(content=f"Sent as {result['id']}")


async def test_a_langchain_turn_is_one_tree_under_the_hosts_span(
    emulator: Emulator, telemetry: Telemetry
) -> None:
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, conversation_id="conv-7")
    email = call("send_email", to="carol@contoso.example", subject="Hi", body="Lunch?")
    model = ScriptedChatModel(script=[calls(email), _answer])
    tracer = telemetry.recorder.tracer
    async with McpToolRegistrationService(configuration=production_config(emulator)) as service:
        with tracer.start_as_current_span("turn") as root_span:
            async with service.mcp_tools(emulator.authorization(), AUTH_HANDLER, turn) as toolset:
                agent = toolset.create_agent({"model": model})
                with tracer.start_as_current_span("invoke_agent"):
                    result = await agent.ainvoke({"messages": [HumanMessage("Email Carol")]})
            # What a graph's aget_state gives (a StateSnapshot): its values' messages are sent.
            snapshot = SimpleNamespace(values={"messages": result["messages"]})
            sent = await service.send_chat_history_from_state(turn, snapshot)
    assert sent.succeeded
    assert result["messages"][-1].content.startswith("Sent as")

    root = telemetry.one("turn")
    assert root.context is not None
    assert root_span.get_span_context().span_id == root.context.span_id

    discovery = telemetry.one("a365.tooling.discovery")
    assert is_child(discovery, root)

    # One MCP session opened per server (pooled: the call reuses it), each a client span under that
    # server's listing, itself under the turn.
    sessions = telemetry.named("initialize")
    servers = {s.name for s in emulator.config.servers_for(DEFAULT_AGENT_ID)}
    assert {(s.attributes or {})["a365.mcp.server.name"] for s in sessions} == servers
    assert len(sessions) == len(servers)
    listings = {(s.attributes or {})["a365.mcp.server.name"]: s for s in telemetry.named("tools/list")}
    assert all(is_child(listings[(s.attributes or {})["a365.mcp.server.name"]], root) for s in sessions)
    assert all(is_child(s, listings[(s.attributes or {})["a365.mcp.server.name"]]) for s in sessions)
    assert all(s.kind is SpanKind.CLIENT for s in sessions)
    assert all((s.attributes or {})["server.address"] == "127.0.0.1" for s in sessions)
    attributes = dict(discovery.attributes or {})
    assert attributes["a365.discovery.source"] == "gateway"
    assert attributes["a365.discovery.server_count"] == len(emulator.config.servers_for(DEFAULT_AGENT_ID))
    assert attributes["a365.cache.hit"] is False
    assert attributes["gen_ai.conversation.id"] == "conv-7"
    assert attributes["gen_ai.agent.id"] == DEFAULT_AGENT_ID
    assert attributes["microsoft.channel.name"] == "msteams"
    assert attributes["microsoft.tenant.id"]

    # One exchange for the platform scope, one per V2 scope (the calendar), both under discovery.
    exchanges = telemetry.named("a365.tooling.token_exchange")
    assert {(s.attributes or {})["a365.token.scope"] for s in exchanges} == {
        PLATFORM_SCOPE,
        f"{CALENDAR_AUDIENCE}/{CALENDAR_SCOPE}",
    }
    assert all(is_child(s, discovery) for s in exchanges)
    assert all((s.attributes or {})["a365.cache.hit"] is False for s in exchanges)

    # The tool call: GenAI execute_tool under the agent run, with the model's call id.
    tool = telemetry.one("execute_tool send_email")
    assert is_child(tool, telemetry.one("invoke_agent"))
    assert dict(tool.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "send_email",
        "gen_ai.tool.call.id": email["id"],
        "gen_ai.tool.type": "extension",
        "a365.mcp.server.name": "mail",
        "a365.tool.outcome": "success",
    }
    assert tool.status.is_ok

    # The threat-protection send: one span, one HTTP attempt under it.
    send = telemetry.one("a365.tooling.send_chat_history")
    assert is_child(send, root)
    assert (send.attributes or {})["a365.rtp.outcome"] == "delivered"
    assert (send.attributes or {})["a365.rtp.attempts"] == 1
    (attempt,) = telemetry.named("POST")
    assert is_child(attempt, send)
    attempt_attributes = dict(attempt.attributes or {})
    assert attempt_attributes["http.request.method"] == "POST"
    assert attempt_attributes["server.address"] == "127.0.0.1"
    assert attempt_attributes["http.response.status_code"] == 200
    assert "http.request.resend_count" not in attempt_attributes


async def test_a_warm_turn_records_cache_hits(emulator: Emulator, telemetry: Telemetry) -> None:
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    async with McpToolRegistrationService(configuration=production_config(emulator)) as service:
        for _ in range(2):
            async with service.mcp_tools(emulator.authorization(), AUTH_HANDLER, turn):
                pass
    first, second = telemetry.named("a365.tooling.discovery")
    assert [(first.attributes or {})["a365.cache.hit"], (second.attributes or {})["a365.cache.hit"]] == [
        False,
        True,
    ]
    hits = telemetry.counts("a365.tooling.cache.hits")
    misses = telemetry.counts("a365.tooling.cache.misses")
    assert hits[(("a365.cache.name", "discovery"),)] == 1
    assert misses[(("a365.cache.name", "discovery"),)] == 1
    assert hits[(("a365.cache.name", "token"),)] == 2  # the platform and the calendar token
    assert misses[(("a365.cache.name", "token"),)] == 2
    durations = {
        a["a365.discovery.source"]: p.count for a, p in telemetry.points("a365.tooling.discovery.duration")
    }
    assert durations == {"gateway": 2}
    # A token answered from the cache is counted, not traced or timed: the warm turn has no exchange span.
    exchanges = telemetry.named("a365.tooling.token_exchange")
    assert len(exchanges) == 2
    assert all(is_child(s, first) for s in exchanges)
    assert [p.count for _, p in telemetry.points("a365.tooling.token_exchange.duration")] == [2]


async def test_a_cached_token_does_not_mark_an_uncached_discovery_as_a_hit(
    emulator: Emulator, telemetry: Telemetry
) -> None:
    # No discovery cache, tokens cached: the second turn's calendar token (exchanged after the gateway
    # lookup) is a hit under a discovery span that missed, and says nothing on it.
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    config = production_config(emulator, discovery_cache_ttl=0)
    async with McpToolRegistrationService(configuration=config) as service:
        for _ in range(2):
            async with service.mcp_tools(emulator.authorization(), AUTH_HANDLER, turn):
                pass
    discoveries = telemetry.named("a365.tooling.discovery")
    assert [(s.attributes or {})["a365.cache.hit"] for s in discoveries] == [False, False]
    assert telemetry.counts("a365.tooling.cache.hits")[(("a365.cache.name", "token"),)] == 2


async def test_a_tool_error_is_an_error_span(emulator: Emulator, telemetry: Telemetry) -> None:
    # send_email without a recipient: the tool answers isError (returned to the model).
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    model = ScriptedChatModel(
        script=[calls(call("send_email", to=[], subject="s", body="b")), AIMessage(content="sorry")]
    )
    async with (
        McpToolRegistrationService(configuration=production_config(emulator)) as service,
        service.mcp_tools(emulator.authorization(), AUTH_HANDLER, turn) as toolset,
    ):
        agent = toolset.create_agent({"model": model})
        result = await agent.ainvoke({"messages": [HumanMessage("Email nobody")]})
    assert result["messages"][-1].content == "sorry"
    span = telemetry.one("execute_tool send_email")
    attributes = dict(span.attributes or {})
    assert (attributes["a365.tool.outcome"], attributes["error.type"]) == ("tool_error", "tool_error")
    assert not span.status.is_ok
    points = {
        (a["a365.mcp.server.name"], a["gen_ai.tool.name"], a.get("error.type")): p.count
        for a, p in telemetry.points("a365.tooling.tool_call.duration")
    }
    assert points == {("mail", "send_email", "tool_error"): 1}


async def test_the_turns_identity_from_the_runtime_context_is_on_the_tool_span(
    emulator: Emulator, telemetry: Telemetry
) -> None:
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, conversation_id="conv-ctx")
    model = ScriptedChatModel(script=[calls(call("list_emails", folder="inbox")), AIMessage(content="ok")])
    async with (
        McpToolRegistrationService(configuration=production_config(emulator)) as service,
        service.mcp_tools(emulator.authorization(), AUTH_HANDLER, turn) as toolset,
    ):
        agent = toolset.create_agent({"model": model, "context_schema": TurnIdentity})
        await agent.ainvoke({"messages": [HumanMessage("Inbox")]}, context=turn_identity(turn))
    attributes = dict(telemetry.one("execute_tool list_emails").attributes or {})
    assert attributes["gen_ai.conversation.id"] == "conv-ctx"
    assert attributes["gen_ai.agent.id"] == DEFAULT_AGENT_ID
    assert attributes["microsoft.channel.name"] == "msteams"


async def test_pooled_seed_form_tools_open_their_session_under_the_listing_and_calls_reuse_it(
    emulator: Emulator, telemetry: Telemetry
) -> None:
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    async with McpToolRegistrationService(configuration=production_config(emulator)) as service:
        tools = {t.name: t for t in await service.get_mcp_tools(emulator.authorization(), AUTH_HANDLER, turn)}
        telemetry.recorder.clear()  # the listing sessions of registration are not what this test is about
        for _ in range(2):
            await tools["list_emails"].ainvoke({"folder": "inbox"})
    first, second = sorted(telemetry.named("execute_tool list_emails"), key=lambda s: s.start_time or 0)
    assert telemetry.named("initialize") == []  # both calls on the session the registration listed on
    assert first.status.is_ok
    assert second.status.is_ok
