"""Warm turns (issue 9, target 2): a second turn of the same user and agent registers its tools
from the tool-definition cache, with no gateway request, no token exchange and no MCP request.

Both registration modes: per call (``get_mcp_tools`` / ``add_tool_servers_to_agent``) and per turn
(``mcp_tools``). Both call through the tooling service's pooled sessions: the session the cold turn
listed on serves the warm turn's calls, until idle or the service's ``aclose``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import BaseTool

from agents_a365.emulator import CALENDAR_AUDIENCE, DEFAULT_AGENT_ID, PLATFORM_AUDIENCE, Emulator, Fault
from agents_a365.emulator.authorization import EmulatorAuthorization
from agents_a365.emulator.recording import RecordedRequest
from agents_a365.runtime import decode_token_payload
from agents_a365.tooling import ToolDefinitionCache, ToolingConfiguration
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService
from support.leaks import leaked_tasks, our_tasks, pooled_tasks
from support.platform import AUTH_HANDLER
from support.scripted_langchain import ScriptedChatModel, call, calls
from support.turns import make_turn_context
from support.waiting import until

MODES = ["per_call", "per_turn"]
AUDIENCES = {"mail": PLATFORM_AUDIENCE, "calendar": CALENDAR_AUDIENCE}


def _config(emu: Emulator, **overrides: Any) -> ToolingConfiguration:
    return ToolingConfiguration(
        mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False, allow_insecure_http=True, **overrides
    )


def _turn(user: str = "user-1", activity: str = "activity-1") -> Any:
    return make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, user_id=user, activity_id=activity)


@contextlib.asynccontextmanager
async def _tools(
    service: McpToolRegistrationService, mode: str, authorization: Any, turn: Any
) -> AsyncIterator[dict[str, BaseTool]]:
    """One turn's tools by name, in either registration mode (per turn: inside the block)."""
    if mode == "per_call":
        yield {t.name: t for t in await service.get_mcp_tools(authorization, AUTH_HANDLER, turn)}
        return
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        yield {t.name: t for t in toolset.tools()}


def _since(emu: Emulator, mark: int) -> list[RecordedRequest]:
    return [r for r in emu.requests if r.index > mark]


def _mark(emu: Emulator) -> int:
    return max((r.index for r in emu.requests), default=0)


def _methods(requests: list[RecordedRequest], server: str) -> list[str | None]:
    return [
        r.jsonrpc_method for r in requests if r.route == "mcp" and r.server == server and r.method == "POST"
    ]


def _token_claims(request: RecordedRequest) -> dict[str, Any]:
    values = request.headers.get_all("authorization")
    assert len(values) == 1, values
    scheme, token = values[0].split(" ", 1)
    assert scheme == "Bearer"
    return decode_token_payload(token)


def _assert_users_tokens(requests: list[RecordedRequest], user: str) -> None:
    """Every request went out with ``user``'s token, for that server's audience."""
    assert requests
    for request in requests:
        claims = _token_claims(request)
        assert claims["oid"] == user, (request.route, request.server, request.jsonrpc_method)
        if request.route == "mcp":
            assert claims["aud"] == AUDIENCES[request.server or ""]


def _shape(tools: dict[str, BaseTool]) -> list[tuple[Any, ...]]:
    return sorted((t.name, t.description, t.args, t.metadata, t.response_format) for t in tools.values())


async def _close_pooled(service: McpToolRegistrationService, expected: list[str]) -> None:
    """The sessions stay open for the next turn (pooled) until the service closes them."""
    assert sorted(t.get_name() for t in pooled_tasks()) == expected
    await service.aclose()


@pytest.mark.parametrize("mode", MODES)
async def test_warm_turn_makes_no_gateway_exchange_or_mcp_request_and_its_tools_work(
    emulator: Emulator, service: McpToolRegistrationService, authorization: EmulatorAuthorization, mode: str
) -> None:
    async with _tools(service, mode, authorization, _turn()) as cold:
        cold_shape = _shape(cold)
    assert len(_methods(emulator.requests, "mail")) >= 2  # the cold turn listed (initialize, tools/list)
    mark, exchanges = _mark(emulator), authorization.exchange_count
    before = set(asyncio.all_tasks())

    async with _tools(service, mode, authorization, _turn(activity="activity-2")) as warm:
        assert _since(emulator, mark) == []  # no gateway, no MCP request at registration
        assert authorization.exchange_count == exchanges  # no token exchange
        assert our_tasks() == []  # nothing of the turn's own
        assert _shape(warm) == cold_shape  # the same tools as listed (names, schemas, metadata)
        assert "inbox-1" in str(await warm["list_emails"].ainvoke({}))
        assert "report" in str(await warm["search_emails"].ainvoke({"query": "report"}))
        assert _methods(_since(emulator, mark), "calendar") == []  # not called: never contacted

    # The pooled session the cold turn listed on: the calls only (no initialize, no listing: the
    # results are checked against the cached definitions).
    assert _methods(_since(emulator, mark), "mail") == ["tools/call", "tools/call"]
    _assert_users_tokens(_since(emulator, mark), "user-1")
    assert authorization.exchange_count == exchanges
    await _close_pooled(service, ["a365-mcp-pooled-calendar", "a365-mcp-pooled-mail"])
    assert await leaked_tasks(before, pooled=True) == set()


async def test_warm_add_tool_servers_to_agent_calls_tools_without_listing(
    emulator: Emulator, service: McpToolRegistrationService, authorization: EmulatorAuthorization
) -> None:
    options = {"model": ScriptedChatModel(script=[calls(text="hi")]), "tools": []}
    await service.add_tool_servers_to_agent(authorization, AUTH_HANDLER, _turn(), agent_options=options)
    mark = _mark(emulator)
    model = ScriptedChatModel(script=[calls(call("list_events", date="2026-01-01")), calls(text="done")])
    agent = await service.add_tool_servers_to_agent(
        authorization, AUTH_HANDLER, _turn(activity="activity-2"), agent_options={"model": model, "tools": []}
    )
    assert _since(emulator, mark) == []
    result = await agent.ainvoke({"messages": [HumanMessage("my day?")]})
    assert result["messages"][-1].content == "done"
    # On the pooled session the first registration listed on: the call only.
    assert _methods(_since(emulator, mark), "calendar") == ["tools/call"]
    assert _methods(_since(emulator, mark), "mail") == []
    _assert_users_tokens(_since(emulator, mark), "user-1")


async def test_concurrent_first_calls_of_a_warm_turn_share_one_lazy_session(
    emulator: Emulator, service: McpToolRegistrationService, authorization: EmulatorAuthorization
) -> None:
    async with service.mcp_tools(authorization, AUTH_HANDLER, _turn()):
        pass
    service.configuration.set_overrides(mcp_session_idle_timeout=0)  # no session kept: opened by a call
    mark = _mark(emulator)
    before = set(asyncio.all_tasks())
    emulator.faults.set("mcp:mail", Fault(latency_ms=300, mcp_method="initialize"))
    async with service.mcp_tools(authorization, AUTH_HANDLER, _turn(activity="activity-2")) as toolset:
        tools = {t.name: t for t in toolset.tools()}
        results = await asyncio.gather(
            tools["list_emails"].ainvoke({}),
            tools["search_emails"].ainvoke({"query": "report"}),
            tools["list_emails"].ainvoke({}),
        )
        assert "inbox-1" in str(results[0])
    mail = _methods(_since(emulator, mark), "mail")
    assert mail.count("initialize") == 1
    assert mail.count("tools/call") == 3
    # The lazily opened session was closed once its last call returned: nothing is left running.
    assert our_tasks() == []
    assert await leaked_tasks(before, pooled=True) == set()
    # Tools of a closed block fail instead of silently opening a new session.
    with pytest.raises(RuntimeError, match="after it exits"):
        await tools["list_emails"].ainvoke({})
    with pytest.raises(RuntimeError, match="after it exits"):
        await tools["list_events"].ainvoke({"date": "2026-01-01"})  # never opened: refuses to open
    assert _methods(_since(emulator, mark), "calendar") == []
    # A refused call is not a failed one: the servers' cached definitions stay (the next turn lists nothing).
    mark = _mark(emulator)
    async with service.mcp_tools(authorization, AUTH_HANDLER, _turn(activity="activity-3")):
        pass
    assert _methods(_since(emulator, mark), "mail") == _methods(_since(emulator, mark), "calendar") == []


@pytest.mark.parametrize("mode", MODES)
async def test_two_users_never_receive_each_others_tokens_or_cache_entries(
    emulator: Emulator, service: McpToolRegistrationService, authorization: EmulatorAuthorization, mode: str
) -> None:
    turns = {"user-a": 0, "user-b": 0}

    async def turn_of(user: str) -> list[RecordedRequest]:
        """One turn of ``user`` (registration, then a call to each server); the requests its
        registration made."""
        turns[user] += 1
        mark = _mark(emulator)
        async with _tools(service, mode, authorization, _turn(user, f"{user}-{turns[user]}")) as tools:
            registration = _since(emulator, mark)
            assert "inbox-1" in str(await tools["list_emails"].ainvoke({}))
            await tools["list_events"].ainvoke({"date": "2026-01-01"})
        _assert_users_tokens(_since(emulator, mark), user)  # never the other user's token
        return registration

    await turn_of("user-a")
    first_b = await turn_of("user-b")  # A's cached definitions are not B's: B's first turn lists
    assert sorted(r.server for r in first_b if r.jsonrpc_method == "tools/list") == ["calendar", "mail"]
    assert [r.route for r in first_b].count("gateway") == 1
    for user in ("user-a", "user-b", "user-a", "user-b"):
        assert await turn_of(user) == []  # warm: nothing at registration
    assert len(service.configuration_service.tool_definitions) == 4  # 2 servers x 2 users


async def test_entries_expire_after_the_cache_ttl(
    emulator: Emulator, service: McpToolRegistrationService, authorization: EmulatorAuthorization
) -> None:
    now = [1000.0]
    service.configuration_service.tool_definitions = ToolDefinitionCache(60, clock=lambda: now[0])

    async def turn(activity: str, advance: float) -> int:
        """The turn's own mail listings (made before its tools were handed out)."""
        now[0] += advance
        mark = _mark(emulator)
        async with _tools(service, "per_turn", authorization, _turn(activity=activity)) as tools:
            assert "list_emails" in tools
            return _methods(_since(emulator, mark), "mail").count("tools/list")

    assert await turn("a1", 0) == 1  # listed
    assert await turn("a2", 59) == 0  # cached
    # Expired (61 s) but less than two TTLs old: served at once, refreshed by one background listing.
    mark = _mark(emulator)
    assert await turn("a3", 2) == 0
    [mail] = [
        s
        for s in await service.configuration_service.list_tool_servers(
            _turn(), authorization, AUTH_HANDLER, None, service.tool_options(None)
        )
        if s.mcp_server_name == "mail"
    ]
    cache = service.configuration_service.tool_definitions
    await until(lambda: cache.get(mail.url, mail.headers) is not None)  # re-stored by the refresh
    assert _methods(_since(emulator, mark), "mail").count("tools/list") == 1
    assert await turn("a4", 59) == 0  # the refresh re-stored it at 61 s: fresh at 120 s
    assert await turn("a5", 121) == 1  # two TTLs after the refresh: listed by the turn itself


async def test_an_expired_entry_serves_while_its_server_cannot_be_listed(
    emulator: Emulator, service: McpToolRegistrationService, authorization: EmulatorAuthorization
) -> None:
    """Every user's entry expires at once when a host's users started together: a server that is slow
    or down then fails no warm turn (the refresh runs in the background; a failed one keeps the entry)."""
    now = [1000.0]
    service.configuration_service.tool_definitions = ToolDefinitionCache(60, clock=lambda: now[0])
    async with _tools(service, "per_turn", authorization, _turn(activity="a1")):
        pass
    now[0] += 61
    emulator.faults.set("mcp", Fault(status=503))
    mark = _mark(emulator)
    for activity in ("a2", "a3"):
        async with _tools(service, "per_turn", authorization, _turn(activity=activity)) as tools:
            assert {"list_emails", "list_events"} <= set(tools)  # the turn has its tools
    await until(lambda: len(_methods(_since(emulator, mark), "mail")) >= 1)  # the refresh was tried
    emulator.faults.clear()
    now[0] += 60  # 121 s: past two TTLs, the failed refresh kept nothing newer: the turn lists itself
    mark = _mark(emulator)
    async with _tools(service, "per_turn", authorization, _turn(activity="a4")):
        pass
    assert _methods(_since(emulator, mark), "mail").count("tools/list") == 1


async def test_tool_cache_ttl_setting_zero_turns_the_cache_off(
    emulator: Emulator, service: McpToolRegistrationService, authorization: EmulatorAuthorization
) -> None:
    async with McpToolRegistrationService(configuration=_config(emulator, tool_cache_ttl=0)) as off:
        for i in range(2):
            mark = _mark(emulator)
            await off.get_mcp_tools(authorization, AUTH_HANDLER, _turn(activity=f"off-{i}"))
            assert _methods(_since(emulator, mark), "mail").count("tools/list") == 1
        assert len(off.configuration_service.tool_definitions) == 0
    # The default (300 s) caches: the same turns through the fixture's service list once.
    for i in range(2):
        mark = _mark(emulator)
        await service.get_mcp_tools(authorization, AUTH_HANDLER, _turn(activity=f"on-{i}"))
        assert _methods(_since(emulator, mark), "mail").count("tools/list") == (1 if i == 0 else 0)


@pytest.mark.parametrize("mode", MODES)
async def test_a_cached_server_failing_transiently_at_call_time_keeps_its_definitions(
    emulator: Emulator, service: McpToolRegistrationService, authorization: EmulatorAuthorization, mode: str
) -> None:
    async with _tools(service, mode, authorization, _turn()):
        pass
    emulator.faults.set("mcp:mail", Fault(status=503))
    before = set(asyncio.all_tasks())
    mark = _mark(emulator)
    async with _tools(service, mode, authorization, _turn(activity="activity-2")) as tools:
        assert _since(emulator, mark) == []  # registration from the cache: the outage is not seen yet
        # A transient failure is a tool error for the model (the turn goes on), scrubbed.
        answer = str(await tools["list_emails"].ainvoke({}))
        assert "'mail'" in answer
        assert "HTTP 503" in answer
        assert "Bearer" not in answer
        # The other server is unaffected.
        assert "inbox" not in str(await tools["list_events"].ainvoke({"date": "2026-01-01"}))
    # mail's session outlived its failed request (an HTTP 503 ends nothing but that request).
    await _close_pooled(service, ["a365-mcp-pooled-calendar", "a365-mcp-pooled-mail"])
    assert await leaked_tasks(before, pooled=True) == set()

    emulator.faults.clear()
    mark = _mark(emulator)
    async with _tools(service, mode, authorization, _turn(activity="activity-3")) as tools:
        # An HTTP 503 says nothing about the definitions: both servers' stay cached (no listing, which
        # after an outage would be every turn's at once), and mail's tool works again.
        assert _methods(_since(emulator, mark), "mail") == []
        assert _methods(_since(emulator, mark), "calendar") == []
        assert "inbox-1" in str(await tools["list_emails"].ainvoke({}))


async def test_a_cached_server_too_slow_to_connect_fails_the_call_as_a_tool_error_within_the_timeout(
    emulator: Emulator, authorization: EmulatorAuthorization
) -> None:
    async with McpToolRegistrationService(configuration=_config(emulator, request_timeout=1.0)) as service:
        async with service.mcp_tools(authorization, AUTH_HANDLER, _turn()):
            pass
        service.configuration.set_overrides(mcp_session_idle_timeout=0)  # the warm call connects anew
        emulator.faults.set("mcp:mail", Fault(latency_ms=3000, mcp_method="initialize"))
        before = set(asyncio.all_tasks())
        loop = asyncio.get_running_loop()
        async with service.mcp_tools(authorization, AUTH_HANDLER, _turn(activity="activity-2")) as toolset:
            tools = {t.name: t for t in toolset.tools()}
            started = loop.time()
            # A tool error for the model (transient: the turn goes on), within the timeout.
            assert re.search(r"'mail' .* failed: TimeoutError", str(await tools["list_emails"].ainvoke({})))
            assert loop.time() - started < 2.5
            # A new connect, bounded the same way.
            assert "TimeoutError" in str(await tools["search_emails"].ainvoke({"query": "x"}))
        assert our_tasks() == []
        assert await leaked_tasks(before, pooled=True, grace=4.0) == set()
        assert len(_methods(emulator.requests, "mail")) >= 1
        emulator.faults.clear()
        mark = _mark(emulator)
        async with service.mcp_tools(authorization, AUTH_HANDLER, _turn(activity="activity-3")) as toolset:
            assert _methods(_since(emulator, mark), "mail") == []  # a timeout keeps the definitions
            tools = {t.name: t for t in toolset.tools()}
            assert "inbox-1" in str(await tools["list_emails"].ainvoke({}))


async def test_exiting_the_block_while_a_call_is_connecting_neither_waits_nor_breaks_it(
    emulator: Emulator, service: McpToolRegistrationService, authorization: EmulatorAuthorization
) -> None:
    async with service.mcp_tools(authorization, AUTH_HANDLER, _turn()):
        pass
    service.configuration.set_overrides(mcp_session_idle_timeout=0)  # the warm call connects anew
    emulator.faults.set("mcp:mail", Fault(latency_ms=500, mcp_method="initialize"))
    before = set(asyncio.all_tasks())
    mark = _mark(emulator)
    loop = asyncio.get_running_loop()
    async with service.mcp_tools(authorization, AUTH_HANDLER, _turn(activity="activity-2")) as toolset:
        tools = {t.name: t for t in toolset.tools()}
        pending = asyncio.create_task(tools["list_emails"].ainvoke({}))
        while "initialize" not in _methods(_since(emulator, mark), "mail"):  # noqa: ASYNC110
            await asyncio.sleep(0.02)
        exiting = loop.time()
    assert loop.time() - exiting < 0.25  # the block's exit does not wait for the connect
    # The call started inside the block ends as calls do (within request_timeout): here it succeeds.
    assert "inbox-1" in str(await pending)
    assert our_tasks() == []
    assert await leaked_tasks(before, pooled=True) == set()
