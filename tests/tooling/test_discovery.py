"""Production discovery against the emulator's gateway, with per-audience token exchange."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from agents_a365.emulator import (
    CALENDAR_AUDIENCE,
    CALENDAR_SCOPE,
    DEFAULT_AGENT_ID,
    PLATFORM_AUDIENCE,
    PLATFORM_SCOPE,
    Emulator,
    EmulatorConfig,
    ExchangeFailure,
    Fault,
    ServerConfig,
)
from agents_a365.runtime import InvalidTokenError, decode_token_payload, get_user_agent_header
from agents_a365.tooling import (
    McpServerConnectionError,
    McpToolServerConfigurationService,
    TokenAcquisitionError,
    ToolOptions,
    ToolServerConfigurationError,
    ToolServerDiscoveryError,
)
from support.clock import FakeClock
from support.jwt import make_jwt
from support.platform import production_config
from support.turns import make_turn_context
from support.waiting import until

OPTIONS = ToolOptions(orchestrator_name="TestOrchestrator")


def bearer(headers: dict[str, str]) -> dict[str, Any]:
    return decode_token_payload(headers["Authorization"].removeprefix("Bearer "))


async def test_discovers_servers_with_a_token_per_audience(
    emulator: Emulator, service: McpToolServerConfigurationService, turn: Any
) -> None:
    authorization = emulator.authorization()
    servers = await service.list_tool_servers(turn, authorization, "AGENTIC", options=OPTIONS)

    by_name = {s.mcp_server_name: s for s in servers}
    assert set(by_name) == {"mail", "calendar"}
    assert by_name["mail"].url == emulator.server_url("mail")
    assert by_name["calendar"].audience == CALENDAR_AUDIENCE
    assert bearer(by_name["mail"].headers)["aud"] == PLATFORM_AUDIENCE
    assert bearer(by_name["calendar"].headers)["aud"] == CALENDAR_AUDIENCE
    for server in servers:
        assert server.headers["User-Agent"] == get_user_agent_header("TestOrchestrator")
        assert server.headers["x-ms-channel-id"] == "msteams"
        assert server.headers["x-ms-subchannel-id"] == "email"
        assert server.headers["x-ms-agentid"] == DEFAULT_AGENT_ID

    # One exchange per distinct scope, for the turn's user and handler.
    scopes = sorted(tuple(e.scopes or ()) for e in authorization.exchanges)
    assert scopes == sorted([(PLATFORM_SCOPE,), (f"{CALENDAR_AUDIENCE}/{CALENDAR_SCOPE}",)])
    assert {e.auth_handler_id for e in authorization.exchanges} == {"AGENTIC"}


async def test_gateway_request_carries_the_platform_token_and_correlation_id(
    emulator: Emulator, service: McpToolServerConfigurationService, turn: Any
) -> None:
    await service.list_tool_servers(turn, emulator.authorization(), "AGENTIC", options=OPTIONS)
    [request] = emulator.requests_for("gateway")
    assert request.path == f"/agents/v2/{DEFAULT_AGENT_ID}/mcpServers"
    assert request.status == 200
    token = request.headers["authorization"].removeprefix("Bearer ")
    assert decode_token_payload(token)["aud"] == PLATFORM_AUDIENCE
    assert request.headers["x-ms-correlation-id"] == "activity-1"
    assert request.headers["user-agent"] == get_user_agent_header("TestOrchestrator")
    assert request.headers["x-ms-channel-id"] == "msteams"


async def test_given_auth_token_is_used_for_v1_and_only_v2_is_exchanged(
    emulator: Emulator, service: McpToolServerConfigurationService, turn: Any
) -> None:
    authorization = emulator.authorization()
    token = emulator.platform_token()
    servers = await service.list_tool_servers(turn, authorization, "AGENTIC", auth_token=token)
    mail = next(s for s in servers if s.mcp_server_name == "mail")
    assert mail.headers["Authorization"] == f"Bearer {token}"
    assert [e.audience for e in authorization.exchanges] == [CALENDAR_AUDIENCE]


async def test_a_v2_server_never_gets_the_shared_token(
    emulator: Emulator, service: McpToolServerConfigurationService, turn: Any
) -> None:
    token = emulator.platform_token()
    servers = await service.list_tool_servers(turn, emulator.authorization(), "AGENTIC", auth_token=token)
    calendar = next(s for s in servers if s.mcp_server_name == "calendar")
    assert token not in calendar.headers["Authorization"]


async def test_exchanges_for_different_scopes_run_concurrently() -> None:
    config = EmulatorConfig(
        servers=[
            ServerConfig(name="mail", kind="mail"),
            ServerConfig(name="calendar", kind="calendar"),
            ServerConfig(name="notes", kind="notes", audience="api://a365-notes"),
            ServerConfig(
                name="notes2", kind="notes", audience="api://a365-notes"
            ),  # same scope: one exchange
        ]
    )
    async with Emulator(config) as emu:
        inner = emu.authorization()
        in_flight = 0
        peak = 0

        class SlowAuthorization:
            async def exchange_token(
                self, context: Any, scopes: Any = None, auth_handler_id: Any = None
            ) -> Any:
                nonlocal in_flight, peak
                in_flight += 1
                peak = max(peak, in_flight)
                await asyncio.sleep(0.05)
                in_flight -= 1
                return await inner.exchange_token(context, scopes, auth_handler_id)

        async with McpToolServerConfigurationService(production_config(emu)) as svc:
            servers = await svc.list_tool_servers(
                make_turn_context(agentic_app_id=DEFAULT_AGENT_ID),
                SlowAuthorization(),
                "AGENTIC",
                auth_token=emu.platform_token(),
            )
    assert len(servers) == 4
    assert sorted(e.audience for e in inner.exchanges) == ["api://a365-calendar", "api://a365-notes"]
    assert peak == 2


async def test_gateway_accepts_a_bare_list(turn: Any) -> None:
    async with (
        Emulator(EmulatorConfig(gateway_shape="list")) as emu,
        McpToolServerConfigurationService(production_config(emu)) as svc,
    ):
        servers = await svc.list_tool_servers(turn, emu.authorization(), "AGENTIC")
    assert {s.mcp_server_name for s in servers} == {"mail", "calendar"}


async def test_gateway_rejecting_the_token_is_a_clear_error(
    emulator: Emulator, service: McpToolServerConfigurationService, turn: Any
) -> None:
    wrong_audience = emulator.issuer.mint("api://someone-else", app_id=DEFAULT_AGENT_ID)
    with pytest.raises(ToolServerDiscoveryError, match="answered HTTP 401") as caught:
        await service.list_tool_servers(turn, emulator.authorization(), "AGENTIC", auth_token=wrong_audience)
    assert caught.value.status_code == 401
    assert wrong_audience not in str(caught.value)


async def test_an_unusable_token_is_refused_before_any_request(
    emulator: Emulator, service: McpToolServerConfigurationService, turn: Any
) -> None:
    with pytest.raises(InvalidTokenError, match="expired"):
        await service.list_tool_servers(turn, None, None, auth_token=make_jwt(appid="a", expires_in=-60))
    assert emulator.requests == []


@pytest.mark.parametrize(
    "failure", [ExchangeFailure.NONE, ExchangeFailure.EMPTY_TOKEN, ExchangeFailure.RAISE]
)
async def test_failed_exchange_names_the_servers(
    emulator: Emulator, service: McpToolServerConfigurationService, turn: Any, failure: ExchangeFailure
) -> None:
    token = emulator.platform_token()
    with pytest.raises(TokenAcquisitionError, match="calendar") as caught:
        await service.list_tool_servers(
            turn, emulator.authorization(failure=failure), "AGENTIC", auth_token=token
        )
    assert caught.value.servers == ("calendar",)


async def test_v2_servers_without_authorization_fail_clearly(
    emulator: Emulator, service: McpToolServerConfigurationService, turn: Any
) -> None:
    with pytest.raises(TokenAcquisitionError, match=r"calendar.*no authorization"):
        await service.list_tool_servers(turn, None, None, auth_token=emulator.platform_token())


async def test_agent_identity_falls_back_to_the_token_app_id(emulator: Emulator) -> None:
    async with McpToolServerConfigurationService(production_config(emulator)) as svc:
        await svc.list_tool_servers(make_turn_context(), emulator.authorization(), "AGENTIC")
    [request] = emulator.requests_for("gateway")
    assert request.path == f"/agents/v2/{DEFAULT_AGENT_ID}/mcpServers"  # the emulator's tokens carry appid


async def test_warm_turn_reuses_discovery_and_tokens_but_never_across_users(
    emulator: Emulator, service: McpToolServerConfigurationService
) -> None:
    authorization = emulator.authorization()
    alice = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, user_id="alice")
    bob = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, user_id="bob")

    first = await service.list_tool_servers(alice, authorization, "AGENTIC")
    again = await service.list_tool_servers(alice, authorization, "AGENTIC")
    assert authorization.exchange_count == 2
    assert len(emulator.requests_for("gateway")) == 1
    assert [s.headers["Authorization"] for s in first] == [s.headers["Authorization"] for s in again]

    for_bob = await service.list_tool_servers(bob, authorization, "AGENTIC")
    assert authorization.exchange_count == 4
    assert len(emulator.requests_for("gateway")) == 2
    for server in for_bob:
        assert bearer(server.headers)["oid"] == "bob"
    alice_tokens = {s.headers["Authorization"] for s in first}
    assert alice_tokens.isdisjoint(s.headers["Authorization"] for s in for_bob)


async def test_tokens_expire_from_their_exp_minus_skew(emulator: Emulator, turn: Any) -> None:
    authorization = emulator.authorization(expires_in=60)  # inside the 120 s skew: never cached
    async with McpToolServerConfigurationService(production_config(emulator)) as svc:
        await svc.list_tool_servers(turn, authorization, "AGENTIC")
        await svc.list_tool_servers(turn, authorization, "AGENTIC")
    assert authorization.exchange_count == 4


async def test_discovery_ttl_is_configurable(emulator: Emulator, turn: Any) -> None:
    async with McpToolServerConfigurationService(production_config(emulator, discovery_cache_ttl=0)) as svc:
        await svc.list_tool_servers(turn, emulator.authorization(), "AGENTIC")
        await svc.list_tool_servers(turn, emulator.authorization(), "AGENTIC")
    assert len(emulator.requests_for("gateway")) == 2


async def test_an_expired_discovery_serves_while_the_gateway_is_down(
    emulator: Emulator, turn: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Every user's discovery expires at once when a host's users started together: a gateway that is slow
    or down then fails no turn (the refresh runs in the background; a failed one keeps the entry)."""
    caplog.set_level(logging.DEBUG, logger="agents_a365.tooling.service")
    clock = FakeClock()
    authorization = emulator.authorization()
    config = production_config(emulator, discovery_cache_ttl=60)

    def answers() -> int:  # gateway answers stored (logged just before the cache stores them)
        return sum(r.getMessage().startswith("discovered ") for r in caplog.records)

    async with McpToolServerConfigurationService(config, clock=clock) as svc:
        first = [s.mcp_server_name for s in await svc.list_tool_servers(turn, authorization, "AGENTIC")]
        clock.advance(61)
        emulator.faults.set("gateway", Fault(status=503))
        again = await svc.list_tool_servers(turn, authorization, "AGENTIC")  # served at once
        assert [s.mcp_server_name for s in again] == first
        await until(lambda: len(emulator.requests_for("gateway")) == 2)  # the background refresh was tried
        clock.advance(
            60
        )  # two TTLs old, its refreshes failing: still served (stale-if-error), refreshed again
        again = await svc.list_tool_servers(turn, authorization, "AGENTIC")
        assert [s.mcp_server_name for s in again] == first
        await until(lambda: len(emulator.requests_for("gateway")) == 3)
        clock.advance(120)  # four TTLs old: the turn asks the gateway itself, and fails with it
        with pytest.raises(ToolServerDiscoveryError, match="503"):
            await svc.list_tool_servers(turn, authorization, "AGENTIC")
        emulator.faults.clear()
        clock.advance(1)
        assert [
            s.mcp_server_name for s in await svc.list_tool_servers(turn, authorization, "AGENTIC")
        ] == first
        clock.advance(61)  # expired again: one background refresh, which succeeds and re-stores it
        await svc.list_tool_servers(turn, authorization, "AGENTIC")
        await until(lambda: answers() == 3)  # first, after the outage, the refresh
        clock.advance(59)  # fresh from the refresh: no request
        await svc.list_tool_servers(turn, authorization, "AGENTIC")
    assert len(emulator.requests_for("gateway")) == 6


async def test_concurrent_cold_turns_share_one_exchange_and_discovery(
    emulator: Emulator, service: McpToolServerConfigurationService, turn: Any
) -> None:
    authorization = emulator.authorization()
    results = await asyncio.gather(
        *(service.list_tool_servers(turn, authorization, "AGENTIC") for _ in range(10))
    )
    assert all(len(r) == 2 for r in results)
    assert authorization.exchange_count == 2
    assert len(emulator.requests_for("gateway")) == 1


async def test_a_gateway_answer_with_skipped_entries_is_cached_like_a_valid_one(
    emulator: Emulator, turn: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # Entries skipped with a warning leave a valid answer (the other servers): converted once and
    # cached, so a warm turn neither asks the gateway again nor warns again (issue 27).
    entries: list[Any] = [{"mcpServerName": "mail"}, {"mcpServerName": 7}, "junk", {"url": "no name"}]
    emulator.faults.set("gateway", Fault(body={"mcpServers": entries}))
    async with McpToolServerConfigurationService(production_config(emulator)) as svc:
        turns = [await svc.list_tool_servers(turn, emulator.authorization(), "AGENTIC") for _ in range(3)]
    assert [[s.mcp_server_name for s in servers] for servers in turns] == [["mail"]] * 3
    assert len(emulator.requests_for("gateway")) == 1
    assert sum("skipping server entry" in r.getMessage() for r in caplog.records) == 3


async def test_gateway_entry_with_plain_http_to_a_remote_host_is_refused(
    emulator: Emulator, turn: Any
) -> None:
    emulator.faults.set(
        "gateway", Fault(body={"mcpServers": [{"mcpServerName": "evil", "url": "http://example.com/mcp"}]})
    )
    async with McpToolServerConfigurationService(production_config(emulator)) as svc:
        with pytest.raises(ToolServerConfigurationError, match="plain http"):
            await svc.list_tool_servers(turn, emulator.authorization(), "AGENTIC")


@pytest.mark.parametrize("name", ["../admin", "a/b", "..", "evil?x=1", "x" * 200])
async def test_server_names_that_would_escape_the_url_are_refused(
    emulator: Emulator, turn: Any, name: str
) -> None:
    emulator.faults.set("gateway", Fault(body={"mcpServers": [{"mcpServerName": name}]}))
    async with McpToolServerConfigurationService(production_config(emulator)) as svc:
        with pytest.raises(ToolServerConfigurationError, match="invalid MCP server name"):
            await svc.list_tool_servers(turn, emulator.authorization(), "AGENTIC")


async def test_get_mcp_client_tools_lists_tools_over_mcp(
    emulator: Emulator, service: McpToolServerConfigurationService, turn: Any
) -> None:
    servers = await service.list_tool_servers(turn, emulator.authorization(), "AGENTIC")
    tools = {s.mcp_server_name: await service.get_mcp_client_tools(s.mcp_server_name, s) for s in servers}
    assert {"send_email", "list_emails", "search_emails"} <= {t.name for t in tools["mail"]}
    assert {"create_event", "list_events", "find_free_time"} <= {t.name for t in tools["calendar"]}
    mcp_requests = emulator.requests_for("mcp", server="calendar")
    assert mcp_requests
    assert all(r.status != 401 for r in mcp_requests)


async def test_get_mcp_client_tools_names_the_server_that_refuses(
    emulator: Emulator, service: McpToolServerConfigurationService, turn: Any
) -> None:
    servers = await service.list_tool_servers(turn, emulator.authorization(), "AGENTIC")
    calendar = next(s for s in servers if s.mcp_server_name == "calendar")
    wrong = calendar.model_copy(update={"headers": {"Authorization": f"Bearer {emulator.platform_token()}"}})
    with pytest.raises(McpServerConnectionError, match="'calendar'") as caught:
        await service.get_mcp_client_tools("calendar", wrong)
    assert caught.value.server_name == "calendar"
    assert emulator.platform_token() not in str(caught.value)


async def test_no_token_appears_in_logs(
    emulator: Emulator,
    service: McpToolServerConfigurationService,
    turn: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    servers = await service.list_tool_servers(turn, emulator.authorization(), "AGENTIC")
    tokens = [s.headers["Authorization"].removeprefix("Bearer ") for s in servers]
    assert all(token not in caplog.text for token in tokens)
