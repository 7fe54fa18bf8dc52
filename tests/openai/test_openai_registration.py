"""Registration of the emulator's MCP servers with an ``agents.Agent``, and their lifecycle."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
import pytest_asyncio
from agents import Agent, RunContextWrapper, Runner, function_tool
from agents.mcp import MCPServerStreamableHttp, ToolFilterContext
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import (
    CALENDAR_AUDIENCE,
    DEFAULT_AGENT_ID,
    PLATFORM_AUDIENCE,
    PLATFORM_AUDIENCE_URI,
    Emulator,
    EmulatorAuthorization,
    EmulatorConfig,
    Fault,
    TokenIssuer,
)
from agents_a365.runtime import decode_token_payload
from agents_a365.tooling import McpServerConnectionError, McpToolServerConfigurationService
from agents_a365.tooling.extensions.openai import ORCHESTRATOR_NAME, A365MCPServer, McpToolRegistrationService
from support.leaks import leaked_tasks, other_tasks
from support.platform import AUTH_HANDLER, production_config
from support.scripted_openai import ScriptedModel, assistant_message, function_call, tool_outputs
from support.turns import make_turn_context


@function_tool
def send_email(to: str) -> str:
    """The agent's own send_email (its name clashes with the mail server's)."""
    return to


def _streamable(agent: Agent[object]) -> dict[str, A365MCPServer]:
    servers = {}
    for server in agent.mcp_servers:
        assert isinstance(server, A365MCPServer)
        servers[server.name] = server
    return servers


def _audience(server: A365MCPServer) -> object:
    token = server.config.headers["Authorization"].removeprefix("Bearer ")
    return TokenIssuer.decode_unverified(token)["aud"]


@pytest_asyncio.fixture
async def stateful_emulator() -> AsyncIterator[Emulator]:
    """MCP sessions with ids, so closing one is visible as an HTTP DELETE."""
    async with Emulator(EmulatorConfig(mcp_stateless=False)) as emu:
        yield emu


async def test_one_streamable_http_server_per_discovered_server(
    emulator: Emulator,
    service: McpToolRegistrationService,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
) -> None:
    template = Agent(name="assistant")
    agent = await service.add_tool_servers_to_agent(template, authorization, AUTH_HANDLER, turn)
    try:
        servers = _streamable(agent)
        assert set(servers) == {"mail", "calendar"}
        assert servers["mail"].url == emulator.server_url("mail")
        assert servers["calendar"].url == emulator.server_url("calendar")
        # Per-audience tokens: each server carries its own Authorization.
        assert _audience(servers["mail"]) in {PLATFORM_AUDIENCE, PLATFORM_AUDIENCE_URI}
        assert _audience(servers["calendar"]) == CALENDAR_AUDIENCE
        for server in servers.values():
            headers = server.config.headers
            assert headers["User-Agent"].endswith(f"; {ORCHESTRATOR_NAME})")
            assert headers["x-ms-channel-id"] == "msteams"
            assert headers["x-ms-subchannel-id"] == "email"
            assert "x-ms-agentid" in headers
            # Listed by the core at registration; the server connects on its first call.
            assert not server.is_connected
        assert {t.name for t in await servers["mail"].list_tools()} >= {"send_email", "list_emails"}
        assert {t.name for t in await servers["calendar"].list_tools()} >= {"create_event"}
        assert "eyJ" not in repr(agent)
        assert "eyJ" not in repr(service)
        # The emulator saw exactly these headers (its own Authorization per server).
        for name, server in servers.items():
            seen = emulator.requests_for(f"mcp:{name}")[0].headers
            assert seen["authorization"] == server.config.headers["Authorization"]
            assert ORCHESTRATOR_NAME in seen["user-agent"]
    finally:
        await service.close_tool_servers(agent)


async def test_headers_are_the_tooling_services_complete_headers(
    emulator: Emulator,
    service: McpToolRegistrationService,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
) -> None:
    async with McpToolServerConfigurationService(production_config(emulator)) as tooling:
        # The extension's own options: its orchestrator name and its distribution (User-Agent's version).
        configs = await tooling.list_tool_servers(
            turn, authorization, AUTH_HANDLER, options=service.tool_options(None)
        )
    expected = {c.mcp_server_name: _stable(c.headers) for c in configs}
    async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn) as agent:
        actual = {name: _stable(s.config.headers) for name, s in _streamable(agent).items()}
    assert actual == expected


def _stable(headers: Mapping[str, str]) -> dict[str, object]:
    """The headers with the bearer token as its claims minus the times: the two services exchange their own
    tokens, which differ when the exchanges fall in different seconds."""
    out: dict[str, object] = dict(headers)
    scheme, _, token = out.pop("Authorization").partition(" ")
    claims = {k: v for k, v in decode_token_payload(token).items() if k not in {"iat", "exp", "nbf", "jti"}}
    out["Authorization"] = (scheme, claims)
    return out


async def test_returns_a_clone_and_never_mutates_the_template(
    service: McpToolRegistrationService, authorization: EmulatorAuthorization, turn: TurnContext
) -> None:
    template = Agent(name="assistant", instructions="x")
    template_servers = template.mcp_servers
    async with service.connected_agent(template, authorization, AUTH_HANDLER, turn) as agent:
        assert agent is not template
        assert agent.name == "assistant"
        assert agent.instructions == "x"
        assert len(agent.mcp_servers) == 2
        assert template.mcp_servers is template_servers
        assert template.mcp_servers == []


async def test_concurrent_turns_of_different_users_get_their_own_servers(
    emulator: Emulator, service: McpToolRegistrationService, authorization: EmulatorAuthorization
) -> None:
    template = Agent(name="shared")
    turn_1 = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, user_id="user-1")
    turn_2 = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, user_id="user-2")
    agent_1, agent_2 = await asyncio.gather(
        service.add_tool_servers_to_agent(template, authorization, AUTH_HANDLER, turn_1),
        service.add_tool_servers_to_agent(template, authorization, AUTH_HANDLER, turn_2),
    )
    try:
        assert template.mcp_servers == []
        assert not set(map(id, agent_1.mcp_servers)) & set(map(id, agent_2.mcp_servers))
    finally:
        await service.close_tool_servers(agent_1)
        await service.close_tool_servers(agent_2)


async def test_existing_servers_are_kept_and_a_known_url_is_not_added_twice(
    emulator: Emulator,
    service: McpToolRegistrationService,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
) -> None:
    other = MCPServerStreamableHttp({"url": "http://127.0.0.1:9/elsewhere/"}, name="mine")
    # Same server as discovery's "mail", spelled without the trailing slash.
    own_mail = MCPServerStreamableHttp({"url": emulator.server_url("mail").rstrip("/")}, name="my-mail")
    template = Agent(name="assistant", mcp_servers=[other, own_mail])
    async with service.connected_agent(template, authorization, AUTH_HANDLER, turn) as agent:
        assert agent.mcp_servers[:2] == [other, own_mail]
        assert [s.name for s in agent.mcp_servers] == ["mine", "my-mail", "calendar"]
    assert template.mcp_servers == [other, own_mail]
    # The caller's own servers are theirs: never connected by the service.
    assert other.session is None
    assert own_mail.session is None


async def test_registering_the_returned_agent_again_replaces_its_servers(
    service: McpToolRegistrationService, authorization: EmulatorAuthorization, turn: TurnContext
) -> None:
    # Issue 25: the servers of an earlier registration are replaced (never accumulated, never reused).
    async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn) as first:
        second_cm = service.connected_agent(first, authorization, AUTH_HANDLER, turn)
        async with second_cm as second:
            assert [s.name for s in second.mcp_servers] == [s.name for s in first.mcp_servers]
            assert not set(second.mcp_servers) & set(first.mcp_servers)
            assert second is not first


async def test_servers_are_connected_concurrently(
    emulator: Emulator,
    service: McpToolRegistrationService,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
) -> None:
    # The emulator holds each initialize until both are in flight (a client connecting one server after
    # the other gets each one released alone after the hold timeout): a count, not a timing window.
    emulator.faults.set("mcp", Fault(hold_until_concurrent=2, mcp_method="initialize", times=2))
    async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn) as agent:
        assert len(agent.mcp_servers) == 2
    held = {
        r.server: r.held_together for r in emulator.requests_for("mcp") if r.jsonrpc_method == "initialize"
    }
    assert held == {"mail": 2, "calendar": 2}


async def test_connected_agent_closes_every_session_and_leaves_no_task(
    stateful_emulator: Emulator, turn: TurnContext
) -> None:
    emulator = stateful_emulator
    tasks_before = other_tasks()
    async with McpToolRegistrationService(configuration=production_config(emulator)) as service:
        async with service.connected_agent(
            Agent(name="a"), emulator.authorization(), AUTH_HANDLER, turn
        ) as agent:
            servers = _streamable(agent)
            assert not any(s.is_connected for s in servers.values())  # listed at registration, not connected
            # The first call connects each server.
            await servers["mail"].call_tool("list_emails", {})
            await servers["calendar"].call_tool("list_events", {"date": "2026-01-01"})
            assert all(s.is_connected for s in servers.values())
            assert other_tasks() - tasks_before  # the connection workers are running
        assert not any(s.is_connected for s in servers.values())
        assert not await leaked_tasks(tasks_before)  # the turn's: the pooled sessions stay for the next
        assert [r.server for r in emulator.requests_for("mcp") if r.method == "DELETE"] == []
        calls = len(emulator.requests_for("mcp"))
        with pytest.raises(RuntimeError, match="'mail' is closed"):  # a closed turn's server refuses
            await servers["mail"].call_tool("list_emails", {})
        assert len(emulator.requests_for("mcp")) == calls  # nothing sent
        # A refused call is not a failed one: the cached definitions stay (the next turn lists nothing).
        async with service.connected_agent(Agent(name="a"), emulator.authorization(), AUTH_HANDLER, turn):
            pass
        assert len(emulator.requests_for("mcp")) == calls
    assert not await leaked_tasks(tasks_before, pooled=True)  # the service's end closed them
    deletes = [r.server for r in emulator.requests_for("mcp") if r.method == "DELETE"]
    # Per server one session: the one the core listed on served the call.
    assert sorted(deletes) == ["calendar", "mail"]


async def test_close_tool_servers_closes_what_add_tool_servers_to_agent_connected(
    stateful_emulator: Emulator, turn: TurnContext
) -> None:
    emulator = stateful_emulator
    tasks_before = other_tasks()
    async with McpToolRegistrationService(configuration=production_config(emulator)) as service:
        agent = await service.add_tool_servers_to_agent(
            Agent(name="a"), emulator.authorization(), AUTH_HANDLER, turn
        )
        servers = list(agent.mcp_servers)
        await service.close_tool_servers(agent)
        await service.close_tool_servers(agent)  # idempotent
        await service.close_tool_servers(Agent(name="never registered"))  # ignored
        assert not any(s.is_connected for s in servers)  # type: ignore[attr-defined]
        assert not await leaked_tasks(tasks_before)
    assert len([r for r in emulator.requests_for("mcp") if r.method == "DELETE"]) == 2


async def test_service_aclose_closes_servers_still_open(
    stateful_emulator: Emulator, turn: TurnContext
) -> None:
    emulator = stateful_emulator
    tasks_before = other_tasks()
    service = McpToolRegistrationService(configuration=production_config(emulator))
    agent = await service.add_tool_servers_to_agent(
        Agent(name="a"), emulator.authorization(), AUTH_HANDLER, turn
    )
    await service.aclose()
    assert not any(s.is_connected for s in agent.mcp_servers)  # type: ignore[attr-defined]
    assert not await leaked_tasks(tasks_before)
    assert len([r for r in emulator.requests_for("mcp") if r.method == "DELETE"]) == 2


async def test_a_given_configuration_service_is_used_and_not_closed(
    emulator: Emulator, authorization: EmulatorAuthorization, turn: TurnContext
) -> None:
    async with McpToolServerConfigurationService(production_config(emulator)) as tooling:
        async with McpToolRegistrationService(tooling) as service:
            assert service.configuration_service is tooling
            async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn):
                pass
        # Still usable: the registration service did not close what it did not create.
        assert await tooling.list_tool_servers(turn, authorization, AUTH_HANDLER)
    with pytest.raises(ValueError, match="either"):
        McpToolRegistrationService(tooling, configuration=production_config(emulator))


async def test_unreachable_server_raises_naming_it_and_closes_the_others(
    stateful_emulator: Emulator, turn: TurnContext
) -> None:
    emulator = stateful_emulator
    emulator.faults.set("mcp:calendar", Fault(status=503))
    tasks_before = other_tasks()
    async with McpToolRegistrationService(configuration=production_config(emulator)) as service:
        template = Agent(name="a")
        with pytest.raises(McpServerConnectionError, match="'calendar'") as caught:
            async with service.connected_agent(template, emulator.authorization(), AUTH_HANDLER, turn):
                pytest.fail("must not be entered")
        assert caught.value.server_name == "calendar"
        assert caught.value.url == emulator.server_url("calendar")
        assert "Bearer" not in str(caught.value)
        assert "eyJ" not in str(caught.value)
        assert not await leaked_tasks(tasks_before)
        assert template.mcp_servers == []
    # mail had connected: its pooled session was closed with the service.
    assert {r.server for r in emulator.requests_for("mcp") if r.method == "DELETE"} == {"mail"}


async def test_unreachable_servers_are_all_named(
    emulator: Emulator,
    service: McpToolRegistrationService,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
) -> None:
    emulator.faults.set("mcp", Fault(drop=True))
    tasks_before = other_tasks()
    with pytest.raises(McpServerConnectionError) as caught:
        await service.add_tool_servers_to_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn)
    assert caught.value.server_name in {"mail", "calendar"}
    assert "'mail'" in str(caught.value)
    assert "'calendar'" in str(caught.value)
    assert not await leaked_tasks(tasks_before)


async def test_skip_unreachable_warns_and_keeps_the_others(
    emulator: Emulator,
    service: McpToolRegistrationService,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
    caplog: pytest.LogCaptureFixture,
) -> None:
    emulator.faults.set("mcp:calendar", Fault(status=503))
    tasks_before = other_tasks()
    with caplog.at_level(logging.WARNING, logger="agents_a365.tooling.extensions.openai"):
        async with service.connected_agent(
            Agent(name="a"), authorization, AUTH_HANDLER, turn, skip_unreachable=True
        ) as agent:
            assert [s.name for s in agent.mcp_servers] == ["mail"]
            assert {t.name for t in await agent.mcp_servers[0].list_tools()} >= {"send_email"}
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "calendar" in r.getMessage()]
    assert warnings
    assert all("eyJ" not in r.getMessage() for r in caplog.records)
    assert not await leaked_tasks(tasks_before)


async def test_server_options_reach_the_sdk_servers(
    service: McpToolRegistrationService, authorization: EmulatorAuthorization, turn: TurnContext
) -> None:
    async with service.connected_agent(
        Agent(name="a"),
        authorization,
        AUTH_HANDLER,
        turn,
        server_options={"tool_filter": {"allowed_tool_names": ["list_emails"]}},
    ) as agent:
        mail = _streamable(agent)["mail"]
        assert [t.name for t in await mail.list_tools()] == ["list_emails"]
    with pytest.raises(ValueError, match="params"):
        await service.add_tool_servers_to_agent(
            Agent(name="a"), authorization, AUTH_HANDLER, turn, server_options={"params": {}}
        )


async def test_missing_arguments_raise_value_error(
    service: McpToolRegistrationService, authorization: EmulatorAuthorization, turn: TurnContext
) -> None:
    with pytest.raises(ValueError, match="agent is required"):
        await service.add_tool_servers_to_agent(None, authorization, AUTH_HANDLER, turn)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="turn_context is required"):
        await service.add_tool_servers_to_agent(Agent(name="a"), authorization, AUTH_HANDLER, None)  # type: ignore[arg-type]


async def test_agent_runs_without_servers_when_none_are_listed(turn: TurnContext) -> None:
    async with (
        Emulator(EmulatorConfig(default_servers=[])) as emu,
        McpToolRegistrationService(configuration=production_config(emu)) as service,
    ):
        template = Agent(name="a")
        async with service.connected_agent(template, emu.authorization(), AUTH_HANDLER, turn) as agent:
            assert agent.mcp_servers == []
            assert agent is not template


async def test_cancelling_while_connecting_stays_cancelled_and_leaks_nothing(
    emulator: Emulator,
    service: McpToolRegistrationService,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
) -> None:
    # Warm discovery so the cancellation lands while the servers connect.
    async with service.connected_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn):
        pass
    service.configuration_service.tool_definitions.clear()  # ... but connect again (no lazy servers)
    emulator.faults.set("mcp:calendar", Fault(latency_ms=3000, mcp_method="initialize"))
    tasks_before = other_tasks()
    task = asyncio.create_task(
        service.add_tool_servers_to_agent(Agent(name="a"), authorization, AUTH_HANDLER, turn)
    )
    async with asyncio.timeout(10):  # cancel while calendar's initialize is held by the fault
        while not any(  # noqa: ASYNC110 - the emulator's recordings have no event to wait on
            r.jsonrpc_method == "initialize" for r in emulator.requests_for("mcp", server="calendar")
        ):
            await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not await leaked_tasks(tasks_before, grace=4.0)
    assert "open_servers=0" in repr(service)


async def test_a_name_clashing_with_the_agents_own_tool_is_prefixed_and_calls_the_servers_tool(
    emulator: Emulator,
    service: McpToolRegistrationService,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
) -> None:
    template = Agent(name="a", tools=[send_email])
    async with service.connected_agent(template, authorization, AUTH_HANDLER, turn) as agent:
        names = [t.name for t in await agent.get_all_tools(RunContextWrapper(context=None))]
        assert names.count("send_email") == 1  # the agent's own
        assert "mail_send_email" in names
        mail = _streamable(agent)["mail"]
        result = await mail.call_tool(
            "mail_send_email", {"to": "bob@contoso.example", "subject": "s", "body": "b"}
        )
        assert not result.isError
    assert [r.jsonrpc_method for r in emulator.requests_for("mcp", server="mail")].count("tools/call") == 1
    assert len(emulator.servers["mail"].state.sent) == 1  # the server's own send_email ran


async def test_server_options_of_the_mcp_server_interface(
    emulator: Emulator,
    service: McpToolRegistrationService,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
) -> None:
    seen: list[str] = []

    async def only_list_tools(context: ToolFilterContext, tool: Any) -> bool:
        seen.append(f"{context.server_name}:{tool.name}")
        return str(tool.name).startswith("list_")

    options = {"tool_filter": only_list_tools, "use_structured_content": True, "require_approval": "always"}
    async with service.connected_agent(
        Agent(name="a"), authorization, AUTH_HANDLER, turn, server_options=options
    ) as agent:
        mail = _streamable(agent)["mail"]
        assert mail.use_structured_content is True
        run_context: RunContextWrapper[Any] = RunContextWrapper(context=None)
        assert [t.name for t in await mail.list_tools(run_context, agent)] == ["list_emails"]
        assert "mail:send_email" in seen
        with pytest.raises(McpServerConnectionError, match="Method not found"):  # it has none: asked, typed
            await mail.list_prompts()
    with pytest.raises(ValueError, match="client_session_timeout_seconds"):
        await service.add_tool_servers_to_agent(
            Agent(name="a"),
            authorization,
            AUTH_HANDLER,
            turn,
            server_options={"client_session_timeout_seconds": 1},
        )


async def test_an_async_tool_filter_that_hangs_is_bounded_by_one_deadline_for_the_server(
    emulator: Emulator,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A user's async tool_filter is awaited within request_timeout, once for all the server's tools: a filter
    # that hangs on the first tool spends the whole deadline, so the later calls, which yield to the loop
    # once, are cut off too (each with a deadline of its own, they would have been kept); the listing ends.
    judged: list[str] = []
    never = asyncio.Event()

    async def hangs_on_the_first(context: ToolFilterContext, tool: Any) -> bool:
        judged.append(tool.name)
        if len(judged) == 1:
            await never.wait()
        await asyncio.sleep(0)  # a filter that has to wait, however briefly (an await on a store)
        return True

    config = production_config(emulator, request_timeout=0.5)
    async with (
        McpToolRegistrationService(configuration=config) as service,
        service.connected_agent(
            Agent(name="a"),
            authorization,
            AUTH_HANDLER,
            turn,
            server_options={"tool_filter": hangs_on_the_first},
        ) as agent,
    ):
        mail = _streamable(agent)["mail"]
        with caplog.at_level(logging.WARNING):
            async with asyncio.timeout(5):  # without the deadline, the listing waits for ever
                assert await mail.list_tools(RunContextWrapper(context=None), agent) == []
    names = [spec.name for spec in emulator.servers["mail"].tools()]
    assert len(names) > 1
    assert judged == names  # every tool was offered to the filter, none kept
    assert caplog.text.count("(TimeoutError): left out") == len(names)


async def test_function_tools_are_converted_once_and_run_as_the_servers_tools(
    emulator: Emulator,
    service: McpToolRegistrationService,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
) -> None:
    # function_tools=True: the Agents SDK gets the servers' tools as FunctionTools converted once per turn (with
    # mcp_servers it converts every tool again before each model call); names, strictness and calls unchanged.
    def call(items: list[Any], tools: list[Any]) -> list[Any]:
        return [function_call("mail_send_email", {"to": "bob@contoso.example", "subject": "s", "body": "b"})]

    def answer(items: list[Any], tools: list[Any]) -> list[Any]:
        return [assistant_message(" | ".join(tool_outputs(items)))]

    template = Agent(
        name="a",
        tools=[send_email],
        model=ScriptedModel([call, answer, call, answer]),
        mcp_config={"convert_schemas_to_strict": True},
    )
    async with service.connected_agent(
        template, authorization, AUTH_HANDLER, turn, function_tools=True
    ) as agent:
        assert not [s for s in agent.mcp_servers if isinstance(s, A365MCPServer)]
        assert template.tools == [send_email]  # the template is not changed
        context = RunContextWrapper(context=None)
        first, second = await agent.get_all_tools(context), await agent.get_all_tools(context)
        assert all(a is b for a, b in zip(first, second, strict=True))  # not converted again per model call
        by_name = {t.name: t for t in first}
        assert by_name["send_email"] is send_email
        assert {"mail_send_email", "list_emails", "list_events"} <= set(by_name)
        assert by_name["mail_send_email"].strict_json_schema  # agent.mcp_config applies
        result = await Runner.run(agent, "Email Bob")
        assert "bob@contoso.example" in result.final_output  # the server's answer
    assert len(emulator.servers["mail"].state.sent) == 1  # the server's own send_email ran
    calls = len([r for r in emulator.requests_for("mcp", server="mail") if r.jsonrpc_method == "tools/call"])
    # After the block its tools refuse: the Agents SDK hands the model the error, the server sees no call.
    result = await Runner.run(agent, "Email Bob again")
    assert "error occurred" in result.final_output  # the Agents SDK's message for a failed MCP tool
    assert (
        len([r for r in emulator.requests_for("mcp", server="mail") if r.jsonrpc_method == "tools/call"])
        == calls
    )
