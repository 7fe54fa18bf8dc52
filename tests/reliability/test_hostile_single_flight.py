"""One turn never hurts another: shared token exchanges and gateway calls against held peers.

``HeldAuthorization`` stands for the application's hosting-core ``Authorization`` (a user-supplied
object, not our code): it holds ``exchange_token`` until released, or forever, then delegates to the
emulator's real exchange.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.tooling import McpToolServerConfigurationService, TokenAcquisitionError, ToolingConfiguration
from support.guard import AUTH_HANDLER, config
from support.hostile_server import HostileServer, Request, behaviours
from support.jwt import make_jwt

SAFETY = 10.0


class HeldAuthorization:
    def __init__(self, inner: Any = None) -> None:
        self.inner = inner
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.scopes: list[str] = []
        self.cancelled = 0

    async def exchange_token(
        self, context: Any, scopes: list[str] | None = None, auth_handler_id: Any = None
    ) -> Any:
        self.scopes.extend(scopes or [])
        self.started.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return await self.inner.exchange_token(context, scopes, auth_handler_id)


async def test_a_hung_token_exchange_is_cut_names_the_scope_and_leaves_nothing_behind(
    emulator: Emulator, turn: TurnContext
) -> None:
    hung = HeldAuthorization()  # never released
    async with McpToolServerConfigurationService(config(emulator, request_timeout=0.3)) as svc:
        scope = svc.configuration.mcp_platform_authentication_scope
        with pytest.raises(TokenAcquisitionError) as caught:
            async with asyncio.timeout(SAFETY):
                await svc.list_tool_servers(turn, hung, AUTH_HANDLER)
        assert caught.value.scope == scope
        assert f"token exchange for scope {scope!r} (tooling gateway) did not answer within 0.3 s" in str(
            caught.value
        )
        assert hung.cancelled == 1  # the exchange itself was cancelled, not left running
        # The same user's next turn with a working authorization is not stuck behind the hung one.
        async with asyncio.timeout(SAFETY):
            servers = await svc.list_tool_servers(turn, emulator.authorization(), AUTH_HANDLER)
    assert servers


async def test_token_exchange_timeout_is_its_own_setting() -> None:
    assert ToolingConfiguration(request_timeout=7).token_exchange_timeout == 7
    assert ToolingConfiguration(request_timeout=7, token_exchange_timeout=2).token_exchange_timeout == 2


async def test_cancelling_the_turn_that_started_a_shared_exchange_does_not_cancel_the_other(
    emulator: Emulator, turn: TurnContext
) -> None:
    held = HeldAuthorization(emulator.authorization())
    async with McpToolServerConfigurationService(config(emulator)) as svc:
        starter = asyncio.create_task(svc.list_tool_servers(turn, held, AUTH_HANDLER))
        await held.started.wait()
        other = asyncio.create_task(svc.list_tool_servers(turn, held, AUTH_HANDLER))
        await asyncio.sleep(0)  # the other turn joins the pending exchange
        starter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await starter
        held.release.set()
        async with asyncio.timeout(SAFETY):
            servers = await other  # no CancelledError in a task nobody cancelled
    assert servers
    platform = svc.configuration.mcp_platform_authentication_scope
    assert held.scopes.count(platform) == 1  # still one shared exchange
    assert held.cancelled == 0


async def test_shared_exchange_is_cancelled_once_nobody_waits_for_it(
    emulator: Emulator, turn: TurnContext
) -> None:
    held = HeldAuthorization(emulator.authorization())
    async with McpToolServerConfigurationService(config(emulator)) as svc:
        turns = [asyncio.create_task(svc.list_tool_servers(turn, held, AUTH_HANDLER)) for _ in range(2)]
        await held.started.wait()
        await asyncio.sleep(0)
        for task in turns:
            task.cancel()
        await asyncio.gather(*turns, return_exceptions=True)
        await asyncio.sleep(0)
    assert held.cancelled == 1


async def test_cancelling_the_turn_that_started_a_shared_gateway_call_does_not_cancel_the_other(
    turn: TurnContext,
) -> None:
    release = asyncio.Event()

    async def held_gateway(request: Request, writer: asyncio.StreamWriter) -> None:
        await release.wait()
        await behaviours.respond(200, {"mcpServers": [{"mcpServerName": "mail"}]})(request, writer)

    token = make_jwt(appid=DEFAULT_AGENT_ID)
    async with HostileServer() as server:
        server.route("/mcpServers", held_gateway)
        cfg = ToolingConfiguration(mcp_platform_endpoint=server.base_url, use_tooling_manifest=False)
        async with McpToolServerConfigurationService(cfg) as svc:
            starter = asyncio.create_task(svc.list_tool_servers(turn, None, None, auth_token=token))
            await server.wait_for_requests()
            other = asyncio.create_task(svc.list_tool_servers(turn, None, None, auth_token=token))
            await asyncio.sleep(0)
            starter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await starter
            release.set()
            async with asyncio.timeout(SAFETY):
                servers = await other
    assert [s.mcp_server_name for s in servers] == ["mail"]
    assert len(server.requests) == 1
