"""Tool registration: discovery, connections, name clashes, per-turn sessions, token validation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.tools import tool
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from agents_a365.emulator import (
    CALENDAR_AUDIENCE,
    DEFAULT_AGENT_ID,
    PLATFORM_AUDIENCE,
    Emulator,
    EmulatorConfig,
    Fault,
)
from agents_a365.runtime import InvalidTokenError, TokenExpiredError, decode_token_payload
from agents_a365.tooling import McpServerConnectionError
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService, McpToolset
from support.leaks import leaked_tasks, our_tasks, pooled_tasks
from support.platform import AUTH_HANDLER, production_config
from support.scripted_langchain import ScriptedChatModel, call, calls
from support.turns import make_turn_context

MAIL_TOOLS = {"send_email", "list_emails", "search_emails"}
CALENDAR_TOOLS = {"create_event", "list_events", "find_free_time"}


@tool
async def send_email(to: str) -> str:
    """The agent's own send_email tool (clashes with the mail server's)."""
    return f"local:{to}"


@tool
async def local_time() -> str:
    """The current time (an agent's own tool)."""
    return "12:00"


def _mcp_posts(emu: Emulator, server: str, method: str) -> list[Any]:
    return [r for r in emu.requests_for("mcp", server=server) if r.jsonrpc_method == method]


async def test_add_tool_servers_to_agent_merges_tools_and_keeps_every_option(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    model = ScriptedChatModel(script=[calls(text="hello")])
    checkpointer = InMemorySaver()
    agent = await service.add_tool_servers_to_agent(
        authorization,
        AUTH_HANDLER,
        turn,
        agent_options={
            "model": model,
            "tools": [local_time],
            "system_prompt": "You are the test agent.",
            "checkpointer": checkpointer,
            "name": "mail-agent",
        },
    )
    assert agent.name == "mail-agent"
    assert agent.checkpointer is checkpointer
    result = await agent.ainvoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "t1"}})
    assert result["messages"][-1].content == "hello"
    # The system prompt reached the model; the tools bound are the agent's own plus both servers'.
    assert model.seen[0][0].content == "You are the test agent."
    assert set(model.bound_parameter_names()) == {"local_time"} | MAIL_TOOLS | CALENDAR_TOOLS
    assert model.bound_tools[0]["function"]["name"] == "local_time"
    assert len(emulator.requests_for("gateway")) == 1


async def test_agent_factory_receives_the_create_agent_options(
    service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    received: dict[str, Any] = {}

    def factory(**options: Any) -> str:
        received.update(options)
        return "built"

    options = {"model": "openai:gpt-4o", "tools": [local_time], "system_prompt": "p", "debug": True}
    built = await service.add_tool_servers_to_agent(
        authorization, AUTH_HANDLER, turn, agent_options=options, agent_factory=factory
    )
    assert built == "built"
    assert {k: v for k, v in received.items() if k != "tools"} == {
        "model": "openai:gpt-4o",
        "system_prompt": "p",
        "debug": True,
    }
    assert received["tools"][0] is local_time
    assert {t.name for t in received["tools"][1:]} == MAIL_TOOLS | CALENDAR_TOOLS
    assert options["tools"] == [local_time]  # the caller's options are not mutated


async def test_mcp_connections_carry_the_tooling_headers_and_each_servers_own_token(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        assert len(toolset) == 6
    for server, audience in (("mail", PLATFORM_AUDIENCE), ("calendar", CALENDAR_AUDIENCE)):
        requests = emulator.requests_for("mcp", server=server)
        assert requests
        for request in requests:
            headers = request.headers
            assert len(headers.get_all("authorization")) == 1
            scheme, token = headers["authorization"].split(" ", 1)
            assert scheme == "Bearer"
            assert decode_token_payload(token)["aud"] == audience
            assert "LangChain" in headers["user-agent"]
            assert headers["x-ms-agentid"] == DEFAULT_AGENT_ID
            assert headers["x-ms-channel-id"] == "msteams"
            assert headers["x-ms-subchannel-id"] == "email"


async def test_existing_tool_name_wins_and_the_mcp_tool_is_prefixed_with_its_server(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        merged = toolset.merge([send_email])
        names = [t.name for t in merged]
        assert names[0] == "send_email"
        assert merged[0] is send_email
        assert "mail_send_email" in names
        assert len(names) == len(set(names))
        renamed = next(t for t in merged if t.name == "mail_send_email")
        await renamed.ainvoke({"to": "carol@contoso.example", "subject": "s", "body": "b"})
    # The renamed tool still calls the server's send_email.
    assert emulator.servers["mail"].state.sent[0].to == ["carol@contoso.example"]


@pytest.mark.parametrize("order", [["notes_1", "notes_2", "mail"], ["notes_2", "mail", "notes_1"]])
async def test_clash_between_servers_is_resolved_the_same_way_whatever_the_discovery_order(
    order: list[str], authorization: Any
) -> None:
    config = EmulatorConfig.with_notes_servers(2)
    config.agents = {DEFAULT_AGENT_ID: order}
    async with Emulator(config) as emu:
        turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
        async with McpToolRegistrationService(configuration=production_config(emu)) as service:
            tools = await service.get_mcp_tools(emu.authorization(), AUTH_HANDLER, turn)
            names = sorted(t.name for t in tools)
            assert names == sorted(
                [
                    "notes_1_add_note",
                    "notes_1_list_notes",
                    "notes_2_add_note",
                    "notes_2_list_notes",
                    *MAIL_TOOLS,
                ]
            )
            add_2 = next(t for t in tools if t.name == "notes_2_add_note")
            await add_2.ainvoke({"text": "for server two"})
        assert emu.servers["notes_2"].state.notes == [{"id": 1, "text": "for server two"}]
        assert emu.servers["notes_1"].state.notes == []


async def test_tools_clashing_across_servers_are_named_at_registration_and_never_copied_per_merge() -> None:
    async with Emulator(EmulatorConfig.with_notes_servers(2)) as emu:
        turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
        service = McpToolRegistrationService(configuration=production_config(emu))
        async with service, service.mcp_tools(emu.authorization(), AUTH_HANDLER, turn) as toolset:
            registered = [t for tools in toolset.tools_by_server.values() for t in tools]
            assert {"notes_1_add_note", "notes_2_add_note"} <= {t.name for t in registered}
            # The agent's tools clash with none: what the agent gets are the registered tools themselves.
            merged = toolset.merge([])
            assert [t.name for t in merged] == [t.name for t in registered]
            assert all(m is r for m, r in zip(merged, registered, strict=True))
            # A clash with the agent's own tool is resolved from the server's name, in a copy.
            own = registered[0].model_copy(update={"name": "list_emails", "metadata": {}})
            renamed = next(t for t in toolset.merge([own]) if t.name == "mail_list_emails")
            assert all(renamed is not r for r in registered)
            add_2 = next(t for t in merged if t.name == "notes_2_add_note")
            await add_2.ainvoke({"text": "named once"})
            await renamed.ainvoke({})
        assert emu.servers["notes_2"].state.notes == [{"id": 1, "text": "named once"}]
        calls = [r.jsonrpc_method for r in emu.requests_for("mcp", server="mail")]
        assert calls.count("tools/call") == 1  # the renamed tool called the server's list_emails


async def test_servers_are_connected_concurrently(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    # The emulator holds each initialize until both are in flight (a client connecting one server after
    # the other gets each one released alone after the hold timeout): a count, not a timing window.
    emulator.faults.set("mcp", Fault(hold_until_concurrent=2, mcp_method="initialize", times=2))
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn):
        pass
    held = [
        r.held_together for name in ("mail", "calendar") for r in _mcp_posts(emulator, name, "initialize")
    ]
    assert held == [2, 2]


async def test_per_turn_scope_keeps_one_session_per_server_and_leaks_nothing(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    before = set(asyncio.all_tasks())
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        by_name = {t.name: t for t in toolset.tools()}
        await by_name["list_emails"].ainvoke({})
        await by_name["search_emails"].ainvoke({"query": "report"})
        await by_name["list_events"].ainvoke({"date": "2025-01-01"})
        assert len(pooled_tasks()) == 2  # the service's sessions: one per server
    assert len(_mcp_posts(emulator, "mail", "initialize")) == 1
    assert len(_mcp_posts(emulator, "calendar", "initialize")) == 1
    assert len(_mcp_posts(emulator, "mail", "tools/call")) == 2
    assert our_tasks() == []
    assert await leaked_tasks(before) == set()
    assert len(pooled_tasks()) == 2  # kept for the user's next turn, not per turn
    # Tools of a closed scope fail instead of silently reconnecting.
    with pytest.raises(RuntimeError, match="after it exits"):
        await by_name["list_emails"].ainvoke({})
    await service.configuration_service.aclose()  # the service's end closes them
    assert await leaked_tasks(before, pooled=True) == set()


async def test_servers_are_not_rediscovered_within_a_turn(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn):
        pass
    await service.get_mcp_tools(authorization, AUTH_HANDLER, turn)
    await service.add_tool_servers_to_agent(
        authorization, AUTH_HANDLER, turn, agent_options={"model": ScriptedChatModel()}
    )
    assert len(emulator.requests_for("gateway")) == 1


async def test_an_unreachable_server_raises_a_typed_error_and_closes_the_others(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    emulator.faults.set("mcp:calendar", Fault(status=503))
    before = set(asyncio.all_tasks())
    with pytest.raises(McpServerConnectionError) as info:
        async with service.mcp_tools(authorization, AUTH_HANDLER, turn):
            pytest.fail("the block must not run")
    assert info.value.server_name == "calendar"
    assert "Bearer" not in str(info.value)
    assert our_tasks() == []
    assert await leaked_tasks(before) == set()
    with pytest.raises(McpServerConnectionError):
        await service.get_mcp_tools(authorization, AUTH_HANDLER, turn)


async def test_cancelling_a_turn_while_connecting_leaks_nothing(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    emulator.faults.set("mcp:calendar", Fault(latency_ms=3000, mcp_method="initialize"))
    before = set(asyncio.all_tasks())

    async def open_scope() -> None:
        async with service.mcp_tools(authorization, AUTH_HANDLER, turn):
            pytest.fail("must be cancelled before the block")

    task = asyncio.create_task(open_scope())
    while not _mcp_posts(emulator, "calendar", "initialize"):  # noqa: ASYNC110 - polling the recorder
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert our_tasks() == []
    assert await leaked_tasks(before) == set()


async def test_the_auth_token_is_validated_before_use(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any
) -> None:
    expired = emulator.platform_token(expires_in=-60)
    with pytest.raises(TokenExpiredError):
        await service.get_mcp_tools(None, None, turn, expired)
    with pytest.raises(InvalidTokenError):
        await service.get_mcp_tools(None, None, turn, "not-a-jwt")
    assert emulator.requests == []  # nothing was sent with a bad token
    # A valid token (with or without the Bearer prefix) is used as the platform token.
    tools = await service.get_mcp_tools(
        emulator.authorization(), AUTH_HANDLER, turn, f"Bearer {emulator.platform_token()}"
    )
    assert {t.name for t in tools} == MAIL_TOOLS | CALENDAR_TOOLS


async def test_turn_context_is_required(service: McpToolRegistrationService, authorization: Any) -> None:
    with pytest.raises(ValueError, match="turn_context is required"):
        await service.get_mcp_tools(authorization, AUTH_HANDLER, None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="turn_context is required"):
        async with service.mcp_tools(authorization, AUTH_HANDLER, None):  # type: ignore[arg-type]
            pass


async def test_toolset_create_agent_uses_the_open_sessions(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    model = ScriptedChatModel(
        script=[calls(call("list_emails")), calls(call("list_emails")), calls(text="done")]
    )
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        assert isinstance(toolset, McpToolset)
        agent = toolset.create_agent({"model": model, "tools": [local_time]})
        await agent.ainvoke({"messages": [HumanMessage("twice")]})
    assert len(_mcp_posts(emulator, "mail", "tools/call")) == 2
    assert len(_mcp_posts(emulator, "mail", "initialize")) == 1


async def test_mcp_tools_share_one_input_model_and_still_run_in_a_graph(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    # LangGraph's ToolNode asks every tool for its input schema when it builds a graph; for a JSON-schema tool
    # LangChain would build a pydantic model per tool name (~1.5 ms each: seconds for thousands of tools).
    model = ScriptedChatModel(
        script=[calls(call("send_email", to="a@b.c"), call("list_emails")), calls(text="done")]
    )
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        tools = toolset.tools([send_email])  # the clash renames a copy: still the shared model
        assert len(tools) >= len(MAIL_TOOLS | CALENDAR_TOOLS)
        assert len({tool.get_input_schema() for tool in tools}) == 1
        agent = toolset.create_agent({"model": model, "tools": [send_email]})
        result = await agent.ainvoke({"messages": [HumanMessage("mail")]})
    assert "local:a@b.c" in [m.content for m in result["messages"]]  # the agent's own tool won the name
    assert len(_mcp_posts(emulator, "mail", "tools/call")) == 1  # list_emails, over MCP


async def test_an_agents_own_tools_of_every_shape_keep_their_names(
    service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    def find_free_time() -> str:
        return "never"

    own = [{"type": "function", "function": {"name": "send_email"}}, {"name": "list_emails"}, find_free_time]
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        names = {tool.name for tool in toolset.tools(own)}
    assert {"mail_send_email", "mail_list_emails", "calendar_find_free_time"} <= names
    assert not names & {"send_email", "list_emails", "find_free_time"}


def test_service_rejects_both_a_configuration_service_and_a_configuration() -> None:
    from agents_a365.tooling import McpToolServerConfigurationService, ToolingConfiguration

    with pytest.raises(ValueError, match="not both"):
        McpToolRegistrationService(McpToolServerConfigurationService(), configuration=ToolingConfiguration())


async def test_service_closes_only_what_it_owns(emulator: Emulator) -> None:
    from agents_a365.tooling import McpToolServerConfigurationService

    async with McpToolServerConfigurationService(production_config(emulator)) as shared:
        async with McpToolRegistrationService(shared) as service:
            assert service.configuration_service is shared
            _ = shared.http_client
        assert shared._client is not None  # still usable by its owner
