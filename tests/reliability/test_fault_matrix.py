"""The fault matrix: every platform failure against the emulator, each with its documented behaviour.

Every scenario runs inside the ``guard`` fixture (see ``rel_support.Guard``): it must finish within its
configured timeout plus ``MARGIN``, leave no task, socket or MCP transport behind, and no token may
appear in any log record (root logger, DEBUG), error text/repr/traceback or repr it produced.
"""

from __future__ import annotations

import logging
import socket
from datetime import UTC, datetime
from typing import Any

import pytest
from agents import Agent
from langchain_core.messages import AIMessage, HumanMessage
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator, ExchangeFailure, Fault
from agents_a365.tooling import (
    ChatHistoryMessage,
    ChatHistorySendError,
    McpServerConnectionError,
    McpToolServerConfigurationService,
    TokenAcquisitionError,
    ToolingConfiguration,
    ToolServerDiscoveryError,
)
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService as LangChainService
from agents_a365.tooling.extensions.openai import McpToolRegistrationService as OpenAIService
from support.guard import AUTH_HANDLER, MARGIN, REQUEST_TIMEOUT, Guard, config, elapsed_at_most
from support.turns import make_turn_context

# The OpenAI Agents SDK opens its MCP transport with mcp's deprecated streamablehttp_client.
pytestmark = pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")

WITHIN = REQUEST_TIMEOUT + MARGIN
HISTORY = [ChatHistoryMessage(id="m1", role="user", content="hi", timestamp=datetime(2026, 1, 1, tzinfo=UTC))]


# -- tooling gateway -----------------------------------------------------------------------------

GATEWAY_FAULTS = {
    "500": (Fault(status=500), "answered HTTP 500"),
    "401": (Fault(status=401), "answered HTTP 401"),
    "timeout": (Fault(latency_ms=3000), f"did not answer within {REQUEST_TIMEOUT} s"),
    "connection dropped": (Fault(drop=True), "is unreachable: RemoteProtocolError"),
    "malformed JSON": (Fault(malformed=True), "answered malformed JSON"),
    "object without mcpServers": (Fault(body={"servers": []}), "expected a JSON list or an object"),
    "mcpServers not a list": (Fault(body={"mcpServers": {"mail": {}}}), "expected a JSON list or an object"),
    "mcpServers null": (Fault(body={"mcpServers": None}), "expected a JSON list or an object"),
    "a JSON string": (Fault(body="mail"), "expected a JSON list or an object"),
    "a JSON number": (Fault(body=42), "expected a JSON list or an object"),
}


@pytest.mark.parametrize("case", list(GATEWAY_FAULTS))
async def test_gateway_fault_is_one_typed_error_naming_the_endpoint(
    emu: Emulator, guard: Guard, turn: TurnContext, case: str
) -> None:
    fault, cause = GATEWAY_FAULTS[case]
    emu.faults.set("gateway", fault)
    async with McpToolServerConfigurationService(config(emu)) as svc:
        with elapsed_at_most(WITHIN), guard.raises(ToolServerDiscoveryError) as caught:
            await svc.list_tool_servers(turn, emu.authorization(), AUTH_HANDLER)
    error = caught[0]
    assert isinstance(error, ToolServerDiscoveryError)
    assert error.endpoint == emu.gateway_url(DEFAULT_AGENT_ID)
    assert f"tooling gateway {emu.gateway_url(DEFAULT_AGENT_ID)}" in str(error)
    assert cause in str(error)


async def test_gateway_entries_that_are_not_objects_are_skipped_with_a_warning(
    emu: Emulator, guard: Guard, turn: TurnContext, caplog: pytest.LogCaptureFixture
) -> None:
    entries: list[Any] = [
        "mail",
        42,
        None,
        ["x"],
        {"mcpServerName": 7},
        {"url": "no name"},
        {"mcpServerName": "mail"},
    ]
    emu.faults.set("gateway", Fault(body={"mcpServers": entries}))
    async with McpToolServerConfigurationService(config(emu)) as svc:
        servers = await svc.list_tool_servers(turn, emu.authorization(), AUTH_HANDLER)
    assert [s.mcp_server_name for s in servers] == ["mail"]
    skipped = [r.getMessage() for r in caplog.records if "skipping server entry" in r.getMessage()]
    assert [m.split("skipping server entry ")[1].split(" ")[0].rstrip(":") for m in skipped] == [
        "0",
        "1",
        "2",
        "3",
        "4",
        "5",
    ]


@pytest.mark.parametrize("extension", ["langchain", "openai"])
@pytest.mark.parametrize("case", ["500", "malformed JSON"])
async def test_gateway_fault_reaches_the_extensions_as_the_same_typed_error(
    emu: Emulator, guard: Guard, turn: TurnContext, extension: str, case: str
) -> None:
    emu.faults.set("gateway", GATEWAY_FAULTS[case][0])
    with elapsed_at_most(WITHIN), guard.raises(ToolServerDiscoveryError) as caught:
        await _open_turn(extension, emu, turn)
    assert GATEWAY_FAULTS[case][1] in str(caught[0])


# -- token exchange --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("failure", "cause"),
    [
        (ExchangeFailure.EMPTY_TOKEN, "returned no token"),
        (ExchangeFailure.NONE, "returned no token"),
        (ExchangeFailure.RAISE, "failed: "),
    ],
)
async def test_platform_token_exchange_failure_is_a_typed_error_before_any_request(
    emu: Emulator, guard: Guard, turn: TurnContext, failure: ExchangeFailure, cause: str
) -> None:
    async with McpToolServerConfigurationService(config(emu)) as svc:
        with elapsed_at_most(WITHIN), guard.raises(TokenAcquisitionError) as caught:
            await svc.list_tool_servers(turn, emu.authorization(failure=failure), AUTH_HANDLER)
    error = caught[0]
    assert isinstance(error, TokenAcquisitionError)
    assert error.servers == ("tooling gateway",)
    assert error.scope == svc.configuration.mcp_platform_authentication_scope
    assert cause in str(error)
    assert "tooling gateway" in str(error)
    assert emu.requests == []  # nothing was sent without a token
    guard.tokens.add(emu.platform_token())  # a token exists, so the search below is meaningful


async def test_v2_token_exchange_failure_names_the_server(
    emu: Emulator, guard: Guard, turn: TurnContext
) -> None:
    async with McpToolServerConfigurationService(config(emu)) as svc:
        with guard.raises(TokenAcquisitionError) as caught:
            await svc.list_tool_servers(
                turn,
                emu.authorization(failure=ExchangeFailure.RAISE),
                AUTH_HANDLER,
                auth_token=emu.platform_token(),  # the platform token is given: only calendar exchanges
            )
    error = caught[0]
    assert isinstance(error, TokenAcquisitionError)
    assert error.servers == ("calendar",)
    assert "'api://a365-calendar/Calendars.ReadWrite' (calendar)" in str(error)


# -- MCP servers -----------------------------------------------------------------------------------

MCP_FAULTS = {
    "down (503)": (Fault(status=503), "503"),
    "connection dropped": (Fault(drop=True), ""),
    "slow past the timeout": (Fault(latency_ms=3000), "TimeoutError"),
    "answering 401": (Fault(status=401), "401"),
}


async def _open_turn(extension: str, emu: Emulator, turn: TurnContext, **kwargs: Any) -> set[str]:
    """One turn's registration through an extension; returns the tool names it got."""
    if extension == "langchain":
        async with (
            LangChainService(configuration=config(emu)) as lc,
            lc.mcp_tools(emu.authorization(), AUTH_HANDLER, turn, **kwargs) as toolset,
        ):
            return {t.name for t in toolset.tools()}
    async with (
        OpenAIService(configuration=config(emu)) as oa,
        oa.connected_agent(Agent(name="a"), emu.authorization(), AUTH_HANDLER, turn, **kwargs) as agent,
    ):
        return {t.name for server in agent.mcp_servers for t in await server.list_tools()}


@pytest.mark.parametrize("extension", ["langchain", "openai"])
@pytest.mark.parametrize("case", list(MCP_FAULTS))
async def test_one_mcp_server_failing_is_a_typed_error_naming_it(
    emu: Emulator, guard: Guard, turn: TurnContext, extension: str, case: str
) -> None:
    fault, cause = MCP_FAULTS[case]
    emu.faults.set("mcp:calendar", fault)
    with elapsed_at_most(WITHIN), guard.raises(McpServerConnectionError) as caught:
        await _open_turn(extension, emu, turn)
    error = caught[0]
    assert isinstance(error, McpServerConnectionError)
    assert error.server_name == "calendar"
    assert error.url == emu.server_url("calendar")
    assert "'calendar'" in str(error)
    assert cause in str(error)


@pytest.mark.parametrize("extension", ["langchain", "openai"])
async def test_every_failing_mcp_server_is_named_in_the_one_error(
    emu: Emulator, guard: Guard, turn: TurnContext, extension: str
) -> None:
    emu.faults.set("mcp", Fault(status=503))  # mail and calendar both
    with elapsed_at_most(WITHIN), guard.raises(McpServerConnectionError) as caught:
        await _open_turn(extension, emu, turn)
    error = caught[0]
    assert isinstance(error, McpServerConnectionError)
    other = ({"mail", "calendar"} - {error.server_name}).pop()
    assert f"{error.server_name!r}" in str(error)
    assert f"(also failed: {other!r})" in str(error)


@pytest.mark.parametrize("extension", ["langchain", "openai"])
@pytest.mark.parametrize("case", list(MCP_FAULTS))
async def test_skip_unreachable_keeps_the_other_servers_and_warns_naming_the_failed_one(
    emu: Emulator,
    guard: Guard,
    turn: TurnContext,
    caplog: pytest.LogCaptureFixture,
    extension: str,
    case: str,
) -> None:
    emu.faults.set("mcp:calendar", MCP_FAULTS[case][0])
    with elapsed_at_most(WITHIN):
        tools = await _open_turn(extension, emu, turn, skip_unreachable=True)
    assert tools == {"send_email", "list_emails", "search_emails"}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("skipping MCP server 'calendar'" in w for w in warnings), warnings


async def test_langchain_tool_call_dropped_by_the_server_is_a_tool_error_within_the_timeout(
    emu: Emulator, guard: Guard, turn: TurnContext
) -> None:
    async with LangChainService(configuration=config(emu)) as lc:
        async with lc.mcp_tools(emu.authorization(), AUTH_HANDLER, turn) as toolset:
            tools = {t.name: t for t in toolset.tools()}
            emu.faults.set("mcp:mail", Fault(drop=True, mcp_method="tools/call", times=1))
            # A tool error for the model, at once, naming the lost connection (no raw mcp error, no waiting
            # for the deadline; never sent twice: the server may have run it). The session itself goes on.
            with elapsed_at_most(WITHIN):
                answer = str(await tools["list_emails"].ainvoke({}))
            assert "Server disconnected" in answer
            assert "Bearer" not in answer
            # The other server's session is unaffected within the same turn.
            assert "inbox" not in str(await tools["list_events"].ainvoke({"date": "2026-01-01"}))
        assert [
            r.dropped for r in emu.requests_for("mcp", server="mail") if r.jsonrpc_method == "tools/call"
        ] == [True]
        # The next turn works normally.
        async with lc.mcp_tools(emu.authorization(), AUTH_HANDLER, turn) as toolset:
            tools = {t.name: t for t in toolset.tools()}
            assert "inbox-1" in str(await tools["list_emails"].ainvoke({}))


async def test_openai_tool_call_dropped_by_the_server_fails_within_the_timeout(
    emu: Emulator, guard: Guard, turn: TurnContext
) -> None:
    async with (
        OpenAIService(configuration=config(emu)) as oa,
        oa.connected_agent(Agent(name="a"), emu.authorization(), AUTH_HANDLER, turn) as agent,
    ):
        mail = next(s for s in agent.mcp_servers if s.name == "mail")
        emu.faults.set("mcp:mail", Fault(drop=True, mcp_method="tools/call", times=1))
        # A typed error, at once (as on the LangChain path): the lost connection fails the call only.
        with elapsed_at_most(WITHIN), guard.raises(McpServerConnectionError) as caught:
            await mail.call_tool("list_emails", {})
        assert "Server disconnected" in str(caught[0])
    await guard.assert_clean()


async def test_openai_dropped_tool_call_leaves_no_transport_behind(
    emu: Emulator, guard: Guard, turn: TurnContext
) -> None:
    async with (
        OpenAIService(configuration=config(emu)) as oa,
        oa.connected_agent(Agent(name="a"), emu.authorization(), AUTH_HANDLER, turn) as agent,
    ):
        mail = next(s for s in agent.mcp_servers if s.name == "mail")
        emu.faults.set("mcp:mail", Fault(drop=True, mcp_method="tools/call", times=1))
        with guard.raises(McpServerConnectionError):
            await mail.call_tool("list_emails", {})
    await guard.assert_clean()


# -- threat protection -----------------------------------------------------------------------------


def _send_error(result: Any) -> ChatHistorySendError:
    assert not result.succeeded
    error = result.errors[0].exception
    assert isinstance(error, ChatHistorySendError)
    return error


@pytest.mark.parametrize("status", [500, 502, 503, 504, 429])
async def test_rtp_retryable_status_is_retried_up_to_the_configured_attempts(
    emu: Emulator, guard: Guard, status: int
) -> None:
    emu.faults.set("rtp", Fault(status=status, retry_after="0" if status == 429 else None))
    async with McpToolServerConfigurationService(
        config(emu, chat_history_max_attempts=4, chat_history_timeout=5)
    ) as svc:
        with elapsed_at_most(5 + MARGIN):
            result = await svc.send_chat_history(make_turn_context(), HISTORY)
    error = _send_error(result)
    assert error.status_code == status
    assert error.attempts == 4
    assert len(emu.requests_for("rtp")) == 4  # what the emulator saw
    await guard.assert_clean(check_tokens=False)  # threat protection carries no token


async def test_rtp_429_waits_for_retry_after_and_loses_no_record(emu: Emulator, guard: Guard) -> None:
    emu.faults.set("rtp", Fault(status=429, retry_after="1", times=1))
    async with McpToolServerConfigurationService(config(emu)) as svc:
        result = await svc.send_chat_history(make_turn_context(), HISTORY)
    assert result.succeeded
    first, second = emu.requests_for("rtp")
    assert (first.status, second.status) == (429, 200)
    assert second.timestamp - first.timestamp >= 1.0
    assert len(emu.chat_messages) == 1
    await guard.assert_clean(check_tokens=False)


async def test_rtp_attempts_are_bounded_by_one_overall_deadline(emu: Emulator, guard: Guard) -> None:
    emu.faults.set("rtp", Fault(status=503))
    async with McpToolServerConfigurationService(
        config(emu, chat_history_max_attempts=1000, chat_history_timeout=1.5)
    ) as svc:
        with elapsed_at_most(1.5 + MARGIN):
            result = await svc.send_chat_history(make_turn_context(), HISTORY)
    error = _send_error(result)
    assert 2 <= error.attempts < 1000
    assert len(emu.requests_for("rtp")) == error.attempts
    await guard.assert_clean(check_tokens=False)


async def test_rtp_timeout_is_a_failed_result_within_the_deadline(emu: Emulator, guard: Guard) -> None:
    emu.faults.set("rtp", Fault(latency_ms=3000))
    async with McpToolServerConfigurationService(config(emu, chat_history_timeout=1)) as svc:
        with elapsed_at_most(1 + MARGIN):
            result = await svc.send_chat_history(make_turn_context(), HISTORY)
    error = _send_error(result)
    assert "did not answer within 1" in str(error)
    assert error.attempts == 1
    await guard.assert_clean(check_tokens=False)


async def test_rtp_dropped_connection_is_retried(emu: Emulator, guard: Guard) -> None:
    emu.faults.set("rtp", Fault(drop=True, times=2))
    async with McpToolServerConfigurationService(config(emu, chat_history_max_attempts=3)) as svc:
        result = await svc.send_chat_history(make_turn_context(), HISTORY)
    assert result.succeeded
    assert [r.dropped for r in emu.requests_for("rtp")] == [True, True, False]
    assert len(emu.chat_messages) == 1
    await guard.assert_clean(check_tokens=False)


async def test_rtp_connection_refused_is_retried_then_a_failed_result(guard: Guard) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    configuration = ToolingConfiguration(
        mcp_platform_endpoint=f"http://127.0.0.1:{port}", chat_history_timeout=3, chat_history_max_attempts=3
    )
    async with McpToolServerConfigurationService(configuration) as svc:
        with elapsed_at_most(3 + MARGIN):
            result = await svc.send_chat_history(make_turn_context(), HISTORY)
    error = _send_error(result)
    assert "unreachable: ConnectError" in str(error)
    assert error.attempts == 3
    await guard.assert_clean(check_tokens=False)


@pytest.mark.parametrize("extension", ["langchain", "openai"])
async def test_rtp_failure_reaches_the_extensions_as_a_failed_result(
    emu: Emulator, guard: Guard, extension: str
) -> None:
    emu.faults.set("rtp", Fault(status=500))
    turn = make_turn_context()
    with elapsed_at_most(WITHIN):
        if extension == "langchain":
            async with LangChainService(configuration=config(emu, chat_history_timeout=1)) as lc:
                result = await lc.send_chat_history_from_messages(
                    turn, [HumanMessage("hi"), AIMessage("hello")]
                )
        else:
            async with OpenAIService(configuration=config(emu, chat_history_timeout=1)) as oa:
                result = await oa.send_chat_history_messages(turn, [{"role": "user", "content": "hi"}])
    assert _send_error(result).status_code == 500
    await guard.assert_clean(check_tokens=False)
