"""Issue 27: every token is validated the same way before use, and a bad exchanged one is never cached."""

from __future__ import annotations

from typing import Any

import pytest
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import CALENDAR_AUDIENCE, Emulator, EmulatorAuthorization, audience_for_scope
from agents_a365.runtime import TokenExpiredError
from agents_a365.tooling import McpToolServerConfigurationService, TokenAcquisitionError
from support.platform import AUTH_HANDLER, production_config


class ExpiredFor(EmulatorAuthorization):
    """Mints expired tokens for one audience while ``expired`` is set; valid ones for every other."""

    def __init__(self, emu: Emulator, audience: str) -> None:
        super().__init__(emu.issuer, app_id=emu.config.agent_id)
        self.audience = audience
        self.expired = True

    async def exchange_token(self, context: Any, scopes: list[str] | None = None, *args: Any) -> Any:
        wanted = audience_for_scope((scopes or self.default_scopes)[0])
        self.expires_in = -60 if self.expired and wanted == self.audience else 3600
        return await super().exchange_token(context, scopes, *args)


async def test_an_expired_v2_token_is_refused_before_use_and_exchanged_again_next_turn(
    emu: Emulator, turn: TurnContext
) -> None:
    auth = ExpiredFor(emu, CALENDAR_AUDIENCE)
    async with McpToolServerConfigurationService(production_config(emu)) as service:
        with pytest.raises(TokenAcquisitionError, match="unusable token: token expired") as caught:
            await service.list_tool_servers(turn, auth, AUTH_HANDLER)
        assert caught.value.servers == ("calendar",)
        assert isinstance(caught.value.__cause__, TokenExpiredError)
        assert emu.requests_for("mcp") == []  # the expired token reached no server
        calendar_exchanges = sum(e.audience == CALENDAR_AUDIENCE for e in auth.exchanges)

        auth.expired = False  # the next turn: not cached, so exchanged again, and now usable
        servers = await service.list_tool_servers(turn, auth, AUTH_HANDLER)
        assert sum(e.audience == CALENDAR_AUDIENCE for e in auth.exchanges) == calendar_exchanges + 1
        calendar = next(s for s in servers if s.mcp_server_name == "calendar")
        assert [t.name for t in await service.list_mcp_tools(calendar)]  # the server accepts it


async def test_an_expired_platform_token_from_the_exchange_is_the_same_typed_error(
    emu: Emulator, turn: TurnContext
) -> None:
    auth = ExpiredFor(emu, production_config(emu).platform_audience)
    async with McpToolServerConfigurationService(production_config(emu)) as service:
        with pytest.raises(TokenAcquisitionError, match="unusable token: token expired"):
            await service.list_tool_servers(turn, auth, AUTH_HANDLER)
        assert emu.requests == []
        auth.expired = False
        assert await service.list_tool_servers(turn, auth, AUTH_HANDLER)
