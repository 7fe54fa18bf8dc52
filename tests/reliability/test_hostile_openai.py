"""The OpenAI extension against hostile and cancelled peers: endless tool pages, cancelled turns,
held ``initialize``, servers echoing the bearer token, a second event loop.

Real sockets on 127.0.0.1 (the emulator or ``hostile_server``), the public API only.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import warnings
from typing import Any

import pytest
from agents import Agent, FunctionTool, RunContextWrapper
from agents.tool_context import ToolContext
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator, Fault
from agents_a365.tooling import McpServerConnectionError, ToolingConfiguration, ToolServerDiscoveryError
from agents_a365.tooling.extensions.openai import McpToolRegistrationService as OpenAIService
from support.guard import AUTH_HANDLER, Guard, config
from support.hostile_mcp import STRUCTURED_BREAKS, HostileMcp, structured_echo
from support.hostile_server import HostileServer, ServerThread
from support.jwt import make_jwt
from support.leaks import is_pooled
from support.turns import make_turn_context

SAFETY = 20.0  # a safety net against hangs only; the bounds under test are the configured ones
TOKEN = make_jwt(appid=DEFAULT_AGENT_ID)


def _hostile_config(server: HostileServer, **overrides: Any) -> ToolingConfiguration:
    values: dict[str, Any] = {
        "mcp_platform_endpoint": server.base_url,
        "use_tooling_manifest": False,
        "request_timeout": 0.5,
    }
    values.update(overrides)
    return ToolingConfiguration(**values)


async def _wait_for(predicate: Any) -> None:
    async with asyncio.timeout(SAFETY):
        while not predicate():  # noqa: ASYNC110 - the emulator's recordings have no event to wait on
            await asyncio.sleep(0.005)


# -- item: a server whose tools/list never stops paging ---------------------------------------------


async def test_endless_next_cursor_does_not_keep_registration_or_the_first_model_call_busy(
    turn: TurnContext,
) -> None:
    mcp = HostileMcp(endless_cursor=True)
    async with HostileServer() as server:
        server.route("/mcp", mcp)
        server.gateway({"mcpServerName": "pages", "url": f"{server.base_url}/mcp"})
        # A deadline the 1,000 pages fit in (1-3 ms a page, up to ~15 ms on a machine loaded by the parallel
        # test workers and other jobs): the page cap, not the deadline, must be what ends the listing.
        async with OpenAIService(configuration=_hostile_config(server, request_timeout=20.0)) as svc:
            async with asyncio.timeout(3 * SAFETY):  # two listings of up to 20 s each
                # Registration lists through the core, whose pager stops at MAX_LIST_PAGES.
                with pytest.raises(McpServerConnectionError, match=r"'pages'.*more than 1000 pages"):
                    async with svc.connected_agent(Agent(name="a"), None, None, turn, auth_token=TOKEN):
                        pass
                assert mcp.methods.count("tools/list") == 1000
                # With cache_tools_list=False every list_tools asks the server again: same bounds.
                mcp.endless_cursor = False  # registration gets one page ...
                eager = {"cache_tools_list": False}
                async with svc.connected_agent(
                    Agent(name="a"), None, None, turn, auth_token=TOKEN, server_options=eager
                ) as agent:
                    mcp.endless_cursor = True  # ... then the server pages forever
                    with pytest.raises(Exception, match=r"more than 1000 pages|did not answer within"):
                        await agent.get_mcp_tools(RunContextWrapper(context=None))
    assert mcp.methods.count("tools/list") > 1001  # it did page; the bound, not the server, ended it


# -- item: cancellation leaves nothing open ----------------------------------------------------------


async def test_cancelling_connected_agent_while_tools_are_listed_leaves_nothing_open(
    emu: Emulator, guard: Guard, turn: TurnContext
) -> None:
    # Held (a barrier no turn fills) until hold_timeout_ms, then answered: the server side then
    # closes its sockets, so the fd check below sees only what the client left open.
    emu.faults.set("mcp", Fault(hold_until_concurrent=10, hold_timeout_ms=1500, mcp_method="tools/list"))
    entered = asyncio.Event()

    async def one_turn(svc: OpenAIService) -> None:
        async with svc.connected_agent(Agent(name="a"), emu.authorization(), AUTH_HANDLER, turn):
            entered.set()

    async with OpenAIService(configuration=config(emu)) as svc:
        task = asyncio.create_task(one_turn(svc))
        await _wait_for(lambda: any(r.jsonrpc_method == "tools/list" for r in emu.requests_for("mcp")))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not entered.is_set()
        listed = [r for r in emu.requests_for("mcp") if r.jsonrpc_method == "tools/list"]
        await _wait_for(lambda: all(r.held_together is not None for r in listed))
        # Before service.aclose(): the cancelled turn's own tasks are gone (the pooled sessions are the
        # service's: they end with it).
        await _wait_for(lambda: not [t for t in guard.leftover_tasks() if not is_pooled(t)])
    # After it: no socket either (the service's pooled gateway connection included).
    await guard.assert_clean()


async def test_service_aclose_closes_servers_a_turn_left_open(
    emu: Emulator, guard: Guard, turn: TurnContext
) -> None:
    async with OpenAIService(configuration=config(emu)) as svc:
        agent = await svc.add_tool_servers_to_agent(Agent(name="a"), emu.authorization(), AUTH_HANDLER, turn)
        assert agent.mcp_servers
    # add_tool_servers_to_agent's servers were never closed by the caller: aclose() did it.
    await guard.assert_clean()


async def test_cancelling_during_a_held_initialize_takes_effect_before_it_is_released(
    emu: Emulator, guard: Guard, turn: TurnContext
) -> None:
    # A barrier no turn fills: every initialize is held until hold_timeout_ms.
    emu.faults.set("mcp", Fault(hold_until_concurrent=10, hold_timeout_ms=3000, mcp_method="initialize"))
    async with OpenAIService(configuration=config(emu, request_timeout=10)) as svc:
        task = asyncio.create_task(
            svc.add_tool_servers_to_agent(Agent(name="a"), emu.authorization(), AUTH_HANDLER, turn)
        )
        await _wait_for(lambda: any(r.jsonrpc_method == "initialize" for r in emu.requests_for("mcp")))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        held = [r for r in emu.requests_for("mcp") if r.jsonrpc_method == "initialize"]
        # Done while the emulator still holds every initialize: the cancellation did not wait for it.
        assert held
        assert all(r.held_together is None for r in held)
        await _wait_for(lambda: all(r.held_together is not None for r in held))  # the server side ends
    await guard.assert_clean()


# -- item: a second event loop ----------------------------------------------------------------------


def test_a_service_used_from_a_second_event_loop_works_and_aclose_never_says_loop_closed() -> None:
    with ServerThread(
        lambda server: server.gateway({"mcpServerName": "mail", "url": "http://127.0.0.1:1/mcp"})
    ) as server:
        cfg = ToolingConfiguration(
            mcp_platform_endpoint=server.base_url,
            use_tooling_manifest=False,
            request_timeout=2,
            tool_cache_ttl=0,
        )
        svc = OpenAIService(configuration=cfg)

        async def discover(service: OpenAIService, other_user: str) -> list[str]:
            token = make_jwt(appid=DEFAULT_AGENT_ID, oid=other_user)  # not served from the first loop's cache
            turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
            servers = await service.configuration_service.list_tool_servers(
                turn, None, None, auth_token=token
            )
            return [s.mcp_server_name for s in servers]

        assert asyncio.run(discover(svc, "u1")) == ["mail"]

        async def second_loop(service: OpenAIService) -> list[str]:
            try:
                return await discover(service, "u2")
            finally:
                await service.aclose()  # never "Event loop is closed"

        assert asyncio.run(second_loop(svc)) == ["mail"]
        # The first asyncio.run ended with the service's keep-alive connection open (asyncio.run does
        # not close transports, only the caller's aclose() on that loop could): the service keeps that
        # client until it is collected, here, so its ResourceWarnings are not reported against a later test.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            del svc
            gc.collect()


# -- item: servers echoing the bearer token ---------------------------------------------------------


async def test_a_server_echoing_the_token_gets_it_into_no_error_and_no_log_record(
    turn: TurnContext, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    raised: list[BaseException] = []
    async with HostileServer() as server:
        server.route("/mcp", HostileMcp(echo_headers_on_call=True))
        server.gateway({"mcpServerName": "echo", "url": f"{server.base_url}/mcp"})
        async with (
            OpenAIService(configuration=_hostile_config(server, request_timeout=2)) as svc,
            svc.connected_agent(Agent(name="a"), None, None, turn, auth_token=TOKEN) as agent,
        ):
            try:
                await agent.mcp_servers[0].call_tool("echo", {})
            except Exception as exc:
                raised.append(exc)
            # What the Runner does with the model's tool call: the SDK's invoke path, which logs.
            tool = (await agent.get_mcp_tools(RunContextWrapper(context=None)))[0]
            assert isinstance(tool, FunctionTool)
            ctx = ToolContext(context=None, tool_name="echo", tool_call_id="c1", tool_arguments="{}")
            try:
                raised.append(RuntimeError(str(await tool.on_invoke_tool(ctx, "{}"))))  # the model's view
            except Exception as exc:
                raised.append(exc)
    assert any("denied, you sent" in str(e) for e in raised)  # the server's text does get through
    payload = TOKEN.split(".")[1]  # make_jwt's signature is a constant: look for the payload
    texts = [r.getMessage() for r in caplog.records] + [caplog.text]
    texts += [f"{e!s} {e!r} {e.__cause__!r} {e.__context__!r}" for e in raised]
    leaks = [t[:200] for t in texts if payload in t]
    assert not leaks, leaks


# -- item: duplicate server names -------------------------------------------------------------------


async def test_two_different_servers_under_one_name_are_a_clear_error(turn: TurnContext) -> None:
    async with HostileServer() as server:
        server.gateway(
            {"mcpServerName": "mail", "url": f"{server.base_url}/a/mcp"},
            {"mcpServerName": "mail", "url": f"{server.base_url}/b/mcp"},
        )
        async with OpenAIService(configuration=_hostile_config(server)) as svc:
            with pytest.raises(ToolServerDiscoveryError, match="two different MCP servers are named 'mail'"):
                await svc.add_tool_servers_to_agent(Agent(name="a"), None, None, turn, auth_token=TOKEN)


async def test_service_aclose_closes_the_servers_of_a_connected_agent_block_still_open(
    emu: Emulator, guard: Guard, turn: TurnContext
) -> None:
    inside = asyncio.Event()

    async def long_turn(svc: OpenAIService) -> None:
        async with svc.connected_agent(Agent(name="a"), emu.authorization(), AUTH_HANDLER, turn):
            inside.set()
            await asyncio.Event().wait()  # a turn still running when the application shuts down

    svc = OpenAIService(configuration=config(emu))
    task = asyncio.create_task(long_turn(svc))
    async with asyncio.timeout(SAFETY):
        await inside.wait()
    await svc.aclose()
    # Closed by aclose(), not by the turn's exit: the turn is still inside its block.
    assert not task.done()
    await _wait_for(lambda: not [t for t in guard.leftover_tasks() if t is not task])
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await guard.assert_clean()


@pytest.mark.parametrize(("structured", "error"), STRUCTURED_BREAKS)
async def test_structured_content_that_breaks_the_listed_output_schema_fails_the_call(
    turn: TurnContext, structured: dict[str, Any] | None, error: str
) -> None:
    """The server calls the pool with the definition's output schema (as mcp's own client checks it)."""
    async with (
        structured_echo() as (server, mcp),
        OpenAIService(configuration=_hostile_config(server, request_timeout=2)) as svc,
        svc.connected_agent(Agent(name="a"), None, None, turn, auth_token=TOKEN) as agent,
        asyncio.timeout(SAFETY),
    ):
        (echo,) = agent.mcp_servers
        assert (await echo.call_tool("echo", {})).structuredContent == {"n": 1}
        mcp.structured = structured
        with pytest.raises(McpServerConnectionError, match=f"'echo'.*tool 'echo' .*{error}"):
            await echo.call_tool("echo", {})
    assert mcp.methods.count("tools/list") == 1  # the schema came from the listed definition
